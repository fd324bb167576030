"""spark-submit jobs/daily.py --date D: every analysis stage for one date."""

from jobs._args import parse, session


def main() -> None:
    args = parse(__doc__)
    wh, site = session("lassi daily", args)
    from lassi.daily import run_daily

    for line in run_daily(wh, site, args.date):
        print(line)
    wh.spark.stop()


if __name__ == "__main__":
    main()
