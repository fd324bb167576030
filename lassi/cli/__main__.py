"""`python -m lassi.cli ...` = `lassi ...`."""

import sys

from lassi.cli.main import main

sys.exit(main())
