"""spark-submit jobs/daily.py --date D [--stage NAME ...]: analysis stages for one date."""

from jobs._args import parse, run


def _extra(p) -> None:
    p.add_argument("--stage", action="append", default=None,
                   help="run only this stage (repeatable); default: every stage in order")


def main() -> None:
    args = parse(__doc__, _extra)
    from lassi.pipeline.daily import STAGES, run_daily

    bad = [s for s in args.stage or [] if s not in STAGES]
    if bad:
        raise SystemExit(f"error: unknown stage {bad[0]!r}; known: {', '.join(STAGES)}")

    def body(wh, site) -> None:
        for line in run_daily(wh, site, args.date, args.stage):
            print(line, flush=True)

    run("lassi daily", args, body)


if __name__ == "__main__":
    main()
