"""``python -m promptcache`` runs the ``promptcache`` command."""

import sys

from promptcache._cli import main

sys.exit(main())
