"""spark-submit jobs/report.py (--date D | --from D1 --to D2) --out DIR [--warehouse W ...]:
`lassi report daily`; writes `<out>/<site>-<date>/index.html` and prints its path."""

import sys

from lassi.cli.main import main

# the `lassi` command this script runs; spark-submit's application arguments follow it
ARGV = ["report", "daily"]

if __name__ == "__main__":
    sys.exit(main([*ARGV, *sys.argv[1:]]))
