"""`lassi`: the one command line. Every failure is one line on stderr and a non-zero exit."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
from pathlib import Path

from lassi import __version__

EXIT_USAGE, EXIT_FAIL, EXIT_LATER = 2, 1, 3


class CliError(Exception):
    """A user-facing error: printed as `lassi: error: <message>`."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        self.exit(EXIT_USAGE, f"lassi: error: {message} (see `{self.prog} --help`)\n")


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from None


def _positive(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        v = 0
    if v <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return v


def _common(p: argparse.ArgumentParser, site: bool = True) -> None:
    p.add_argument("--warehouse", default=os.environ.get("LASSI_WAREHOUSE", "./warehouse"),
                   help="warehouse root: a directory or Hadoop URI (default ./warehouse)")
    if site:
        p.add_argument("--site", default=os.environ.get("LASSI_SITE", "archer"),
                       help="site name (conf/sites/NAME.yaml) or YAML path (default archer)")
        p.add_argument("--nodes", type=_positive, default=None,
                       help="scale the site to this many compute nodes")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="lassi", description="Offline analytics for supercomputer I/O "
                "(LASSi + Beacon + TOKIO + SIOX) on Spark and Parquet.")
    p.add_argument("--version", action="version", version=f"lassi {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True, parser_class=_Parser)

    s = sub.add_parser("simulate", help="simulate site-days of raw monitoring files + truth.json")
    s.add_argument("--site", default="archer", help="archer | taihulight | YAML path")
    s.add_argument("--date", type=_date, required=True, help="first day (YYYY-MM-DD)")
    s.add_argument("--days", type=_positive, default=1)
    s.add_argument("--nodes", type=_positive, default=None, help="compute nodes (scales the site)")
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--out", required=True, help="folder for the raw files")
    s.add_argument("--fault", action="append", default=None, metavar="KIND:NAME:FACTOR:HH:MM-HH:MM",
                   help="inject a slow component (repeatable; 'none' for no faults)")
    s.add_argument("--gzip", action="store_true", help="write .gz files")
    s.add_argument("--traced-fraction", type=float, default=1.0,
                   help="share of jobs with LWFS client traces (forwarding sites)")

    from ingest.runner import SOURCES

    i = sub.add_parser("ingest", help="raw files -> Parquet raw_* tables (+ quarantine)")
    g = i.add_mutually_exclusive_group(required=True)
    g.add_argument("--source", choices=SOURCES, help="one source, with --input")
    g.add_argument("--raw", help="a folder written by `lassi simulate` or a site collector")
    i.add_argument("--input", nargs="+", help="files or directories (with --source)")
    i.add_argument("--date", type=_date, help="date of the data (required with --raw)")
    i.add_argument("--tz", default=None,
                   help="time zone of a source's local times (default: the site's, e.g. LMT)")
    _common(i)

    r = sub.add_parser("run", help="run analysis stages")
    r.add_argument("what", choices=["daily"], help="daily: every stage for one date")
    r.add_argument("--date", type=_date, required=True)
    _common(r)

    rep = sub.add_parser("report", help="HTML + PNG reports")
    rep.add_argument("what", choices=["daily"],
                     help="daily: the LASSi report of one day (--date) or a period (--from/--to)")
    rep.add_argument("--date", type=_date, help="the day to report (YYYY-MM-DD)")
    rep.add_argument("--from", dest="date_from", type=_date, help="first day of a period")
    rep.add_argument("--to", dest="date_to", type=_date, help="last day of a period")
    rep.add_argument("--out", default="./reports",
                     help="folder for reports; each goes to <out>/<site>-<date>/index.html")
    _common(rep)

    e = sub.add_parser("evaluate", help="detection quality against simulator truth")
    e.add_argument("--truth", required=True, help="truth.json written by `lassi simulate`")
    e.add_argument("--date", type=_date, required=True, help="last day to score")
    e.add_argument("--out", default=None,
                   help="JSON file for the scores (default: ./evaluate-<date>.json)")
    _common(e)

    q = sub.add_parser("sql", help="run Spark SQL; every table is a view")
    q.add_argument("query")
    q.add_argument("--limit", type=_positive, default=50)
    _common(q, site=False)

    c = sub.add_parser("compress-trace", help="first-pass compress an LWFS client trace: "
                       "stdin -> stdout (Beacon, per compute node)")
    c.add_argument("--stats", action="store_true",
                   help="print lines in/out and the ratio to stderr")

    d = sub.add_parser("demo", help="what `make demo` runs: simulate, ingest, daily run, report")
    d.add_argument("--site", default="archer")
    d.add_argument("--nodes", type=_positive, default=256)
    d.add_argument("--date", type=_date, default=None,
                   help="default: 2017-10-10 (archer), 2018-02-25 (taihulight)")
    d.add_argument("--seed", type=int, default=1)
    d.add_argument("--dir", default="./demo", help="where raw files, warehouse and report go")
    return p


# --- commands ------------------------------------------------------------------------------


def _site(args):
    from lassi.config import load_site

    return load_site(args.site, nodes=getattr(args, "nodes", None))


def _warehouse(args, app: str):
    from lassi.spark import get_spark
    from lassi.warehouse import Warehouse

    return Warehouse(get_spark(f"lassi {app}"), args.warehouse)


def cmd_simulate(args) -> int:
    from lassi.sim.runner import simulate

    site = _site(args)
    res = simulate(site, args.date, args.days, args.seed, Path(args.out), faults=args.fault,
                   gz=args.gzip, traced_fraction=args.traced_fraction)
    print(f"simulated {res['runs']} runs at {site.name} ({len(site.compute_nodes)} nodes), "
          f"{res['slowed']} slowed; raw files and truth.json in {res['out']}")
    return 0


def cmd_ingest(args) -> int:
    from ingest.runner import ingest_raw, ingest_source

    site = _site(args)
    if args.raw:
        if args.date is None:
            raise CliError("--raw needs --date")
        if not Path(args.raw).is_dir():
            raise CliError(f"no such raw folder: {args.raw}")
        wh = _warehouse(args, "ingest")
        stats = ingest_raw(wh.spark, wh, site, Path(args.raw), args.date)
    else:
        if not args.input:
            raise CliError("--source needs --input PATH [PATH ...]")
        from ingest.runner import URI_SCHEMES

        for p in args.input:
            if not p.startswith(URI_SCHEMES) and not Path(p).exists():
                raise CliError(f"no such file or directory: {p}")
        if args.tz is not None:
            _zone(args.tz)
        wh = _warehouse(args, "ingest")
        stats = [ingest_source(wh.spark, wh, site, args.source, args.input, args.date,
                               tz=args.tz)]
    for st in stats:
        print(st.summary())
    return 0


def _zone(name: str) -> str:
    """A valid IANA time zone name, or a one-line error."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise CliError(f"unknown time zone {name!r} (e.g. America/Los_Angeles, UTC)") from None
    return name


def cmd_run(args) -> int:
    from lassi.daily import run_daily

    site = _site(args)
    wh = _warehouse(args, "daily")
    for line in run_daily(wh, site, args.date):
        print(line)
    return 0


def cmd_evaluate(args) -> int:
    from lassi.evaluate import evaluate, load_truth, table

    try:
        truth = load_truth(args.truth)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    wh = _warehouse(args, "evaluate")
    try:
        res = evaluate(wh, truth, args.date)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    print(table(res))
    out = Path(args.out or f"evaluate-{args.date.isoformat()}.json")
    out.write_text(json.dumps(res, indent=1, default=str))
    print(f"scores: {out.resolve()}")
    return 0


def cmd_sql(args) -> int:
    from lassi.schemas import TABLES

    wh = _warehouse(args, "sql")
    for t in TABLES:
        wh.read(t).createOrReplaceTempView(t)
    df = wh.spark.sql(args.query)
    print(df.limit(args.limit).toPandas().to_string(index=False))
    return 0


def _report_dates(args) -> tuple[dt.date, dt.date]:
    period = args.date_from is not None or args.date_to is not None
    if args.date is not None and period:
        raise CliError("give either --date or --from/--to, not both")
    if args.date is not None:
        return args.date, args.date
    if args.date_from is None or args.date_to is None:
        raise CliError("give --date D, or --from D1 and --to D2")
    if args.date_to < args.date_from:
        raise CliError(f"--from {args.date_from} is after --to {args.date_to}")
    return args.date_from, args.date_to


def cmd_report(args) -> int:
    first, last = _report_dates(args)
    from lassi.warehouse import days, local_root, may_have_local

    local = local_root(args.warehouse)     # refuse early, before Spark starts, when local
    if local is not None:
        if not local.is_dir():
            raise CliError(f"no warehouse at {args.warehouse}")
        period = days(first, last)
        if not any(may_have_local(local, t, period) for t in ("app_hour", "job_summary")):
            span = first.isoformat() if first == last else f"{first}..{last}"
            raise CliError(f"no app_hour or job_summary data for {span} in {args.warehouse} "
                           "(run `lassi run daily` first)")
    from lassi.report.daily import write_daily_report

    site = _site(args)
    wh = _warehouse(args, "report")
    print(write_daily_report(wh, site, first, last, Path(args.out)))
    return 0


def cmd_compress_trace(args) -> int:
    """stdin -> stdout through the first pass; a closed stdout (`| head`) ends it quietly."""
    from lassi.trace_compress import CompressStats, compress_stream

    st = CompressStats()
    try:
        compress_stream(sys.stdin.buffer, sys.stdout.buffer, st)
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)   # no second error when Python flushes
        os.dup2(devnull, sys.stdout.fileno())
    if args.stats:
        print(f"compress-trace: {st.lines_in} lines in, {st.lines_out} lines out, ratio "
              f"{st.ratio:.2f} ({st.requests} requests in {st.data_in} -> {st.data_out} data "
              f"lines; {st.passed} not trace lines, passed through)", file=sys.stderr)
    return 0


def cmd_demo(args) -> int:
    from lassi.demo import demo

    for line in demo(args.site, args.nodes, args.date, args.seed, Path(args.dir)):
        print(line)
    return 0


COMMANDS = {"simulate": cmd_simulate, "ingest": cmd_ingest, "run": cmd_run, "sql": cmd_sql,
            "report": cmd_report, "evaluate": cmd_evaluate, "demo": cmd_demo}
COMMANDS["compress-trace"] = cmd_compress_trace


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `lassi` console command."""
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.cmd](args)
    except CliError as exc:
        print(f"lassi: error: {exc}", file=sys.stderr)
        return EXIT_LATER if "arrives with issue" in str(exc) else EXIT_FAIL
    except (ValueError, FileNotFoundError, KeyError, OSError) as exc:
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"lassi: error: {msg}", file=sys.stderr)
        return EXIT_FAIL
    except Exception as exc:  # Spark analysis errors and the like: one line, no traceback
        if os.environ.get("LASSI_DEBUG"):
            raise
        msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        print(f"lassi: error: {type(exc).__name__}: {msg[:300]}", file=sys.stderr)
        return EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
