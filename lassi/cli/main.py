"""`lassi`: the one command line. Every failure is one line on stderr and a non-zero exit.

One module per verb group, each with `add_commands(sub)` (its subparsers, each bound to its
`cmd_*` function): lassi.cli.sim (simulate, evaluate, demo), lassi.cli.pipeline (ingest,
run), lassi.cli.report (report), lassi.cli.tools (archive-lmt, bad-ost, scoreboard,
correlate, summarize-job, umami, compress-trace, sql). What they share is lassi.cli.args.
The spark-submit scripts in jobs/ call main() with their verb.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys

from lassi import __version__
from lassi.cli import jvm, pipeline, report, sim, tools
from lassi.cli.args import Parser, run_command
from lassi.core.gc_tuning import tune_gc


def build_parser() -> argparse.ArgumentParser:
    p = Parser(prog="lassi", description="Offline analytics for supercomputer I/O "
               "(LASSi + Beacon + TOKIO + SIOX) on Spark and Parquet.")
    p.add_argument("--version", action="version", version=f"lassi {__version__}")
    p.add_argument("--verbose", action="store_true",
                   help="keep Spark's own console logging (default: $LASSI_LOG_DIR/spark.log)")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=Parser)
    for group in (sim, pipeline, report, tools, jvm):
        group.add_commands(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `lassi` console command (and of the jobs/ scripts)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    tune_gc()
    args = build_parser().parse_args(argv)
    args.command_line = shlex.join(["lassi", *argv])     # names a writer lock's holder
    if args.verbose:
        os.environ["LASSI_VERBOSE"] = "1"   # read by lassi.core.spark when the JVM starts
    return run_command(args.func, args)


if __name__ == "__main__":
    sys.exit(main())
