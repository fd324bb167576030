"""`python -m lassi ...` = `lassi ...` (e.g. under spark-submit from a built wheel)."""

import sys

from lassi.cli.main import main

sys.exit(main())
