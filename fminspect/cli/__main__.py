"""Allow ``python -m fminspect.cli`` (as ``python -m fminspect``)."""

from fminspect.cli import main

if __name__ == "__main__":  # not when a worker process imports the main module
    raise SystemExit(main())
