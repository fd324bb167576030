"""The counter vector every simulated run carries per time step, in Lustre's own names."""

from __future__ import annotations

DATA = ["read_ops", "read_bytes", "write_ops", "write_bytes"]
OSS_OTHER = ["get_info", "set_info_async", "disconnect", "destroy", "punch", "ost_sync",
             "preprw", "commitrw"]
MDS = ["open", "close", "mknod", "link", "unlink", "mkdir", "rmdir", "rename", "getattr",
       "setattr", "getxattr", "setxattr", "statfs", "mds_sync", "samedir_rename",
       "crossdir_rename"]
COUNTERS = DATA + OSS_OTHER + MDS
IDX = {c: i for i, c in enumerate(COUNTERS)}
N = len(COUNTERS)

# simulator name -> name Lustre prints in stats files
LUSTRE_NAME = {c: c for c in COUNTERS} | {"ost_sync": "sync", "mds_sync": "sync"}
# simulator name -> LASSi node_window column (read/write kb derive from bytes)
LASSI_MDS = {"open": "open", "close": "close", "mknod": "mknod", "link": "link",
             "unlink": "unlink", "mkdir": "mkdir", "rmdir": "rmdir", "rename": "ren",
             "getattr": "getattr", "setattr": "setattr", "getxattr": "getxattr",
             "setxattr": "setxattr", "statfs": "statfs", "mds_sync": "sync",
             "samedir_rename": "sdr", "crossdir_rename": "cdr"}


def to_lassi(vec) -> dict[str, float]:
    """A counter vector as LASSi's node_window counters (kb from bytes, other summed)."""
    out = {
        "read_kb": vec[IDX["read_bytes"]] / 1024, "read_ops": int(vec[IDX["read_ops"]]),
        "write_kb": vec[IDX["write_bytes"]] / 1024, "write_ops": int(vec[IDX["write_ops"]]),
        "other": int(sum(vec[IDX[c]] for c in OSS_OTHER)),
    }
    for c, name in LASSI_MDS.items():
        out[name] = int(vec[IDX[c]])
    return out
