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
    s.add_argument("--no-tokio", action="store_true",
                   help="do not write LMT databases, lfs df and lctl dl snapshots")
    s.add_argument("--lmt-step", type=_positive, default=60,
                   help="seconds between LMT samples (default 60; real LMT: 5)")
    s.add_argument("--overwrite", action="store_true",
                   help="replace an earlier simulation in --out (the writers append)")

    from lassi.ingest.runner import SOURCES

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

    lm = sub.add_parser("archive-lmt", help="archive a time window of an LMT database into "
                        "lmt_ost/lmt_mds (idempotent; replaces only the window's rows)")
    lm.add_argument("--input", required=True, metavar="URI|FILE",
                    help="mysql://user[:pass]@host[:port]/db (password also from "
                    "$LASSI_LMT_PASSWORD) or an LMT SQLite copy (.sqlite3)")
    lm.add_argument("--from", dest="start", required=True, metavar="T",
                    help="window start, ISO date or datetime, UTC (e.g. 2018-01-28T08:00)")
    lm.add_argument("--to", dest="end", required=True, metavar="T",
                    help="window end (exclusive), ISO date or datetime, UTC")
    lm.add_argument("--tz", default=None,
                    help="time zone of the database's TIMESTAMP_INFO (default: the site's lmt)")
    _common(lm)

    bo = sub.add_parser("bad-ost", help="Darshan logs: which Lustre OST correlates with slow "
                        "files (TOKIO darshan_bad_ost)")
    bo.add_argument("logs", nargs="+", metavar="LOG", help="Darshan log files")
    bo.add_argument("--json", action="store_true", help="the flagged OSTs as a JSON list")
    bo.add_argument("-p", "--p-value", type=float, default=0.05, dest="p_value",
                    help="flag only when the p-value is below this (default 0.05)")
    bo.add_argument("-c", "--correlation", type=float, default=0.0,
                    help="flag only when |coefficient| is above this (default 0.0)")
    bo.add_argument("--fs", default=None, help="Lustre name for OST names (e.g. snx11025)")
    bo.add_argument("--site-json", default=None,
                    help="pytokio site.json mapping mount points to Lustre names")

    sb = sub.add_parser("scoreboard", help="top users, applications and file systems by I/O "
                        "volume over a period (TOKIO darshan_scoreboard)")
    sb.add_argument("--from", dest="date_from", required=True, metavar="D",
                    help="first day (YYYY-MM-DD, UTC)")
    sb.add_argument("--to", dest="date_to", required=True, metavar="D", help="last day")
    sb.add_argument("--top", type=_positive, default=10, help="rows per table (default 10)")
    sb.add_argument("--out", default=None, help="folder for scoreboard_<from>_<to>.csv/.png")
    _common(sb, site=False)

    co = sub.add_parser("correlate", help="Pearson r and p-value of job performance against "
                        "every other job_metrics column (TOKIO Fig. 9)")
    co.add_argument("--from", dest="date_from", metavar="D",
                    help="first day (YYYY-MM-DD; default: every day)")
    co.add_argument("--to", dest="date_to", metavar="D", help="last day")
    co.add_argument("--perf", default="perf_mibs",
                    help="the performance column of job_metrics (default perf_mibs)")
    co.add_argument("--out", default=None, help="folder for correlate_<period>.csv/.png")
    co.add_argument("-p", "--p-value", dest="p_value", type=float, default=0.05,
                    help="significance threshold: bold in the figure (default 0.05)")
    _common(co, site=False)

    sj = sub.add_parser("summarize-job", help="one row of metrics per job from every "
                        "connector -> job_metrics (TOKIO summarize_job)")
    sj.add_argument("job_ids", nargs="+", metavar="JOBID")
    sj.add_argument("--csv", default=None, help="also write the rows to this CSV file")
    sj.add_argument("--json", default=None, help="also write the rows to this JSON file")
    sj.add_argument("--no-write", action="store_true",
                    help="do not merge the rows into the job_metrics table")
    sj.add_argument("--darshan-root", default=None,
                    help="site Darshan log repository (<root>/YYYY/M/D/...): ingest the "
                    "jobs' logs first (default: tokio.darshan_root of the site)")
    _common(sj)

    um = sub.add_parser("umami", help="UMAMI diagram: a job against its application's history")
    um.add_argument("job_id", metavar="JOBID")
    um.add_argument("--days", type=_positive, default=None,
                    help="history before the job (default tokio.history_days)")
    um.add_argument("--out", default=".", help="folder for umami_<job>.png (default .)")
    _common(um)
    return p


# --- commands ------------------------------------------------------------------------------


def _site(args):
    from lassi.core.config import load_site

    return load_site(args.site, nodes=getattr(args, "nodes", None))


def _warehouse(args, app: str):
    from lassi.core.spark import get_spark
    from lassi.core.warehouse import Warehouse

    return Warehouse(get_spark(f"lassi {app}"), args.warehouse)


def cmd_simulate(args) -> int:
    from lassi.sim.runner import simulate

    site = _site(args)
    res = simulate(site, args.date, args.days, args.seed, Path(args.out), faults=args.fault,
                   gz=args.gzip, traced_fraction=args.traced_fraction,
                   tokio=not args.no_tokio, lmt_step_s=args.lmt_step,
                   overwrite=args.overwrite)
    print(f"simulated {res['runs']} runs at {site.name} ({len(site.compute_nodes)} nodes), "
          f"{res['slowed']} slowed; raw files and truth.json in {res['out']}")
    return 0


def cmd_ingest(args) -> int:
    from lassi.ingest.runner import ingest_raw, ingest_source

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
        from lassi.ingest.runner import URI_SCHEMES

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
    from lassi.pipeline.daily import run_daily

    site = _site(args)
    wh = _warehouse(args, "daily")
    for line in run_daily(wh, site, args.date):
        print(line)
    return 0


def cmd_evaluate(args) -> int:
    from lassi.evaluate.scores import evaluate, load_truth, table

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
    from lassi.core.schemas import TABLES

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
    from lassi.core.warehouse import days, local_root, may_have_local

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
    from lassi.beacon.trace_compress import CompressStats, compress_stream

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
    from lassi.cli.demo import demo

    for line in demo(args.site, args.nodes, args.date, args.seed, Path(args.dir)):
        print(line)
    return 0


def cmd_archive_lmt(args) -> int:
    from lassi.ingest.lmt import LmtDb, LmtError
    from lassi.tools.lmt_archive import archive, check_window, parse_time, summary

    try:
        start, end = parse_time(args.start), parse_time(args.end)
        check_window(start, end)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    from lassi.ingest.runner import URI_SCHEMES

    if not args.input.startswith(URI_SCHEMES) and not Path(args.input).is_file():
        raise CliError(f"no such LMT database file: {args.input}")
    zone = _zone(args.tz) if args.tz is not None else _site(args).tz("lmt")
    try:
        db = LmtDb(args.input, zone)      # before Spark starts: a dead database fails fast
    except LmtError as exc:
        raise CliError(str(exc)) from None
    with db:
        wh = _warehouse(args, "archive-lmt")
        stats = archive(wh.spark, wh, db, start, end)
    print(summary(stats, db.name, start, end))
    return 0


def cmd_bad_ost(args) -> int:
    """Correlate per-file performance with OSTs; print the flagged ones."""
    for log in args.logs:
        if not Path(log).is_file():
            raise CliError(f"no such Darshan log: {log}")
    if args.site_json and not Path(args.site_json).is_file():
        raise CliError(f"no such site.json: {args.site_json}")
    from lassi.tools.bad_ost import bad_osts, format_table, to_json

    df = bad_osts(args.logs, args.p_value, args.correlation, args.fs, args.site_json)
    print(json.dumps(to_json(df), indent=2) if args.json else format_table(df))
    return 0


def _period_args(args, required: bool = True) -> tuple[dt.date | None, dt.date | None]:
    """--from/--to as dates (both or, unless required, neither); one-line errors."""
    out = []
    for flag, text in (("--from", args.date_from), ("--to", args.date_to)):
        try:
            out.append(None if text is None else dt.date.fromisoformat(text))
        except ValueError:
            raise CliError(f"{flag}: not a date (YYYY-MM-DD): {text!r}") from None
    first, last = out
    if (first is None) != (last is None) or (required and first is None):
        raise CliError("give both --from D1 and --to D2")
    if first is not None and last < first:
        raise CliError(f"--from {first} is after --to {last}")
    return first, last


def _existing_warehouse(root: str) -> None:
    from lassi.core.warehouse import local_root

    local = local_root(root)
    if local is not None and not local.is_dir():
        raise CliError(f"no warehouse at {root}")


def cmd_scoreboard(args) -> int:
    """Top users, applications and file systems by I/O volume (TOKIO Fig. 8)."""
    first, last = _period_args(args)
    _existing_warehouse(args.warehouse)
    from lassi.tools.scoreboard import format_tables, scoreboard, write_outputs

    wh = _warehouse(args, "scoreboard")
    try:
        tables = scoreboard(wh, first, last, args.top)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    span = first.isoformat() if first == last else f"{first}..{last}"
    print(f"I/O scoreboard {span}; source: {tables[0].attrs['source']}\n")
    print(format_tables(tables))
    if args.out:
        for path in write_outputs(tables, first, last, Path(args.out)):
            print(f"wrote {path}")
    return 0


def cmd_correlate(args) -> int:
    """Pearson r / p of job performance against the other job metrics (TOKIO Fig. 9)."""
    first, last = _period_args(args, required=False)
    if not 0 < args.p_value < 1:
        raise CliError(f"-p must be between 0 and 1, got {args.p_value}")
    _existing_warehouse(args.warehouse)
    from lassi.tools.correlate import correlate, format_table, write_outputs

    wh = _warehouse(args, "correlate")
    try:
        res = correlate(wh, first, last, args.perf)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    print(format_table(res, args.p_value))
    if args.out:
        for path in write_outputs(res, Path(args.out), args.p_value):
            print(f"wrote {path}")
    return 0


def _print_metrics(pdf) -> None:
    """Jobs as columns, metrics as rows: readable for a handful of jobs."""
    import pandas as pd

    with pd.option_context("display.max_rows", 200, "display.width", 160):
        print(pdf.set_index("job_id").T.to_string())


def cmd_summarize_job(args) -> int:
    from lassi.tokio.job_metrics import JobNotFound, fetch_darshan_logs, summarize_jobs, tokio_conf

    _existing_warehouse(args.warehouse)
    site = _site(args)
    root = args.darshan_root or tokio_conf(site).get("darshan_root")
    if root and not Path(root).is_dir():
        raise CliError(f"no Darshan log repository at {root}")
    wh = _warehouse(args, "summarize-job")
    if root:
        print(f"{fetch_darshan_logs(wh, site, args.job_ids, root)} Darshan logs found in {root}",
              file=sys.stderr)
    missing = None
    try:
        pdf = summarize_jobs(wh, site, args.job_ids, write=not args.no_write)
    except JobNotFound as exc:
        pdf, missing = exc.found, str(exc)
    if len(pdf):
        _print_metrics(pdf)
        if args.csv:
            pdf.to_csv(args.csv, index=False)
        if args.json:
            pdf.to_json(args.json, orient="records", date_format="iso", indent=1)
    if missing:
        raise CliError(missing)
    return 0


def cmd_umami(args) -> int:
    from lassi.tools.umami import write_umami

    _existing_warehouse(args.warehouse)
    site = _site(args)
    wh = _warehouse(args, "umami")
    print(write_umami(wh, site, args.job_id, Path(args.out), args.days).resolve())
    return 0


COMMANDS = {"simulate": cmd_simulate, "ingest": cmd_ingest, "run": cmd_run, "sql": cmd_sql,
            "report": cmd_report, "evaluate": cmd_evaluate, "demo": cmd_demo}
COMMANDS["compress-trace"] = cmd_compress_trace
COMMANDS["archive-lmt"] = cmd_archive_lmt
COMMANDS["bad-ost"] = cmd_bad_ost
COMMANDS["scoreboard"] = cmd_scoreboard
COMMANDS["correlate"] = cmd_correlate
COMMANDS["summarize-job"] = cmd_summarize_job
COMMANDS["umami"] = cmd_umami


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
