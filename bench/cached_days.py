"""Where the benches find a cached simulated day."""

from __future__ import annotations

import argparse
from pathlib import Path

CACHE = Path(__file__).resolve().parent / "cache"


def cached_day(site: str, nodes: int) -> Path:
    """The folder (holding raw/) of the cached `site` day of `nodes` nodes: the one
    bench/taihulight_day.py or bench/run.py cached, else bench/ingest_rates.py's."""
    for folder in (CACHE / f"{site}-{nodes}", CACHE / "ingest" / f"{site}-{nodes}"):
        if (folder / "raw" / "truth.json").exists():
            return folder
    return CACHE / f"{site}-{nodes}"


def open_day(folder: str | Path):
    """(raw folder, truth, site) of a cached TaihuLight day, or None after one line saying
    none is cached there."""
    import json

    from lassi.core.config import load_site

    raw = Path(folder) / "raw"
    if not (raw / "truth.json").exists():
        print(f"no cached day at {raw}: run bench/ingest_rates.py first")
        return None
    truth = json.loads((raw / "truth.json").read_text())
    return raw, truth, load_site("taihulight", nodes=int(truth["nodes"]))


def day_parser(doc: str, layers: tuple[str, ...]) -> argparse.ArgumentParser:
    """A bench's arguments: --day (a cached TaihuLight day, default the 4,096-node one)
    and --sources (default `layers`)."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    ap.add_argument("--day", default=str(cached_day("taihulight", 4096)),
                    help="a cached simulated TaihuLight day (its raw/ and truth.json)")
    ap.add_argument("--sources", default=",".join(layers))
    return ap


def bench_day(folder: str | Path, app: str, cores: int):
    """(raw folder, truth, site, a local Spark session of `cores`) of a cached day, or
    None after one line saying none is cached there."""
    from lassi.core.spark import get_spark

    day = open_day(folder)
    if day is None:
        return None
    return (*day, get_spark(app, master=f"local[{cores}]"))
