"""The version of depthdyn, in a module of its own so that any module can name it without
importing the whole package (:mod:`depthdyn` imports everything)."""

__version__ = "0.1.0"
