"""bench/results.json, where the benches keep their figures: merge a bench's results in."""

from __future__ import annotations

import json
from pathlib import Path

PATH = Path(__file__).resolve().parent / "results.json"


def record(results: dict, *keys: str) -> Path:
    """Merge `results` into bench/results.json under the nested `keys` (created when
    missing; the entries of other runs stay); the file's path."""
    doc = json.loads(PATH.read_text()) if PATH.exists() else {}
    entry = doc
    for key in keys:
        entry = entry.setdefault(key, {})
    entry.update(results)
    PATH.write_text(json.dumps(doc, indent=1))
    return PATH
