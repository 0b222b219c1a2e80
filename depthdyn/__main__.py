"""``python -m depthdyn``: the same as the ``depthdyn`` command."""

if __name__ == "__main__":
    from .cli import main

    raise SystemExit(main())
