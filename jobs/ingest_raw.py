"""spark-submit jobs/ingest_raw.py --raw RAW --date D [--warehouse W --site S --nodes N]:
`lassi ingest`, everything collected for one date."""

import sys

from lassi.cli.main import main

# the `lassi` command this script runs; spark-submit's application arguments follow it
ARGV = ["ingest"]

if __name__ == "__main__":
    sys.exit(main([*ARGV, *sys.argv[1:]]))
