"""spark-submit jobs/daily.py --date D [--stage NAME ...] [--warehouse W --site S --nodes N]:
`lassi run daily`, the analysis stages for one date (every stage in order by default)."""

import sys

from lassi.cli.main import main

# the `lassi` command this script runs; spark-submit's application arguments follow it
ARGV = ["run", "daily"]

if __name__ == "__main__":
    sys.exit(main([*ARGV, *sys.argv[1:]]))
