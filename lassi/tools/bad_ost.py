"""`lassi bad-ost`: which Lustre OST slows a job down? (TOKIO's `darshan_bad_ost`, same
method and answers; the statistics are lassi.siox.ost_correlation's.) Without Darshan logs,
`jobstats_bad_osts` runs the same test on a day's Lustre job_stats: (job, OST) pairs
instead of files."""

from __future__ import annotations

import datetime as dt
import re
import sys
from collections.abc import Iterable
from pathlib import Path

import pandas as pd

from lassi.siox.jobstats_ost import MIN_EFFECT, ost_test
from lassi.siox.ost_correlation import (  # noqa: F401 - the tool's API
    C_THRESHOLD,
    C_WARNING,
    COLUMNS,
    P_THRESHOLD,
    correlate,
    file_performance,
    ost_matrix,
    ost_name,
    pearson,
)


def fs_from_site_json(path: str | Path, mounts: Iterable[str]) -> str | None:
    """The Lustre name (e.g. snx11025) of the files' mount points from a pytokio site.json
    (`mount_to_fsname` regexes, `fsname_to_backend_name`); None unless exactly one."""
    import json

    cfg = json.loads(Path(path).read_text())
    names = set()
    for mount in mounts:
        hits = [fs for rx, fs in cfg.get("mount_to_fsname", {}).items() if re.match(rx, mount)]
        if hits:
            names.add(cfg.get("fsname_to_backend_name", {}).get(hits[0], hits[0]))
    return names.pop() if len(names) == 1 else None


def bad_osts(logs: list[str | Path], p_threshold: float = P_THRESHOLD,
             c_threshold: float = C_THRESHOLD, fs: str | None = None,
             site_json: str | Path | None = None) -> pd.DataFrame:
    """Library API: read the logs (unreadable ones and those without POSIX and LUSTRE data
    are skipped with a warning on stderr) and correlate; one row per OST, sorted by r."""
    from lassi.core.schemas import schema_of
    from lassi.ingest.darshan import parse_logs

    jobs, files, qs, _ = parse_logs(dict.fromkeys(str(p) for p in logs))   # once each
    for q in qs:
        print(f"warning: {q.file}: {q.reason}", file=sys.stderr)
    for j in jobs:
        if not {"POSIX", "LUSTRE"} <= set(j["modules"]):
            print(f"warning: {j['log_path']}: no POSIX and LUSTRE module data", file=sys.stderr)
    cols = [f.name for f in schema_of("darshan_file").fields]
    perf = file_performance(pd.DataFrame(files, columns=cols))
    if site_json and not fs:
        fs = fs_from_site_json(site_json, perf["mount"].dropna().unique())
    out = correlate(perf, p_threshold, c_threshold, fs)
    return out.sort_values(["coefficient", "ost_index"], na_position="last").reset_index(drop=True)


def jobstats_bad_osts(wh, date: dt.date, p_threshold: float = P_THRESHOLD,
                      c_threshold: float = C_THRESHOLD, fs: str | None = None,
                      min_effect: float = MIN_EFFECT) -> pd.DataFrame:
    """The Darshan test on a day's job_stats (lassi.siox.jobstats_ost.ost_test): one row per
    OST, sorted by r."""
    return ost_test(wh, date, p_threshold, c_threshold, fs, min_effect)


def format_table(df: pd.DataFrame, c_warning: float = C_WARNING, what: str = "file") -> str:
    """The flagged OSTs as a readable table (pytokio's layout plus the OST index); `what`
    the observations are (files of Darshan logs, job_stats' (job, OST) pairs)."""
    lines = [f"{'OST':>5} {'OST Name':<18} {'Correlation':>12} {'P-Value':>10}"]
    for r in df[df["flagged"]].itertuples():
        warn = ""
        if abs(r.coefficient) > c_warning:
            warn = (" <-- this OST looks unhealthy" if r.coefficient < 0
                    else " <-- this OST is running unusually quickly")
        lines.append(f"{r.ost_index:>5} {r.ost_name:<18} {r.coefficient:>12.3f} "
                     f"{r.p_value:>10.4g}{warn}")
    if len(lines) == 1:
        lines.append(f"(no OST correlates with {what} performance at these thresholds)")
    return "\n".join(lines)


def to_json(df: pd.DataFrame) -> list[dict]:
    """The flagged OSTs as JSON-ready objects."""
    return [{"ost_index": int(r.ost_index), "ost_name": r.ost_name,
             "coefficient": float(r.coefficient), "p_value": float(r.p_value)}
            for r in df[df["flagged"]].itertuples()]
