"""spark-submit jobs/archive_lmt.py --input URI --from T --to T [--tz Z] --warehouse W:
archive a window of an LMT database (`lassi archive-lmt`; the hourly DAG runs this)."""

import sys

from lassi.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["archive-lmt", *sys.argv[1:]]))
