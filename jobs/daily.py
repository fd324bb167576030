"""spark-submit jobs/daily.py --date D [--stage NAME ...]: analysis stages for one date."""

from jobs._args import parse, session


def _extra(p) -> None:
    p.add_argument("--stage", action="append", default=None,
                   help="run only this stage (repeatable); default: every stage in order")


def main() -> None:
    args = parse(__doc__, _extra)
    from lassi.daily import STAGES, run_daily

    bad = [s for s in args.stage or [] if s not in STAGES]
    if bad:
        raise SystemExit(f"error: unknown stage {bad[0]!r}; known: {', '.join(STAGES)}")
    wh, site = session("lassi daily", args)
    try:
        for line in run_daily(wh, site, args.date, args.stage):
            print(line, flush=True)
    except ValueError as e:
        raise SystemExit(f"error: {e}") from None
    finally:
        wh.spark.stop()


if __name__ == "__main__":
    main()
