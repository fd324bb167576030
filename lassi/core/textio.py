"""Reading raw text inputs: gzip transparently, files or directory trees."""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, TextIO


def open_text(path: str | Path) -> TextIO:
    """Open a text file for reading, decompressing `.gz` transparently.

    Undecodable bytes are replaced rather than raised, so a parser sees the line and
    can quarantine it with a reason instead of the whole file failing.
    """
    p = Path(path)
    with p.open("rb") as fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.open(p, "rb"), encoding="utf-8", errors="replace")
    return p.open("r", encoding="utf-8", errors="replace")


def open_bytes(path: str | Path) -> BinaryIO:
    """Open a file's bytes for reading, decompressing `.gz` transparently (`open_text`'s
    bytes, before decoding)."""
    p = Path(path)
    with p.open("rb") as fh:
        magic = fh.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(p, "rb")
    return p.open("rb")


def iter_files(paths: list[str | Path]) -> Iterator[Path]:
    """Yield every regular file under the given files/directories, sorted, skipping dotfiles.

    Raises FileNotFoundError naming the first path that does not exist.
    """
    for raw in paths:
        p = Path(raw)
        if not p.exists():
            raise FileNotFoundError(f"no such file or directory: {p}")
        if p.is_file():
            yield p
            continue
        for child in sorted(p.rglob("*")):
            hidden = any(part.startswith(".") for part in child.relative_to(p).parts)
            if child.is_file() and not hidden:
                yield child
