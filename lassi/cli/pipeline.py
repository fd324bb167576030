"""`lassi ingest` and `lassi run daily`: raw files into the warehouse, then the daily stages.

The spark-submit scripts in jobs/ (and so the Airflow DAG) call these same commands.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from lassi.cli.args import (
    CliError,
    CliTempFail,
    add_lock_wait,
    add_nodes,
    add_site,
    add_warehouse,
    date_arg,
    open_warehouse,
    site_of,
    zone,
)

if TYPE_CHECKING:
    from lassi.core.quarantine import ParseStats


def add_commands(sub) -> None:
    from lassi.ingest.runner import SOURCES
    from lassi.pipeline.daily import FAMILIES, STAGES

    i = sub.add_parser("ingest", help="raw files -> Parquet raw_* tables (+ quarantine)")
    g = i.add_mutually_exclusive_group(required=True)
    g.add_argument("--source", choices=SOURCES, help="one source, with --input")
    g.add_argument("--raw", help="a folder written by `lassi simulate` or a site collector")
    i.add_argument("--input", nargs="+", help="files or directories (with --source)")
    i.add_argument("--date", type=date_arg, help="date of the data (required with --raw)")
    i.add_argument("--tz", default=None,
                   help="time zone of a source's local times (default: the site's, e.g. LMT)")
    add_warehouse(i)
    add_lock_wait(i)
    add_site(i)
    add_nodes(i)
    i.set_defaults(func=cmd_ingest)

    r = sub.add_parser("run", help="run analysis stages")
    r.add_argument("what", choices=["daily"], help="daily: every stage for one date")
    r.add_argument("--date", type=date_arg, required=True)
    which = r.add_mutually_exclusive_group()
    which.add_argument("--stage", action="append", default=None, choices=list(STAGES),
                       metavar="NAME", help="run only this stage (repeatable, in the order "
                       f"given); default: every stage in order ({', '.join(STAGES)})")
    which.add_argument("--family", action="append", default=None, choices=list(FAMILIES),
                       help="run the stages of this family, in order (repeatable; what each "
                       "task of the daily Airflow DAG runs)")
    r.add_argument("--raw", default=None, metavar="DIR",
                   help="first ingest this raw folder for the date (`lassi ingest --raw`), in "
                        "the same Spark session: the whole day in one JVM / one spark-submit")
    add_warehouse(r)
    add_lock_wait(r)
    add_site(r)
    add_nodes(r)
    r.set_defaults(func=cmd_run)


def cmd_ingest(args) -> int:
    """`lassi ingest`: a request error is one line (exit 1); a database that did not answer
    is exit 75: rerun the same command (writes are idempotent per partition)."""
    from lassi.ingest.contract import IngestError, SourceUnavailable

    try:
        return _ingest(args)
    except SourceUnavailable as exc:
        raise CliTempFail(f"{exc}; rerun the same ingest") from None
    except IngestError as exc:
        raise CliError(str(exc)) from None


def _ingest(args) -> int:
    from lassi.ingest.runner import URI_SCHEMES, check_date, ingest_raw, ingest_source

    site = site_of(args)
    if args.raw:
        if args.date is None:
            raise CliError("--raw needs --date")
        if not Path(args.raw).is_dir():
            raise CliError(f"no such raw folder: {args.raw}")
        wh = open_warehouse(args, "ingest", writes=True)
        ingest_raw(wh.spark, wh, site, Path(args.raw), args.date, progress=_print_summary,
                   warn=_print_warning)
        return 0
    if not args.input:
        raise CliError("--source needs --input PATH [PATH ...]")
    for p in args.input:
        if not p.startswith(URI_SCHEMES) and not Path(p).exists():
            raise CliError(f"no such file or directory: {p}")
    if args.tz is not None:
        zone(args.tz)
    wh = open_warehouse(args, "ingest", writes=True)
    _print_summary(ingest_source(wh.spark, wh, site, args.source, args.input, args.date,
                                 tz=args.tz))
    check_date(wh, site, args.date, _print_warning)
    return 0


def _print_summary(st: ParseStats) -> None:
    """One line per source as soon as its tables are written."""
    print(st.summary(), flush=True)


def _print_warning(line: str) -> None:
    """A data check's warning: one line on stderr."""
    print(line, file=sys.stderr, flush=True)


def cmd_run(args) -> int:
    from lassi.pipeline.daily import FAMILIES, run_daily

    site = site_of(args)
    if args.raw and not Path(args.raw).is_dir():
        raise CliError(f"no such raw folder: {args.raw}")
    wh = open_warehouse(args, "daily", writes=True)
    if args.raw:
        from lassi.ingest.runner import ingest_raw

        ingest_raw(wh.spark, wh, site, Path(args.raw), args.date, progress=_print_summary,
                   warn=_print_warning)
    stages = args.stage or ([s for f in args.family for s in FAMILIES[f]] if args.family
                            else None)
    for line in run_daily(wh, site, args.date, stages):
        print(line, flush=True)
    return 0
