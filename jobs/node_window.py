"""spark-submit jobs/node_window.py --date D [--warehouse W --site S --nodes N]:
`lassi run daily --stage node_window`, per-node per-window counters for one date."""

import sys

from lassi.cli.main import main

# the `lassi` command this script runs; spark-submit's application arguments follow it
ARGV = ["run", "daily", "--stage", "node_window"]

if __name__ == "__main__":
    sys.exit(main([*ARGV, *sys.argv[1:]]))
