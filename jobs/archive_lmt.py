"""spark-submit jobs/archive_lmt.py --input URI --from T --to T [--tz Z] --warehouse W:
`lassi archive-lmt`, a window of an LMT database (the hourly DAG runs this)."""

import sys

from lassi.cli.main import main

# the `lassi` command this script runs; spark-submit's application arguments follow it
ARGV = ["archive-lmt"]

if __name__ == "__main__":
    sys.exit(main([*ARGV, *sys.argv[1:]]))
