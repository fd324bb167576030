"""lassi: offline analytics for the I/O of supercomputers (LASSi + Beacon + TOKIO + SIOX)."""

import os as _os
import sys as _sys

__version__ = "0.1.0"

# Arrow's default pool (mimalloc) gives the pages it frees back to the system and faults
# them in again at the next block of a reader: PBS at site scale spent 0.15-0.25 s of a
# 1 s parse in the kernel. With MIMALLOC_PURGE_DELAY=-1 it keeps them for reuse (the
# process stays at its peak: a block's buffers). mimalloc reads the variable once, when
# pyarrow loads, so it is set here, before any lassi module imports pyarrow; it passes on
# to the JVM and its Python workers (also when this process loaded pyarrow first).
# ARROW_KEEPS_PAGES: whether it took effect here (not when pyarrow was loaded first, or
# the variable says otherwise: the readers then allocate from the C library's malloc,
# `lassi.ingest.driver_reads.reader_allocator`).
_PURGE_DELAY = _os.environ.setdefault("MIMALLOC_PURGE_DELAY", "-1")
ARROW_KEEPS_PAGES = _PURGE_DELAY == "-1" and "pyarrow" not in _sys.modules
