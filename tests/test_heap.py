"""`lassi.ingest.heap`: glibc's malloc told to keep freed heap pages for the readers'
next blocks (no page faults for arrays it has served before)."""

from __future__ import annotations

import subprocess
import sys

import pytest
from lassi.ingest.heap import keep_freed_heap

# a reader's blocks: four arrays of 20 MB alive at once, then dropped, five times; prints
# the page faults of the last round (glibc by itself maps the first ones on their own,
# then serves them from the heap but trims the 80 MB freed at each round)
_ROUNDS = """
import resource, sys
import numpy as np
if sys.argv[1] == "keep":
    from lassi.ingest.heap import keep_freed_heap
    assert keep_freed_heap()
for _ in range(5):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    arrays = [np.ones(20 << 20, np.uint8) for _ in range(4)]
    del arrays
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _last_round_faults(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", _ROUNDS, mode], capture_output=True,
                         text=True, check=True)
    return int(out.stdout.strip())


def test_freed_heap_pages_are_reused_without_faults():
    """After keep_freed_heap the fifth round of the same arrays faults (almost) no page
    in; without it, the same round faults its 80 MB in again."""
    if not keep_freed_heap():
        pytest.skip("the C library has no mallopt (not glibc)")
    kept, default = _last_round_faults("keep"), _last_round_faults("default")
    assert default > 500            # 2k here (numpy asks for 2 MB pages where it can)
    assert kept < default // 20
