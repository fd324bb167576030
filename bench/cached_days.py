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
