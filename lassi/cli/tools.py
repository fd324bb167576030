"""The tool commands: `archive-lmt`, `bad-ost`, `scoreboard`, `correlate`, `summarize-job`,
`umami` (TOKIO), `why` (every layer), `compress-trace` (Beacon) and `sql` (any table, as a
view)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from lassi.cli.args import (
    CliError,
    CliTempFail,
    add_lock_wait,
    add_period,
    add_site,
    add_warehouse,
    date_arg,
    existing_warehouse,
    open_warehouse,
    period,
    positive,
    site_of,
    zone,
)


def add_commands(sub) -> None:
    lm = sub.add_parser("archive-lmt", help="archive a time window of an LMT database into "
                        "lmt_ost/lmt_mds (idempotent; replaces only the window's rows)")
    lm.add_argument("--input", required=True, metavar="URI|FILE",
                    help="mysql://user[:pass]@host[:port]/db (password also from "
                    "$LASSI_LMT_PASSWORD) or an LMT SQLite copy (.sqlite3)")
    # a time window, not a period of days: its own --from/--to (datetimes)
    lm.add_argument("--from", dest="start", required=True, metavar="T",
                    help="window start, ISO date or datetime, UTC (e.g. 2018-01-28T08:00)")
    lm.add_argument("--to", dest="end", required=True, metavar="T",
                    help="window end (exclusive), ISO date or datetime, UTC")
    lm.add_argument("--tz", default=None,
                    help="time zone of the database's TIMESTAMP_INFO (default: the site's lmt)")
    lm.add_argument("--retries", type=positive, default=5, metavar="N",
                    help="attempts per connection or query before giving up with exit status "
                    "75; the waits between them double from 0.5 s (default 5: 7.5 s)")
    lm.add_argument("--query-timeout", type=positive, default=600, metavar="S",
                    help="seconds one query may take before it is retried (default 600)")
    add_warehouse(lm)
    add_lock_wait(lm)
    add_site(lm)
    lm.set_defaults(func=cmd_archive_lmt)

    bo = sub.add_parser("bad-ost", help="Darshan logs (or a day's Lustre job_stats): which "
                        "Lustre OST correlates with slow files (TOKIO darshan_bad_ost)")
    bo.add_argument("logs", nargs="*", metavar="LOG", help="Darshan log files")
    bo.add_argument("--jobstats", type=date_arg, default=None, metavar="D",
                    help="no logs: the (job, OST) pairs of day D's Lustre job_stats in the "
                         "warehouse (rate over the job's other OSTs)")
    add_warehouse(bo)
    bo.add_argument("--json", action="store_true", help="the flagged OSTs as a JSON list")
    bo.add_argument("-p", "--p-value", type=float, default=0.05, dest="p_value",
                    help="flag only when the p-value is below this (default 0.05)")
    bo.add_argument("-c", "--correlation", type=float, default=0.0,
                    help="flag only when |coefficient| is above this (default 0.0)")
    bo.add_argument("--fs", default=None,
                    help="Lustre name (e.g. snx11025): of the Darshan logs' OSTs; with "
                         "--jobstats, only that filesystem")
    bo.add_argument("--site-json", default=None,
                    help="pytokio site.json mapping mount points to Lustre names")
    bo.set_defaults(func=cmd_bad_ost)

    sb = sub.add_parser("scoreboard", help="top users, applications and file systems by I/O "
                        "volume over a period (TOKIO darshan_scoreboard)")
    add_period(sb, date=False)
    sb.add_argument("--top", type=positive, default=10, help="rows per table (default 10)")
    sb.add_argument("--out", default=None, help="folder for scoreboard_<from>_<to>.csv/.png")
    add_warehouse(sb)
    sb.set_defaults(func=cmd_scoreboard)

    co = sub.add_parser("correlate", help="Pearson r and p-value of job performance against "
                        "every other job_metrics column (TOKIO Fig. 9)")
    add_period(co, date=False, required=False)
    co.add_argument("--perf", default="perf_mibs",
                    help="the performance column of job_metrics (default perf_mibs)")
    co.add_argument("--out", default=None, help="folder for correlate_<period>.csv/.png")
    co.add_argument("-p", "--p-value", dest="p_value", type=float, default=0.05,
                    help="significance threshold: bold in the figure (default 0.05)")
    add_warehouse(co)
    co.set_defaults(func=cmd_correlate)

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
    add_warehouse(sj)
    add_site(sj)
    sj.set_defaults(func=cmd_summarize_job)

    um = sub.add_parser("umami", help="UMAMI diagram: a job against its application's history")
    um.add_argument("job_id", metavar="JOBID")
    um.add_argument("--days", type=positive, default=None,
                    help="history before the job (default tokio.history_days)")
    um.add_argument("--out", default=".", help="folder for umami_<job>.png (default .)")
    add_warehouse(um)
    add_site(um)
    um.set_defaults(func=cmd_umami)

    wy = sub.add_parser("why", help="why was this job slow, and what should be done? ranked "
                        "causes from every layer (SIOX causal path, Beacon, LASSi, TOKIO)")
    wy.add_argument("job_id", metavar="JOBID")
    wy.add_argument("--date", type=date_arg, default=None,
                    help="the job's start day (default: looked up)")
    wy.add_argument("--json", action="store_true", help="print one JSON object")
    wy.add_argument("--html", default=None, metavar="OUT",
                    help="also write a page with the job's causal path and bandwidth figures")
    add_warehouse(wy)
    add_site(wy)
    wy.set_defaults(func=cmd_why)

    c = sub.add_parser("compress-trace", help="first-pass compress an LWFS client trace: "
                       "stdin -> stdout (Beacon, per compute node)")
    c.add_argument("--stats", action="store_true",
                   help="print lines in/out and the ratio to stderr")
    c.set_defaults(func=cmd_compress_trace)

    q = sub.add_parser("sql", help="run Spark SQL; every table is a view")
    q.add_argument("query")
    q.add_argument("--limit", type=positive, default=50)
    add_warehouse(q)
    q.set_defaults(func=cmd_sql)


def cmd_archive_lmt(args) -> int:
    """Archive a window of an LMT database; a database that does not answer within the
    retries exits 75 (retry later), and the warehouse keeps what it had."""
    from lassi.ingest.lmt import BACKOFF_S, LmtDb, LmtError, LmtUnavailable
    from lassi.ingest.runner import URI_SCHEMES
    from lassi.tools.lmt_archive import archive, check_window, parse_time, summary

    start, end = parse_time(args.start), parse_time(args.end)
    check_window(start, end)
    if not args.input.startswith(URI_SCHEMES) and not Path(args.input).is_file():
        raise CliError(f"no such LMT database file: {args.input}")
    tz = zone(args.tz) if args.tz is not None else site_of(args).tz("lmt")
    try:
        # before Spark starts: a dead database fails fast
        db = LmtDb(args.input, tz, args.retries, BACKOFF_S,
                   query_timeout_s=args.query_timeout)
        for warning in db.warnings:
            print(f"archive-lmt: {warning}", file=sys.stderr)
        with db:
            wh = open_warehouse(args, "archive-lmt", writes=True)
            stats = archive(wh.spark, wh, db, start, end)
    except LmtUnavailable as exc:
        raise CliTempFail(f"{exc}; nothing was written, rerun the same window") from None
    except LmtError as exc:
        raise CliError(str(exc)) from None
    retried = f" ({db.retried} queries retried)" if db.retried else ""
    print(summary(stats, db.name, start, end) + retried, flush=True)
    return 0


def cmd_bad_ost(args) -> int:
    """Correlate per-file (or per job and OST) performance with OSTs; print the flagged
    ones."""
    if (args.jobstats is None) == (not args.logs):
        raise CliError("give Darshan logs or --jobstats DATE (not both)")
    if args.jobstats is not None:
        return _bad_ost_jobstats(args)
    for log in args.logs:
        if not Path(log).is_file():
            raise CliError(f"no such Darshan log: {log}")
    if args.site_json and not Path(args.site_json).is_file():
        raise CliError(f"no such site.json: {args.site_json}")
    from lassi.tools.bad_ost import bad_osts, format_table, to_json

    df = bad_osts(args.logs, args.p_value, args.correlation, args.fs, args.site_json)
    print(json.dumps(to_json(df), indent=2) if args.json else format_table(df))
    return 0


def _bad_ost_jobstats(args) -> int:
    existing_warehouse(args.warehouse)
    from lassi.tools.bad_ost import format_table, jobstats_bad_osts, to_json

    wh = open_warehouse(args, "bad-ost")
    if not wh.has("raw_lustre_stats", args.jobstats):
        raise CliError(f"no Lustre statistics for {args.jobstats} in {wh.root}")
    df = jobstats_bad_osts(wh, args.jobstats, args.p_value, args.correlation, args.fs)
    if df.empty:
        raise CliError(f"no job_stats with OST service times (read/write µs) on "
                       f"{args.jobstats}: Lustre 2.12+ job_stats on the OSSes are needed")
    print(json.dumps(to_json(df), indent=2) if args.json
          else format_table(df, what="(job, OST) pair"))
    return 0


def cmd_scoreboard(args) -> int:
    """Top users, applications and file systems by I/O volume (TOKIO Fig. 8)."""
    first, last = period(args)
    existing_warehouse(args.warehouse)
    from lassi.tools.scoreboard import format_tables, scoreboard, write_outputs

    wh = open_warehouse(args, "scoreboard")
    tables = scoreboard(wh, first, last, args.top)
    span = first.isoformat() if first == last else f"{first}..{last}"
    print(f"I/O scoreboard {span}; source: {tables[0].attrs['source']}\n")
    print(format_tables(tables))
    if args.out:
        for path in write_outputs(tables, first, last, Path(args.out)):
            print(f"wrote {path}")
    return 0


def cmd_correlate(args) -> int:
    """Pearson r / p of job performance against the other job metrics (TOKIO Fig. 9)."""
    first, last = period(args)
    if not 0 < args.p_value < 1:
        raise CliError(f"-p must be between 0 and 1, got {args.p_value}")
    existing_warehouse(args.warehouse)
    from lassi.tools.correlate import correlate, format_table, write_outputs

    wh = open_warehouse(args, "correlate")
    res = correlate(wh, first, last, args.perf)
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
    from lassi.tokio.job_metrics import JobNotFound, fetch_darshan_logs, summarize_jobs

    existing_warehouse(args.warehouse)
    site = site_of(args)
    root = args.darshan_root or site.settings.tokio.darshan_root
    if root and not Path(root).is_dir():
        raise CliError(f"no Darshan log repository at {root}")
    wh = open_warehouse(args, "summarize-job", short_lived=True)
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

    existing_warehouse(args.warehouse)
    site = site_of(args)
    wh = open_warehouse(args, "umami")
    print(write_umami(wh, site, args.job_id, Path(args.out), args.days).resolve())
    return 0


def cmd_why(args) -> int:
    """Ranked causes of one job's lost time, as text or JSON."""
    existing_warehouse(args.warehouse)
    site = site_of(args)
    from lassi.tools.why import WhyError, diagnose, format_text

    wh = open_warehouse(args, "why", short_lived=True)
    try:
        d = diagnose(wh, site, args.job_id, args.date)
    except WhyError as exc:
        raise CliError(str(exc)) from None
    print(json.dumps(d.as_json(), indent=2) if args.json else format_text(d))
    if args.html:
        from lassi.report.why_page import write_page

        print(write_page(wh, d, Path(args.html)).resolve(), file=sys.stderr)
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


def cmd_sql(args) -> int:
    from lassi.core.schemas import TABLES

    wh = open_warehouse(args, "sql")
    for t in TABLES:
        wh.read(t).createOrReplaceTempView(t)
    df = wh.spark.sql(args.query)
    print(df.limit(args.limit).toPandas().to_string(index=False))
    return 0
