"""Shared argument handling of the spark-submit entry points (thin by design)."""

from __future__ import annotations

import argparse
import datetime as dt
import sys


def parse(description: str, extra=None) -> argparse.Namespace:
    """--date, --warehouse, --site (+ extra arguments); a bad date exits with one line."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--date", required=True)
    p.add_argument("--warehouse", default="./warehouse")
    p.add_argument("--site", default="archer")
    p.add_argument("--nodes", type=int, default=None)
    if extra:
        extra(p)
    args = p.parse_args()
    try:
        args.date = dt.date.fromisoformat(args.date)
    except ValueError:
        sys.exit(f"error: not a date (YYYY-MM-DD): {args.date!r}")
    return args


def session(app: str, args: argparse.Namespace):
    """The warehouse and site for an entry point (Spark settings come from spark-submit)."""
    from lassi.core.config import load_site
    from lassi.core.spark import get_spark
    from lassi.core.warehouse import Warehouse

    return Warehouse(get_spark(app), args.warehouse), load_site(args.site, nodes=args.nodes)


def run(app: str, args: argparse.Namespace, body) -> None:
    """Open the session, call `body(wh, site)`; a ValueError exits with one line; always stop."""
    wh, site = session(app, args)
    try:
        body(wh, site)
    except ValueError as e:
        raise SystemExit(f"error: {e}") from None
    finally:
        wh.spark.stop()
