"""The C library's heap kept for reuse by the column-wise readers.

A reader's block makes and drops numpy arrays of several MB each (masks, positions,
codes). glibc's malloc serves arrays that large with fresh memory maps, or trims its
heap as soon as they are freed, so the next block faults the same pages in again: the PBS
site-scale ingest took 19k page faults and 0.07-0.19 s of system time a pass. With
`keep_freed_heap` allocations up to 32 MB come from the heap, which keeps up to 256 MB
free for reuse: 1.4k faults (those of the memory-mapped raw file), 0.02-0.08 s. Arrow's
own buffers are mimalloc's (kept likewise, `lassi.ARROW_KEEPS_PAGES`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3       # mallopt's parameters (malloc.h)
MMAP_THRESHOLD = 32 << 20      # glibc's largest: larger arrays still get their own maps
TRIM_THRESHOLD = 256 << 20     # free heap kept before it is given back to the system


@cache
def keep_freed_heap() -> bool:
    """Tell glibc's malloc, once per process, to serve allocations up to MMAP_THRESHOLD
    from its heap and keep up to TRIM_THRESHOLD of it free. False where the C library has
    no `mallopt` (not glibc) or refuses the values: malloc is left as it was."""
    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
                and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))
