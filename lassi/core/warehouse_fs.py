"""The few filesystem operations the warehouse's partition swaps need (exists, list, mkdirs,
rename, delete), on paths given as strings under its root.

`HadoopFiles` goes through Hadoop's FileSystem API in the driver JVM: any Hadoop URI
(HDFS, S3A, a local `file:` root), at one py4j round trip per operation (0.3-1 ms).
`LocalFiles` does the same on a local root with Python's own calls (microseconds): a
daily run makes hundreds of them, for small writes most of their cost (issue #15 item 3).
Both give Hadoop's answers: `rename` and `delete` return False rather than raise, a listing
leaves out the checksum files Hadoop's local filesystem keeps beside data files.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, Protocol


class WarehouseFiles(Protocol):
    def exists(self, path: str) -> bool: ...
    def ls(self, path: str) -> list[str]: ...
    def mkdirs(self, path: str) -> None: ...
    def rename(self, src: str, dst: str) -> bool: ...
    def delete(self, path: str) -> bool: ...
    def local_path(self, path: str) -> str: ...


def local_path(path: str) -> Path | None:
    """The local path of a `file:` URI or a path without a scheme (None for other URIs)."""
    for prefix in ("file://", "file:"):
        if path.startswith(prefix):
            return Path(path[len(prefix):])
    return None if ":" in path.split("/", 1)[0] else Path(path)


class HadoopFiles:
    """Through a JVM Hadoop FileSystem (`fs`; `jvm` the gateway's JVM view)."""

    def __init__(self, jvm: Any, fs: Any) -> None:
        self._Path = jvm.org.apache.hadoop.fs.Path
        self._fs = fs

    def exists(self, path: str) -> bool:
        return bool(self._fs.exists(self._Path(path)))

    def ls(self, path: str) -> list[str]:
        if not self.exists(path):
            return []
        return [st.getPath().getName() for st in self._fs.listStatus(self._Path(path))]

    def mkdirs(self, path: str) -> None:
        self._fs.mkdirs(self._Path(path))

    def rename(self, src: str, dst: str) -> bool:
        return bool(self._fs.rename(self._Path(src), self._Path(dst)))

    def delete(self, path: str) -> bool:
        return bool(self._fs.delete(self._Path(path), True))

    def local_path(self, path: str) -> str:
        """The path as the JVM resolves it: absolute, whatever the executors' cwd."""
        return str(self._fs.makeQualified(self._Path(path)).toUri().getPath())


class LocalFiles:
    """Python's own calls on a local root: `root` as the warehouse names it, `directory`
    the absolute folder the JVM resolves it to (a relative root is relative to the JVM's
    working folder, which a later `os.chdir` of the driver does not move)."""

    def __init__(self, root: str, directory: str | Path) -> None:
        self._root = root.rstrip("/")
        self._dir = Path(directory)

    def _p(self, path: str) -> Path:
        if path != self._root and not path.startswith(self._root + "/"):
            raise ValueError(f"{path} is not under the warehouse root {self._root}")
        return self._dir / path[len(self._root):].lstrip("/")

    def exists(self, path: str) -> bool:
        return self._p(path).exists()

    def ls(self, path: str) -> list[str]:
        try:
            names = os.listdir(self._p(path))
        except (FileNotFoundError, NotADirectoryError):
            return []
        # Hadoop's local filesystem hides its checksum files (.name.crc)
        return [n for n in names if not (n.startswith(".") and n.endswith(".crc"))]

    def mkdirs(self, path: str) -> None:
        self._p(path).mkdir(parents=True, exist_ok=True)

    def rename(self, src: str, dst: str) -> bool:
        target = self._p(dst)
        if target.exists():               # Hadoop would move src into it: never wanted here
            return False
        try:
            os.rename(self._p(src), target)
        except OSError:
            return False
        return True

    def delete(self, path: str) -> bool:
        p = self._p(path)
        try:
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p)
            else:
                p.unlink()
        except FileNotFoundError:
            return False
        return True

    def local_path(self, path: str) -> str:
        return str(self._p(path))
