"""What a parser could not read: kept with the reason, counted, never lost."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass, field

# the fields of a quarantined line, in `quarantine` table order (then ingested_at, date)
QUARANTINED_FIELDS = ("source", "file", "line_no", "raw", "reason")


@dataclass(frozen=True)
class Quarantined:
    """One line (or whole file, line_no 0) that did not parse."""

    source: str
    file: str
    line_no: int
    raw: str
    reason: str

    def row(self, date: dt.date, now: dt.datetime) -> tuple:
        """Its `quarantine` table row: the five fields, `ingested_at` = now, `date`."""
        return (self.source, self.file, self.line_no, self.raw, self.reason, now, date)


def quarantine_rows(qs: Iterable[Quarantined], date: dt.date, now: dt.datetime) -> list[tuple]:
    """`quarantine` table rows of quarantined lines, all ingested at `now` onto `date`."""
    return [q.row(date, now) for q in qs]


@dataclass
class ParseStats:
    """Line accounting of one ingest: lines_read == lines_used + lines_quarantined.

    `lines_used` counts every line that was understood (data, headers, blank lines);
    `rows` counts the table rows produced (a line may yield zero or several rows).
    """

    source: str
    files: int = 0
    lines_read: int = 0
    lines_used: int = 0
    lines_quarantined: int = 0
    rows: int = 0
    counter_resets: int = 0
    extra: dict[str, int] = field(default_factory=dict)

    def add(self, other: ParseStats) -> None:
        """Accumulate another file's counts into this one."""
        self.files += other.files
        self.lines_read += other.lines_read
        self.lines_used += other.lines_used
        self.lines_quarantined += other.lines_quarantined
        self.rows += other.rows
        self.counter_resets += other.counter_resets
        for k, v in other.extra.items():
            self.extra[k] = self.extra.get(k, 0) + v

    @property
    def conserved(self) -> bool:
        """True when every line read was either used or quarantined."""
        return self.lines_read == self.lines_used + self.lines_quarantined

    def log_row(self, date: dt.date, now: dt.datetime) -> tuple:
        """Its `ingest_log` table row (ingested at `now`, onto `date`)."""
        return (self.source, self.files, self.lines_read, self.lines_used,
                self.lines_quarantined, self.rows, self.counter_resets, now, date)

    def summary(self) -> str:
        """One line for the end of an ingest. Lines used that gave no row at all say what
        they were counted as (`extra`), so that a file of another format (Cray's apsched
        log given as ALPS, a job log of another layout) is no silent zero."""
        return (
            f"{self.source}: {self.files} files, {self.lines_read} lines read = "
            f"{self.lines_used} used + {self.lines_quarantined} quarantined; {self.rows} rows"
            + (f"; {self.counter_resets} counter resets" if self.counter_resets else "")
            + (f"; {self.extra['files_unreadable']} files quarantined (unreadable)"
               if self.extra.get("files_unreadable") else "")
            + (self._no_rows() if self.rows == 0 and self.lines_used else "")
        )

    def _no_rows(self) -> str:
        """Why the lines used gave no row: the source's counts of what they were."""
        counts = ", ".join(f"{k.replace('_', ' ')} {v:,}" for k, v in sorted(self.extra.items())
                           if v and k != "files_unreadable")
        return f" (of the lines used: {counts})" if counts else " (no line used held a record)"
