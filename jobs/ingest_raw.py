"""spark-submit jobs/ingest_raw.py --raw RAW --date D: everything collected for one date."""

from pathlib import Path

from jobs._args import parse, session


def main() -> None:
    args = parse(__doc__, lambda p: p.add_argument("--raw", required=True))
    wh, site = session("lassi ingest_raw", args)
    from lassi.ingest.runner import ingest_raw

    for st in ingest_raw(wh.spark, wh, site, Path(args.raw), args.date):
        print(st.summary())
    wh.spark.stop()


if __name__ == "__main__":
    main()
