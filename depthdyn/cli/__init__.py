"""The ``depthdyn`` command line.

The verbs (one module each, listed in :data:`~depthdyn.cli.app.VERBS`):

* ``depthdyn derive FAMILY [-p NAME=VALUE ...] [--json] [--full]``: everything the symbolic
  layer knows about a family (long expressions summarised by their size unless ``--full``);
  ``depthdyn derive --list`` names the families;
* ``depthdyn check FAMILY``: the exact results against the numeric engine at random points,
  exit status 1 on a disagreement;
* ``depthdyn region FAMILY --x NAME:LO:HI:N --y NAME:LO:HI:N [--out FIG]``: the stability
  region over two parameters, drawn and/or as JSON;
* ``depthdyn stability FAMILY``: the stability intervals, A(alpha), zero-stability and order;
* ``depthdyn solve FAMILY --initial 1,0 [--forcing EXPR]``: the closed form, modes and first terms;
* ``depthdyn verify [--source NAME] [--json] [--trained]``: the source documents' claims, checked;
* ``depthdyn compare FAMILY[:NAME=VALUE,...] ... [--json] [--out FIG]``: families side by side;
* ``depthdyn product SPEC SPEC ...``: a periodic stack, its exact Floquet conditions and exponents;
* ``depthdyn inspect MODEL``: the depth dynamics of a torch model (yours or a Hugging Face config);
* ``depthdyn report [--out DIR] [--force]``: the full report (claims, figures, modes) in a directory;
* ``depthdyn train FAMILY --task TASK``: torch blocks trained on a task, metrics and figures;
* ``depthdyn meanfield ACTIVATION [--family F] [--sw2 V --sb2 V | --phase]``: signal
  propagation at initialisation (mean-field maps, fixed points, the order-to-chaos line);
* ``depthdyn explore FAMILY [-p NAME=VALUE ...] [--out PAGE.html]``: the interactive stability
  explorer as one self-contained HTML page.

Every verb takes ``--budget SECONDS`` (per exact part; ``inf`` for none), ``--quiet`` and
``--progress``.

Exit status (:data:`EXIT_CODES`), the same for every subcommand: 0 success; 1 ``check``
found a disagreement; 2 bad input, an exceeded budget, a diverged training run or a
path that cannot be written (one line on stderr); 3 an internal error (one line; the global
``--traceback`` flag shows the traceback); 130 interrupted (Ctrl-C); 141 the reader of
the output went away (a closed pipe, as in ``depthdyn derive momentum | head -1``), quietly.
No traceback is printed unless ``--traceback`` is given.

The package holds one module per verb (``add_arguments(parser)`` and ``run(args)``, listed
in :data:`~depthdyn.cli.app.VERBS`); :mod:`~depthdyn.cli.app` parses the arguments and
maps errors to exit statuses.
"""

from __future__ import annotations

from .app import EXIT_CODES, VERBS, main

__all__ = ["main", "build_from_cli", "EXIT_CODES", "VERBS"]

_LAZY = {"build_from_cli": "common"}


def __getattr__(name: str):
    # the verbs' helpers are imported on first use, so that `depthdyn --help` stays light
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
