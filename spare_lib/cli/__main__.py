"""``python -m spare_lib.cli``."""

import sys

from spare_lib.cli import main

sys.exit(main())
