"""Per-day raw output files: `<out>/<layer>/<host>/<YYYY-MM-DD>.txt[.gz]`, kept open."""

from __future__ import annotations

import datetime as dt
import gzip
from pathlib import Path
from typing import TextIO


def day_of(t: float) -> str:
    """UTC date (YYYY-MM-DD) of an epoch time."""
    return dt.datetime.fromtimestamp(t, dt.timezone.utc).date().isoformat()


class DayFiles:
    """Open-on-demand writers keyed by (relative dir, day); one file per host per day."""

    def __init__(self, root: Path, suffix: str = ".txt", gz: bool = False) -> None:
        self.root = Path(root)
        self.suffix = suffix + (".gz" if gz else "")
        self.gz = gz
        self._open: dict[tuple[str, str], TextIO] = {}

    def get(self, rel: str, day: str) -> TextIO:
        key = (rel, day)
        fh = self._open.get(key)
        if fh is None:
            # a new day closes yesterday's files of this host
            for k in [k for k in self._open if k[0] == rel]:
                self._open.pop(k).close()
            p = self.root / rel / f"{day}{self.suffix}"
            p.parent.mkdir(parents=True, exist_ok=True)
            fh = gzip.open(p, "at") if self.gz else p.open("a")
            self._open[key] = fh
        return fh

    def close(self) -> None:
        for fh in self._open.values():
            fh.close()
        self._open.clear()
