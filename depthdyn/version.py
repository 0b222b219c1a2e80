"""The version of depthdyn, in a module of its own at the bottom of the package, so that any
module (the command line's ``--version``, the report's header) can name it without
importing anything else."""

__version__ = "0.1.0"
