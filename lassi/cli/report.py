"""`lassi report daily`: the HTML + PNG report of one day or a period."""

from __future__ import annotations

from pathlib import Path

from lassi.cli.args import (
    CliError,
    add_nodes,
    add_period,
    add_site,
    add_warehouse,
    open_warehouse,
    period,
    site_of,
)


def add_commands(sub) -> None:
    rep = sub.add_parser("report", help="HTML + PNG reports")
    rep.add_argument("what", choices=["daily"],
                     help="daily: the LASSi report of one day (--date) or a period (--from/--to)")
    add_period(rep)
    rep.add_argument("--out", default="./reports",
                     help="folder for reports; each goes to <out>/<site>-<date>/index.html")
    add_warehouse(rep)
    add_site(rep)
    add_nodes(rep)
    rep.set_defaults(func=cmd_report)


def cmd_report(args) -> int:
    first, last = period(args)
    from lassi.core.warehouse import days, local_root, may_have_local

    local = local_root(args.warehouse)     # refuse early, before Spark starts, when local
    if local is not None:
        if not local.is_dir():
            raise CliError(f"no warehouse at {args.warehouse}")
        if not any(may_have_local(local, t, days(first, last))
                   for t in ("app_hour", "job_summary")):
            span = first.isoformat() if first == last else f"{first}..{last}"
            raise CliError(f"no app_hour or job_summary data for {span} in {args.warehouse} "
                           "(run `lassi run daily` first)")
    from lassi.report.daily import write_daily_report

    site = site_of(args)
    wh = open_warehouse(args, "report")
    print(write_daily_report(wh, site, first, last, Path(args.out)), flush=True)
    return 0
