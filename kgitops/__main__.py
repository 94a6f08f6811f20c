"""``python -m kgitops``."""

from kgitops.cli import main

raise SystemExit(main())
