"""``python -m dpclust``: the same as the ``dpclust`` command."""

from .cli import main

raise SystemExit(main())
