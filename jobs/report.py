"""spark-submit jobs/report.py --date D [--from D1 --to D2] --out DIR: the LASSi report.

Writes `<out>/<site>-<date>/index.html` (or `<site>-<D1>_<D2>/` for a period) with PNG
figures per filesystem and prints the path of index.html.
"""

from jobs._args import parse, run


def _extra(p) -> None:
    p.add_argument("--from", dest="date_from", default=None,
                   help="first day of a period (with --to; overrides --date)")
    p.add_argument("--to", dest="date_to", default=None, help="last day of a period")
    p.add_argument("--out", default="./reports", help="folder for reports")


def main() -> None:
    args = parse(__doc__, _extra)
    if (args.date_from is None) != (args.date_to is None):
        raise SystemExit("error: --from and --to go together")
    from pathlib import Path

    from lassi.core.warehouse import as_date

    try:   # a reversed period is refused by write_daily_report, in one line too
        first = as_date(args.date_from) if args.date_from else args.date
        last = as_date(args.date_to) if args.date_to else args.date
    except ValueError as e:
        raise SystemExit(f"error: {e}") from None

    from lassi.report.daily import write_daily_report

    run("lassi report", args,
        lambda wh, site: print(write_daily_report(wh, site, first, last, Path(args.out)),
                               flush=True))


if __name__ == "__main__":
    main()
