"""Run the kvcore command line: ``python -m kvcore --help``."""

import sys

from .cli import main

sys.exit(main())
