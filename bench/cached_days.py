"""Where the benches find a cached simulated day."""

from __future__ import annotations

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
