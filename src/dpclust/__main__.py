"""``python -m dpclust``: the same as the ``dpclust`` command."""

from .cli import main

if __name__ == "__main__":  # not again in the processes that run chains in parallel
    raise SystemExit(main())
