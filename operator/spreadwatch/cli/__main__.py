"""``python -m spreadwatch.cli``: the ``spreadwatch`` command."""

import sys

from spreadwatch.cli import main

sys.exit(main())
