"""spark-submit jobs/node_window.py --date D: per-node per-window counters for one date."""

from jobs._args import parse, session


def main() -> None:
    args = parse(__doc__)
    wh, site = session("lassi node_window", args)
    from lassi.risk.node_window import build_node_window

    print(f"node_window: {build_node_window(wh, site, args.date)} rows for {args.date}")
    wh.spark.stop()


if __name__ == "__main__":
    main()
