"""`make bench`: the driver-side text sources at site scale (issue #15 item 1).

Never a test: it prints figures and writes `ingest_rates.site_scale` in bench/results.json.

A simulated day's scheduler logs, `lfs df` and `lctl dl` files are a few hundred to a few
thousand lines, so bench/ingest_rates.py measures their fixed cost, not their per-line
rate. A large site writes far more: tens of thousands of jobs a day, a backfill of a
month, an `lfs df` of thousands of OSTs every minute. Here each is made about 200k lines
long from real-looking lines:
- PBS and ALPS: the cached 1,024-node ARCHER day's files (bench/ingest_rates.py), 100
  copies whose job ids and apids carry the copy's number (PBS host names and record
  seconds, ALPS launch commands too: see `_pbs_alps`);
- the Beacon job log: the cached 4,096-node TaihuLight day's (3,727 lines), 50 copies with
  numbered job ids;
- Slurm: the XDMoD sacct sample of ../shared/realdata (4,285 lines), 40 copies with
  numbered job ids and times k seconds later (skipped when ../shared is absent);
- `pbs-real`: the real PBS, Torque and PBS Pro `E` records of ../shared/realdata (XDMoD's
  and APEL's test logs, 13 lines of 587-685 bytes against the simulated ARCHER lines' 445;
  Torque's `host/0-27` core ranges, PBS Pro's exec_vnode), moved onto the bench day and
  copied with numbered job ids, 15,300 copies (skipped when ../shared is absent);
- `lfs df` and `lctl dl`: the day's snapshots repeated 100 times, a minute apart
  (`--copies 1440`: a day of them at one a minute, ~1 M lines).
Each is ingested through `ingest_source` in one `local[2]` session into a scratch
warehouse, once to warm up and then `--warm` times; the median warm pass is printed: the
rows written (read back from the Parquet footers), wall seconds, lines/s per core (wall x
2 cores), the driver's CPU seconds (these sources parse on the driver), and bytes per line
and MB/s per core (the per-line target asks more bytes a second of a format with long
lines: PBS's are 2-3x ALPS's).

Usage: python bench/scheduler_scale.py [--copies 100] [--sources pbs ...] [--warm 3]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from ingest_rates import CORES, DATE, TARGET, median_pass, raw_day  # noqa: E402

OUT = HERE / "cache" / "ingest" / "site-scale"
SLURM_SAMPLE = "scheduler/xdmod_shredder/referencedata_phillips_sacct.log"
PBS_SAMPLES = ("scheduler/xdmod_shredder/pbs/input/accounting-logs.log",
               "scheduler/apel/torque_accounting_E_records.log")
_PBS_EPOCH = re.compile(r"\b(start|end|ctime|qtime|etime)=(\d+)")
_PBS_ID = re.compile(r"(\d+)\.sdb")
_APID = re.compile(r"apid=(\d+)")
_NID = re.compile(r"nid(\d{5})")
_CMD = re.compile(r'cmd_line="([^"]*)"')
_ISO_SECOND = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")
_PBS_SECOND = re.compile(r"^(\d\d/\d\d/\d{4} \d\d:\d\d:)(\d\d)")


def _realdata() -> Path:
    env = os.environ.get("LASSI_SHARED")
    return (Path(env) if env else REPO.parent / "shared") / "realdata"


def _copies(lines: list[str], n: int, renumber) -> list[str]:
    return [renumber(line, k) for k in range(n) for line in lines]


def _pbs_alps(line: str, k: int) -> str:
    """Copy k of a line: its own job ids and apids; in PBS lines its own host names and
    record seconds, in ALPS lines its own launch commands (a site's jobs run on other
    nodes at other times with other arguments: the column-wise readings convert each
    distinct PBS record time and exec_host, and read each distinct command, once)."""
    line = _PBS_ID.sub(lambda m: f"{m.group(1)}{k:03d}.sdb", line)
    line = _NID.sub(lambda m: f"nid{k:03d}{m.group(1)}", line)
    line = _PBS_SECOND.sub(lambda m: f"{m.group(1)}{(int(m.group(2)) + k) % 60:02d}", line)
    line = _CMD.sub(lambda m: f'cmd_line="{m.group(1)} run{k:03d}"', line)
    return _APID.sub(lambda m: f"apid={m.group(1)}{k:03d}", line)


def _slurm(line: str, k: int) -> str:
    """Copy k of a sacct line: its own job ids, its times k seconds later (a site's jobs
    start and end at other seconds: distinct times are not read once for all copies)."""
    f = line.split("|", 2)
    if len(f) != 3:
        return line
    rest = _ISO_SECOND.sub(lambda m: (dt.datetime.fromisoformat(m.group(0))
                                      + dt.timedelta(seconds=k)).isoformat(), f[2])
    return "|".join([f"{f[0]}{k:02d}", f"{f[1]}{k:02d}", rest])


def _pbs_real(line: str, k: int) -> str:
    """Copy k of a real PBS record moved onto the bench day (its header time k seconds
    after 12:00 local, its epoch times shifted with it: the runs start on the day, so
    their rows are written, all but 901 of 198,900) with its own job id."""
    stamp, rtype, job, rest = line.split(";", 3)
    was = dt.datetime.strptime(stamp, "%m/%d/%Y %H:%M:%S")
    now = dt.datetime.combine(DATE["archer"], dt.time(12)) + dt.timedelta(seconds=k)
    shift = round((now - was).total_seconds())
    rest = _PBS_EPOCH.sub(lambda m: f"{m.group(1)}={int(m.group(2)) + shift}", rest)
    num, dot, host = job.partition(".")
    return ";".join([now.strftime("%m/%d/%Y %H:%M:%S"), rtype, f"{num}{k:05d}{dot}{host}",
                     rest])


def _beacon_job(line: str, k: int) -> str:
    """Copy k of a Beacon job log line: its own job id."""
    job, sep, rest = line.partition("\t")
    return f"{job}{k:02d}{sep}{rest}" if job.isdigit() else line


def _snapshots(text: str, n: int) -> str:
    """`BEGIN <epoch>` blocks repeated n times, each copy a minute later (less when n
    copies of a minute would reach the next snapshot: all stay distinct, on the day)."""
    blocks = [b.split("\n", 1) for b in text.split("BEGIN ")[1:]]
    stamps = sorted(int(stamp) for stamp, _ in blocks)
    span = min([b - a for a, b in zip(stamps, stamps[1:], strict=False)] or [86_400])
    step = min(60, span // n)
    return "".join(f"BEGIN {int(stamp) + step * k}\n{rest}"
                   for k in range(n) for stamp, rest in blocks)


def make_inputs(copies: int, only: list[str] | None = None) -> dict[str, Path]:
    """Per source (`only` these when given), its site-scale file (written once into
    bench/cache)."""
    raw = raw_day("archer", 1024, fresh=False)
    day = DATE["archer"]
    src = {"pbs": raw / "pbs" / day.strftime("%Y%m%d"),
           "alps": raw / "alps" / f"{day.isoformat()}.log",
           "lfs-df": raw / "lfs-df" / f"{day.isoformat()}.txt",
           "lctl-dl": raw / "lctl-dl" / f"{day.isoformat()}.txt"}
    tl_day = DATE["taihulight"]
    src["beacon-job"] = (raw_day("taihulight", 4096, fresh=False) / "beacon" / "jobs"
                         / f"{tl_day.isoformat()}.log")
    sample = _realdata() / SLURM_SAMPLE
    real = [_realdata() / f for f in PBS_SAMPLES]
    out = {}
    for source, path in [*src.items(), *([("slurm", sample)] if sample.is_file() else []),
                         *([("pbs-real", real[0])] if all(f.is_file() for f in real) else [])]:
        if only and source not in only:
            continue
        # v2: PBS hosts and times vary; v3: Slurm times too, PBS's real lines at noon
        version = "v3" if source in ("slurm", "pbs-real") else "v2"
        target = OUT / f"x{copies}-{version}" / source / path.name
        if not target.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            text = "" if source == "pbs-real" else path.read_text()
            if source == "pbs-real":
                lines = [line for f in real for line in f.read_text().splitlines()
                         if line.strip()]
                # 13 lines x 153 per copy of the others: as many lines as the PBS file
                body = "\n".join(_copies(lines, copies * 153, _pbs_real)) + "\n"
            elif source in ("lfs-df", "lctl-dl"):
                body = _snapshots(text, copies)
            else:
                n = {"slurm": max(1, copies * 2 // 5), "beacon-job": max(1, copies // 2)}.get(
                    source, copies)
                renumber = {"slurm": _slurm, "beacon-job": _beacon_job}.get(source, _pbs_alps)
                body = "\n".join(_copies(text.splitlines(), n, renumber)) + "\n"
            tmp = target.with_suffix(".tmp")
            tmp.write_text(body)
            tmp.replace(target)
        out[source] = target
    return out


def _rows_written(warehouse: Path, source: str) -> int:
    """The rows the last pass wrote (Parquet footers): a figure is a parse and a write of
    every row, never a parse whose rows the day's filter dropped."""
    import pyarrow.parquet as pq

    table = "ost_health" if source in ("lfs-df", "lctl-dl") else "app_run"
    return sum(pq.ParquetFile(f).metadata.num_rows
               for f in (warehouse / table).rglob("*.parquet"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--copies", type=int, default=100)
    ap.add_argument("--sources", nargs="*", help="only these sources (default: all)")
    ap.add_argument("--warm", type=int, default=3, help="warm passes (their median counts)")
    args = ap.parse_args(argv)
    from lassi.ingest.runner import ingest_source

    from lassi.core.config import load_site
    from lassi.core.spark import get_spark
    from lassi.core.warehouse import Warehouse

    spark = get_spark("lassi bench scheduler scale", master=f"local[{CORES}]")
    site = load_site("archer", nodes=1024)
    tl_site = load_site("taihulight", nodes=4096)
    scratch = HERE / "cache" / "ingest" / "scratch-site-scale"
    results = {}
    print(f"{'source':<10} {'lines':>9} {'B/line':>6} {'written':>9} {'warm s':>7} "
          f"{'driver CPU s':>12} {'lines/s':>9} {'per core':>9} {'MB/s/core':>9}  "
          f"target {TARGET:,}/core", flush=True)
    for source, path in make_inputs(args.copies, args.sources).items():
        runs = []
        for _ in range(1 + args.warm):         # the first pass warms up, the rest count
            shutil.rmtree(scratch, ignore_errors=True)
            wh = Warehouse(spark, str(scratch))
            t, cpu = time.time(), time.process_time()
            on = ("taihulight", tl_site) if source == "beacon-job" else ("archer", site)
            # the sacct sample's runs start on 2016-12-30 .. 2017-01-01, not on the bench
            # day: ingested without a date, every row is written to its day (a backfill),
            # as every other source's rows are written to the bench day (until session 43
            # Slurm's were parsed and dropped, never written)
            day = None if source == "slurm" else DATE[on[0]]
            st = ingest_source(spark, wh, on[1], source.removesuffix("-real"), [str(path)],
                               day)
            runs.append((time.time() - t, time.process_time() - cpu))
        written = _rows_written(scratch, source)
        wall, cpu = median_pass(runs[1:])
        rate = round(st.lines_read / wall)
        size = path.stat().st_size
        mb_core = size / wall / CORES / 1e6
        results[source] = {"lines": st.lines_read, "rows": st.rows, "rows_written": written,
                           "quarantined": st.lines_quarantined, "wall_s": round(wall, 2),
                           "driver_cpu_s": round(cpu, 2), "lines_per_s": rate,
                           "per_core": rate // CORES, "bytes_per_line": size // st.lines_read,
                           "mb_per_s_per_core": round(mb_core, 1)}
        print(f"{source:<10} {st.lines_read:>9,} {size // st.lines_read:>6} {written:>9,} "
              f"{wall:>7.2f} {cpu:>12.2f} {rate:>9,} {rate // CORES:>9,} {mb_core:>9.1f}  "
              f"{'PASS' if rate // CORES >= TARGET else 'FAIL'}", flush=True)
    shutil.rmtree(scratch, ignore_errors=True)
    path = HERE / "results.json"
    doc = json.loads(path.read_text()) if path.exists() else {}
    entry = doc.setdefault("ingest_rates", {}).setdefault("site_scale", {})   # keeps "before"
    entry.update(what=f"driver-side sources made ~200k lines long ({args.copies} copies; "
                      "bench/scheduler_scale.py), ingest_source, median of "
                      f"{args.warm} warm passes, local[2]")
    entry["after"] = {**entry.get("after", {}), **results}
    path.write_text(json.dumps(doc, indent=1))
    print(f"figures: {path} (ingest_rates.site_scale)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
