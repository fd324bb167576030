"""Python's cyclic garbage collector, tuned for a batch command that keeps what it builds.

lassi's driver holds many small objects that live to the end of a step (a parser's rows,
a report's frames and figures) and makes almost no reference cycles. With Python's
defaults (a collection every 700 net allocations) the collector walks those objects again
and again: measured on the tests' reference line parsers and simulated days, 10 % of
their time (README, Tests).

- `tune_gc()`: collect less often (the `lassi` command and the tests' processes);
- `paused_gc()`: no collection while a driver-side parser builds its rows;
- `freeze_imports()`: on an executor, the imported modules out of the collector's reach.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

# (first generation, second, third): a collection every 100,000 net allocations instead
# of 700; the older generations 50 and 100 of those instead of 10 and 10
THRESHOLDS = (100_000, 50, 100)


def tune_gc() -> None:
    """Set THRESHOLDS for this process (reference counting frees the rest as usual)."""
    gc.set_threshold(*THRESHOLDS)


@contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic collector off while a parser builds its rows on the driver.

    A line parser keeps every row it makes (dicts, lists, strings: no reference cycles), and
    each collection walks all of them again: on a 200k-line accounting log a third of the
    parse time. Reference counting still frees what a parser drops; the collector runs as
    usual afterwards.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


_frozen_at = 0      # len(sys.modules) at this process's last freeze_imports()


def freeze_imports() -> None:
    """Executor side, first thing in every Python function lassi hands to Spark: when
    modules were imported since the last call, collect once and freeze what is left
    (`gc.freeze`: the permanent generation, never walked again).

    A reused PySpark worker runs a full `gc.collect()` after every task (pyspark.daemon).
    With pandas, pyarrow and lassi imported (80k+ tracked objects) that collection took
    30–70 ms of a core per task, more than a small task's work (README, Tests). Freezing
    once per set of imports leaves it only the objects a task made. Cheap when nothing new
    was imported (a length check), so a per-group function may call it for every group.
    """
    global _frozen_at
    if len(sys.modules) != _frozen_at:
        gc.collect()
        gc.freeze()
        _frozen_at = len(sys.modules)


def frozen_imports(fn: Callable[[T], R]) -> Callable[[T], R]:
    """`fn` (one argument: an applyInPandas group) calling freeze_imports() first."""
    def group(pdf: T) -> R:
        freeze_imports()
        return fn(pdf)
    return group
