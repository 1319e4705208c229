"""Allow ``python -m fminspect``."""

from fminspect.cli import main

raise SystemExit(main())
