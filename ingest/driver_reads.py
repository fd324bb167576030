"""The frame of a driver-side column-wise reader (PBS, ALPS, Slurm, the Beacon job log):
its counts and quarantine across the files of one ingest, each file's blocks parsed two
at a time, the line parser's reading of a file that cannot be read to its end, and the
reader's `parse_files` (`files_parser`)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, TypeVar

import pyarrow as pa
from lassi.ingest.alps import read_lines, unreadable
from lassi.ingest.columnar import READ_THREADS, NotFast, parsed_blocks

from lassi import ARROW_KEEPS_PAGES
from lassi.core.quarantine import ParseStats, Quarantined

T = TypeVar("T")
Progress = Callable[[int, int], None]
Parsed = tuple[pa.Table, list[Quarantined], ParseStats]


@dataclass
class FileReads:
    """The counts and quarantine of a driver-side column-wise reader across the files of
    one ingest (`source`'s; times without an offset local in `tz`)."""

    source: ClassVar[str]
    tz: str = "UTC"
    # the day whose rows the caller keeps (`runner._run_days`): a reader may leave out the
    # rows of other days early (None: every row)
    day: dt.date | None = None
    stats: ParseStats = field(init=False)
    quarantine: list[Quarantined] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.stats = ParseStats(source=self.source)

    def bump(self, key: str, n: int = 1) -> None:
        if n:
            self.stats.extra[key] = self.stats.extra.get(key, 0) + n

    def read(self, paths: Iterable[str | Path], progress: Progress | None = None) -> Parsed:
        """Every file read (`file`; `progress(files done, files)` after each), then the
        rows (`finish`)."""
        paths = list(paths)
        with ThreadPoolExecutor(READ_THREADS) as pool:
            for done, path in enumerate(paths, 1):
                self.file(path, pool)
                if progress is not None:
                    progress(done, len(paths))
        return self.finish()

    def file(self, path: str | Path, pool: ThreadPoolExecutor) -> None:
        raise NotImplementedError

    def finish(self) -> Parsed:
        raise NotImplementedError

    def blocks(self, path: str | Path, parse: Callable[[pa.StringArray], T],
               pool: ThreadPoolExecutor, slow: Callable[[list[str]], T]) -> list[T] | None:
        """`parse` of each block of the file; a file that cannot be read to its end gives
        `slow` of all its lines (the line parser's reading), or None when it cannot be
        read at all (quarantined whole: one pseudo-line)."""
        try:
            return parsed_blocks(path, parse, pool)
        except NotFast:
            lines, bad = read_lines(path, self.source)
            if bad is None:
                return [slow(lines)]
            _, qs, st = unreadable(bad)
            self.stats.add(st)
            self.quarantine += qs
            return None


@contextmanager
def reader_allocator() -> Iterator[None]:
    """Where a reader's Arrow buffers come from (runner.ingest_scheduler: a reader's parse
    and write). The readers allocate and free hundreds of MB per block; mimalloc, Arrow's
    default pool, gives the pages back to the system soon after a free and faults them in
    again at the next block, unless told to keep them (`lassi.ARROW_KEEPS_PAGES`, set as
    lassi loads). Kept: the default pool (the PBS parse at site scale in 0.45-0.52 s, 0.07-
    0.09 s of it in the kernel, against 0.57-0.63 s and 0.15-0.23 s on malloc;
    bench/scale-history.md). Otherwise the C library's malloc (a purging mimalloc was
    slower still), and the previous pool comes back after."""
    if ARROW_KEEPS_PAGES:
        yield
        return
    previous = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        yield
    finally:
        pa.set_memory_pool(previous)


def files_parser(reads: type[FileReads]) -> Callable[..., Parsed]:
    """The `parse_files(paths, *, tz="UTC", progress=None, day=None)` of a reader: its
    source's rows over the files as an Arrow table of app_run's columns (no `date`), the
    quarantine and the counts, as the source's line parser gives them (with `day`, rows
    starting on another day may be left out: the caller keeps that day's only)."""
    def parse_files(paths: Iterable[str | Path], *, tz: str = "UTC",
                    progress: Progress | None = None, day: dt.date | None = None) -> Parsed:
        return reads(tz=tz, day=day).read(paths, progress)
    parse_files.__doc__ = files_parser.__doc__
    return parse_files
