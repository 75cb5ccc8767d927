"""``python -m promptcache`` runs the ``promptcache`` command."""

import sys

from promptcache.cli import main

sys.exit(main())
