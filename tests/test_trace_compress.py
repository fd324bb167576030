"""Beacon's two-pass trace compression: the first pass (lassi.beacon.trace_compress, per node,
streaming) and the second pass (lassi.beacon.trace_merge, per job across nodes, Spark)."""

from __future__ import annotations

import datetime as dt
import subprocess
import threading
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from lassi.beacon.trace_compress import (
    CompressStats,
    at_second,
    compress_lines,
    expand_lines,
    line_key,
    request_multiset,
)

REPO = Path(__file__).resolve().parents[1]
IP = "20.0.3.17"
T = "2018-09-10T06:16:"


def w(ms: str, op: str, fd: str, offset: int, size: int, count: int | None = 1,
      ip: str = IP) -> str:
    """A data line at second 52/53/... given as 'SS.mmm'."""
    tail = f" {count}" if count is not None else ""
    return f"{ip} {T}{ms}Z {op} {fd} {offset} {size}{tail}"


def comp(lines: list[str], **kw) -> list[str]:
    return list(compress_lines(lines, **kw))


def per_key(lines: list[str]) -> dict:
    """Lines grouped by (ip, fd) in order, at second granularity (garbage under None)."""
    out: dict = defaultdict(list)
    for x in lines:
        out[line_key(x)].append(at_second(x))
    return dict(out)


# --- first pass: hand-made traces, exact output --------------------------------------------


def test_contiguous_requests_merge_into_one_line_with_the_first_timestamp():
    lines = [w("52.127", "WRITE", "0x1", 0, 524288), w("52.131", "WRITE", "0x1", 524288, 524288),
             w("52.560", "WRITE", "0x1", 1048576, 524288, None)]
    assert comp(lines) == [w("52.127", "WRITE", "0x1", 0, 524288, 3)]


def test_a_gap_in_offsets_breaks_the_merge():
    lines = [w("52.100", "READ", "0x1", 0, 4096), w("52.101", "READ", "0x1", 4096, 4096),
             w("52.102", "READ", "0x1", 12288, 4096), w("52.103", "READ", "0x1", 16384, 4096)]
    assert comp(lines) == [w("52.100", "READ", "0x1", 0, 4096, 2),
                           w("52.102", "READ", "0x1", 12288, 4096, 2)]


def test_a_different_size_or_op_breaks_the_merge():
    lines = [w("52.100", "READ", "0x1", 0, 4096), w("52.101", "READ", "0x1", 4096, 8192),
             w("52.102", "WRITE", "0x1", 12288, 8192), w("52.103", "WRITE", "0x1", 20480, 8192)]
    assert comp(lines) == [w("52.100", "READ", "0x1", 0, 4096, 1),
                           w("52.101", "READ", "0x1", 4096, 8192, 1),
                           w("52.102", "WRITE", "0x1", 12288, 8192, 2)]


def test_the_second_boundary_breaks_the_merge():
    lines = [w("52.998", "WRITE", "0x1", 0, 100), w("52.999", "WRITE", "0x1", 100, 100),
             w("53.000", "WRITE", "0x1", 200, 100), w("53.500", "WRITE", "0x1", 300, 100)]
    assert comp(lines) == [w("52.998", "WRITE", "0x1", 0, 100, 2),
                           w("53.000", "WRITE", "0x1", 200, 100, 2)]


def test_interleaved_fds_merge_each_and_keep_the_order_of_their_first_lines():
    lines = [w("52.001", "WRITE", "0xa", 0, 10), w("52.002", "WRITE", "0xb", 0, 20),
             w("52.003", "WRITE", "0xa", 10, 10), w("52.004", "WRITE", "0xb", 20, 20),
             w("52.005", "WRITE", "0xa", 20, 10), w("52.006", "WRITE", "0xb", 999, 20)]
    assert comp(lines) == [w("52.002", "WRITE", "0xb", 0, 20, 2),
                           w("52.001", "WRITE", "0xa", 0, 10, 3),
                           w("52.006", "WRITE", "0xb", 999, 20, 1)]


def test_metadata_flushes_only_its_own_fd_and_passes_unchanged():
    open2 = f"{IP} {T}52.003Z OPEN 0x2 path=/User1/a/b"
    close1 = f"{IP} {T}52.005Z CLOSE 0x1"
    lines = [w("52.001", "WRITE", "0x1", 0, 10), w("52.002", "WRITE", "0x1", 10, 10), open2,
             w("52.004", "WRITE", "0x1", 20, 10), close1, w("52.006", "WRITE", "0x1", 30, 10)]
    assert comp(lines) == [open2, w("52.001", "WRITE", "0x1", 0, 10, 3), close1,
                           w("52.006", "WRITE", "0x1", 30, 10, 1)]


def test_metadata_with_its_own_count_and_a_new_second_pass_through():
    stat = f"{IP} {T}53.002Z STAT 0x9 path=/User1 count=4"
    lines = [w("52.001", "READ", "0x1", 0, 10), stat, w("53.003", "READ", "0x1", 10, 10)]
    assert comp(lines) == [w("52.001", "READ", "0x1", 0, 10, 1), stat,
                           w("53.003", "READ", "0x1", 10, 10, 1)]


def test_already_compressed_input_merges_its_counts_and_twice_is_once():
    k = 131072
    lines = [w("52.001", "READ", "0x1", 0, k, 16), w("52.400", "READ", "0x1", 16 * k, k, 4),
             w("52.500", "READ", "0x1", 20 * k, k), w("53.002", "READ", "0x1", 21 * k, k, 8)]
    once = comp(lines)
    assert once == [w("52.001", "READ", "0x1", 0, k, 21), w("53.002", "READ", "0x1", 21 * k, k, 8)]
    assert comp(once) == once


def test_lines_that_are_not_trace_lines_pass_through_unchanged():
    garbage = ["", "   ", "hello world", f"{IP} {T}52.002Z READ 0x1 abc 10 1",
               f"{IP} not-a-time READ 0x1 10 10 1", f"{IP} {T}52.003Z READ 0x1 10 10 0",
               f"{IP} {T}52.004Z READ 0x1 10 10 1 extra", f"{IP} {T}52.005Z read 0x1 10 10",
               "20.0.3.17 2018-09-10T06:16:52.006+01:00 READ 0x1 10 10 1", "\x00\ufffd\udcff"]
    lines = [w("52.001", "READ", "0x1", 0, 10)] + garbage + [w("52.010", "READ", "0x1", 10, 10)]
    st = CompressStats()
    assert comp(lines, stats=st) == garbage + [w("52.001", "READ", "0x1", 0, 10, 2)]
    assert (st.lines_in, st.lines_out, st.passed, st.data_in, st.data_out) == (12, 11, 10, 2, 1)


def test_nodes_are_kept_apart_and_each_follows_its_own_second():
    a, b = "10.0.0.1", "10.0.0.2"
    lines = [w("52.001", "WRITE", "0x1", 0, 10, ip=a), w("53.001", "WRITE", "0x1", 10, 10, ip=b),
             w("52.002", "WRITE", "0x1", 10, 10, ip=a), w("53.002", "WRITE", "0x1", 20, 10, ip=b),
             w("53.003", "WRITE", "0x1", 20, 10, ip=a)]
    assert comp(lines) == [w("52.001", "WRITE", "0x1", 0, 10, 2, ip=a),
                           w("53.001", "WRITE", "0x1", 10, 10, 2, ip=b),
                           w("53.003", "WRITE", "0x1", 20, 10, 1, ip=a)]


def test_expand_gives_one_request_per_line_with_the_entry_timestamp():
    meta = f"{IP} {T}52.000Z OPEN 0x1 path=/x"
    assert list(expand_lines([meta, w("52.127", "WRITE", "0x1", 100, 10, 3) + "\n", "junk"])) == [
        meta, w("52.127", "WRITE", "0x1", 100, 10), w("52.127", "WRITE", "0x1", 110, 10),
        w("52.127", "WRITE", "0x1", 120, 10), "junk"]


def test_the_pending_cap_bounds_state_and_stays_lossless():
    # runs of 3 requests on each of 5 fds in turn, all in one second
    lines = [w(f"52.{i:03d}", "WRITE", f"0x{i // 3 % 5}", (i // 15 * 3 + i % 3) * 10, 10)
             for i in range(60)]
    assert comp(lines) == [w(f"52.{3 * k:03d}", "WRITE", f"0x{k}", 0, 10, 12) for k in range(5)]
    st = CompressStats()
    out = comp(lines, max_pending=2, stats=st)
    assert st.max_pending <= 2 and st.evictions > 0
    assert request_multiset(out) == request_multiset(lines)
    assert per_key(list(expand_lines(out))) == per_key(list(expand_lines(lines)))
    assert len(out) == 20                           # the runs of 3 still merge


# --- bounded memory -------------------------------------------------------------------------


def _stream(n: int):
    """n raw lines of 4 nodes x 8 fds, 2,000 requests per second, 1% metadata, 0.1% junk."""
    offs = [0] * 32
    for i in range(n):
        k = i % 32
        ip, fd = f"10.0.{k // 8}.1", f"0x{k % 8:x}"
        s, ms = divmod(i // 2, 1000)
        ts = f"2018-09-10T{6 + s // 3600:02d}:{(s // 60) % 60:02d}:{s % 60:02d}.{ms:03d}Z"
        if i % 1000 == 999:
            yield "not a trace line\n"
        elif i % 100 == 37:
            yield f"{ip} {ts} STAT {fd} path=/User1/dir\n"
        else:
            size = 4096 if (i // 3200) % 2 else 8192
            yield f"{ip} {ts} WRITE {fd} {offs[k]} {size} 1\n"
            offs[k] += size if i % 211 else 3 * size      # now and then a gap


def test_a_million_lines_stream_through_in_bounded_state():
    st = CompressStats()
    n_out = sum(1 for _ in compress_lines(_stream(1_000_000), stats=st))
    assert st.lines_in == 1_000_000 and st.lines_out == n_out
    assert st.max_pending <= 32 and st.max_ips <= 4 and st.evictions == 0
    assert st.requests == st.data_in                 # raw input: one request per line
    assert n_out < 200_000                           # and it did compress


# --- losslessness on random traces ------------------------------------------------------------


def random_trace(seed: int, n: int = 600) -> list[str]:
    """Random raw/partly compressed trace lines of 3 nodes x 3 fds with runs, gaps, size and
    op changes, metadata, junk and out-of-order seconds."""
    rng = np.random.default_rng(seed)
    offs: dict = defaultdict(int)
    t_ms = 1_536_560_212_000
    lines = []
    for _ in range(n):
        t_ms += int(rng.choice([0, 1, 5, 300, 1200]))
        ts_ms = t_ms - (2000 if rng.random() < 0.02 else 0)     # a late line now and then
        ts = dt.datetime.fromtimestamp(ts_ms / 1000, dt.timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        ip, fd = f"10.0.0.{rng.integers(3)}", f"0x{rng.integers(3):x}"
        r = rng.random()
        if r < 0.05:
            lines.append(f"{ip} {ts} {rng.choice(['OPEN', 'CLOSE', 'STAT'])} {fd} path=/p")
        elif r < 0.07:
            lines.append(rng.choice(["junk", "", f"{ip} {ts} READ {fd} x 1 1"]))
        else:
            op = "READ" if rng.random() < 0.3 else "WRITE"
            size = int(rng.choice([0, 512, 4096]))
            count = int(rng.choice([1, 1, 1, 2, 7]))
            if rng.random() < 0.1:
                offs[ip, fd] += int(rng.integers(1, 9999))
            tail = "" if count == 1 and rng.random() < 0.5 else f" {count}"
            lines.append(f"{ip} {ts} {op} {fd} {offs[ip, fd]} {size}{tail}")
            offs[ip, fd] += count * size
    return lines


@pytest.mark.parametrize("seed", range(40))
def test_random_traces_are_lossless_and_idempotent(seed):
    x = random_trace(seed)
    once = comp(x)
    assert request_multiset(once) == request_multiset(x)
    assert per_key(list(expand_lines(once))) == per_key(list(expand_lines(x)))  # order per fd
    assert len(once) < len(x)
    twice = comp(once)
    assert per_key(twice) == per_key(once) and sorted(twice) == sorted(once)
    small = comp(x, max_pending=1)
    assert request_multiset(small) == request_multiset(x)


def test_the_lossless_check_can_fail():
    x = random_trace(7)
    out = comp(x)
    i = next(k for k, line in enumerate(out) if line.split()[-1] not in ("1", "0") and
             " WRITE " in line)
    broken = out[:i] + [out[i].rsplit(" ", 1)[0] + " 1"] + out[i + 1:]
    assert request_multiset(broken) != request_multiset(x)


# --- the CLI --------------------------------------------------------------------------------


LASSI = str(REPO / ".venv" / "bin" / "lassi")


def test_cli_compresses_stdin_to_stdout_and_prints_stats():
    lines = [w("52.127", "WRITE", "0x1", 0, 524288), w("52.131", "WRITE", "0x1", 524288, 524288),
             "bad \udcff line", w("53.000", "READ", "0x1", 0, 4096, 16)]
    data = ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")
    res = subprocess.run([LASSI, "compress-trace", "--stats"], input=data, capture_output=True,
                         timeout=60)
    assert res.returncode == 0, res.stderr
    assert res.stdout == b"bad \xff line\n" + (
        w("52.127", "WRITE", "0x1", 0, 524288, 2) + "\n" +
        w("53.000", "READ", "0x1", 0, 4096, 16) + "\n").encode()
    assert "4 lines in, 3 lines out, ratio 1.33" in res.stderr.decode()


def test_cli_survives_a_closed_stdout():
    """Like `lassi compress-trace < big | head -c 100`: exit 0, no traceback."""
    body = "".join(w(f"{k % 60:02d}.000", "WRITE", f"0x{k % 3}", k * 7, 5) + "\n"
                   for k in range(200_000)).encode()       # nothing merges: output = input

    def feed(stdin) -> None:
        try:
            stdin.write(body)
            stdin.close()
        except BrokenPipeError:
            pass

    proc = subprocess.Popen([LASSI, "compress-trace", "--stats"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    writer = threading.Thread(target=feed, args=(proc.stdin,))
    writer.start()
    assert len(proc.stdout.read(100)) == 100
    proc.stdout.close()                                    # hang up
    err = proc.stderr.read().decode()
    writer.join(timeout=60)
    assert proc.wait(timeout=60) == 0
    assert "Traceback" not in err and "lines in" in err


# --- second pass (Spark): a hand-made day --------------------------------------------------

DAY = dt.date(2018, 9, 10)
MB2 = 524288


def _t(hms: str, day: dt.date = DAY) -> dt.datetime:
    """Naive UTC datetime of 'HH:MM:SS.fff' on `day`."""
    return dt.datetime.combine(day, dt.time.fromisoformat(hms))


def _sec(hms: str) -> int:
    return int(_t(hms).replace(tzinfo=dt.timezone.utc).timestamp())


def _job(job_id: str, name: str, nodes: list[str], start: dt.datetime, end: dt.datetime,
         source: str = "beacon-job") -> tuple:
    from lassi.core.schemas import schema_of

    row = {"app_id": job_id, "job_id": job_id, "job_name": name, "nodes": nodes,
           "n_nodes": len(nodes), "start": start, "end": end, "source": source,
           "date": start.date()}
    return tuple(row.get(f) for f in schema_of("app_run").fieldNames())


JOBS = [
    _job("J0", "wrf", ["n5"], _t("23:00:00", DAY - dt.timedelta(days=1)), _t("01:00:00")),
    _job("J1", "xcfd", ["n1", "n2", "n3"], _t("06:00:00"), _t("07:00:00")),
    _job("J2", "xcfd", ["n4"], _t("06:00:00"), _t("07:00:00")),
    _job("J3", "awp", ["n4"], _t("07:00:00"), _t("08:00:00")),        # starts as J2 ends
    _job("S9", "other", ["n9"], _t("00:00:00"), _t("23:00:00"), source="slurm"),  # not Beacon
]


def _tr(node, hms, op, fd, offset=None, size=None, count=1, path=None, ip=None) -> tuple:
    ip = ip or f"10.0.0.{node[1:]}"
    return (node, ip, _t(hms), op, fd, offset, size, count, path, "f.log", DAY)


TRACE = [
    # J1: 3 nodes, N:N-like: each opens its own file, writes the same offsets in the same s
    _tr("n1", "06:16:52.101", "OPEN", "0x10", path="/out/rank1"),
    _tr("n2", "06:16:52.105", "OPEN", "0x10", path="/out/rank2"),
    _tr("n3", "06:16:52.109", "OPEN", "0x10", path="/out/rank3"),
    _tr("n1", "06:16:52.201", "WRITE", "0x10", 0, MB2, 4),
    _tr("n2", "06:16:52.230", "WRITE", "0x10", 0, MB2, 4),
    _tr("n3", "06:16:52.250", "WRITE", "0x10", 0, MB2, 4),
    _tr("n1", "06:16:53.001", "WRITE", "0x10", 4 * MB2, MB2, 4),
    _tr("n2", "06:16:53.020", "WRITE", "0x10", 4 * MB2, MB2, 4),
    _tr("n3", "06:16:53.900", "WRITE", "0x10", 4 * MB2, MB2, 3),      # differs: kept apart
    _tr("n1", "06:16:54.000", "CLOSE", "0x10"),
    _tr("n2", "06:16:54.010", "CLOSE", "0x10"),
    _tr("n3", "06:16:54.020", "CLOSE", "0x10"),
    _tr("n1", "06:16:54.500", "STAT", "0x3", count=2, path="/out"),
    _tr("n2", "06:16:54.600", "STAT", "0x3", count=2, path="/out"),
    _tr("n1", "06:16:54.700", "STAT", "0x3", count=2, path="/out"),   # n1 twice, same vector
    _tr("n1", "07:00:00.999", "CLOSE", "0x11"),                        # J1's last second
    # J0 started yesterday; J2/J3 share n4 back to back
    _tr("n5", "00:30:00.250", "WRITE", "0x20", 0, 1048576, 8),
    _tr("n4", "06:59:59.900", "READ", "0x30", 0, 4096, 2),
    _tr("n4", "07:00:00.400", "READ", "0x30", 8192, 4096, 1),
    # unattributed: a node of no Beacon job, a line after the job, an ip of no known node
    _tr("n9", "06:16:52.300", "WRITE", "0x10", 0, MB2, 4),
    _tr("n1", "08:00:00.000", "READ", "0x7", 0, 4096, 1),
    _tr(None, "06:20:00.000", "WRITE", "0x1", 0, 100, 1, ip="10.0.0.99"),
]

S52, S53, S54 = _sec("06:16:52"), _sec("06:16:53"), _sec("06:16:54")
MERGED = [
    ("J1", S52, "OPEN", "0x10", None, None, 1, "/out/rank1", 1, ["n1"]),
    ("J1", S52, "OPEN", "0x10", None, None, 1, "/out/rank2", 1, ["n2"]),
    ("J1", S52, "OPEN", "0x10", None, None, 1, "/out/rank3", 1, ["n3"]),
    ("J1", S52, "WRITE", "0x10", MB2, 0, 4, None, 3, ["n1", "n2", "n3"]),
    ("J1", S53, "WRITE", "0x10", MB2, 4 * MB2, 4, None, 2, ["n1", "n2"]),
    ("J1", S53, "WRITE", "0x10", MB2, 4 * MB2, 3, None, 1, ["n3"]),
    ("J1", S54, "CLOSE", "0x10", None, None, 1, None, 3, ["n1", "n2", "n3"]),
    ("J1", S54, "STAT", "0x3", None, None, 2, "/out", 3, ["n1", "n1", "n2"]),
    ("J1", _sec("07:00:00"), "CLOSE", "0x11", None, None, 1, None, 1, ["n1"]),
    ("J0", _sec("00:30:00"), "WRITE", "0x20", 1048576, 0, 8, None, 1, ["n5"]),
    ("J2", _sec("06:59:59"), "READ", "0x30", 4096, 0, 2, None, 1, ["n4"]),
    ("J3", _sec("07:00:00"), "READ", "0x30", 4096, 8192, 1, None, 1, ["n4"]),
    ("-", S52, "WRITE", "0x10", MB2, 0, 4, None, 1, ["n9"]),
    ("-", _sec("08:00:00"), "READ", "0x7", 4096, 0, 1, None, 1, ["n1"]),
    ("-", _sec("06:20:00"), "WRITE", "0x1", 100, 0, 1, None, 1, ["10.0.0.99"]),
]
COMPRESSION = [   # job, app, n_nodes, raw, first pass, merged, ratios, lossless
    ("J0", "wrf", 1, 8, 1, 1, 8.0, 1.0, 8.0, True),
    ("J1", "xcfd", 3, 36, 16, 9, 36 / 16, 16 / 9, 4.0, True),
    ("J2", "xcfd", 1, 2, 1, 1, 2.0, 1.0, 2.0, True),
    ("J3", "awp", 1, 1, 1, 1, 1.0, 1.0, 1.0, True),
    ("-", None, 3, 6, 3, 3, 2.0, 1.0, 2.0, True),
]


@pytest.fixture
def trace_day(warehouse):
    """A warehouse with the day's raw_lwfs_trace and app_run (J0 launched the day before)."""
    from lassi.core.schemas import schema_of

    spark = warehouse.spark
    warehouse.write(spark.createDataFrame(JOBS, schema_of("app_run")), "app_run")
    warehouse.write(spark.createDataFrame(TRACE, schema_of("raw_lwfs_trace")), "raw_lwfs_trace")
    return warehouse


def _expected(spark, rows: list[tuple], table: str):
    from lassi.core.schemas import schema_of

    return spark.createDataFrame([(*r, DAY) for r in rows], schema_of(table))


def test_second_pass_merges_identical_vectors_across_a_jobs_nodes(trace_day):
    from pyspark.testing import assertDataFrameEqual

    from lassi.beacon.trace_merge import build_trace_merged

    summary = build_trace_merged(trace_day, None, DAY)
    assert summary == ("4 jobs: 53 requests -> 22 first-pass -> 15 merged entries "
                       "(2.4x, 1.5x); 3 unattributed lines; lossless")
    spark = trace_day.spark
    assertDataFrameEqual(trace_day.read("trace_merged", [DAY]),
                         _expected(spark, MERGED, "trace_merged"))
    assertDataFrameEqual(trace_day.read("trace_compression", [DAY]),
                         _expected(spark, COMPRESSION, "trace_compression"))


def test_the_lossless_check_fails_on_a_corrupted_merge(trace_day):
    from pyspark.sql import functions as F

    from lassi.beacon.trace_merge import build_trace_merged, write_trace_compression

    build_trace_merged(trace_day, None, DAY)
    m = trace_day.read("trace_merged", [DAY])
    j1_s53 = (F.col("job_id") == "J1") & (F.col("ts") == S53) & (F.col("n_nodes") == 2)
    bad = (m.withColumn("nodes", F.when(j1_s53, F.array(F.lit("n1"))).otherwise(F.col("nodes")))
            .withColumn("n_nodes", F.when(j1_s53, F.lit(1)).otherwise(F.col("n_nodes")))
            .withColumn("count", F.when(F.col("job_id") == "J2", F.col("count") + 1)
                        .otherwise(F.col("count")))
            .withColumn("n_nodes", F.when(F.col("job_id") == "J3", F.lit(2))
                        .otherwise(F.col("n_nodes")))
            .localCheckpoint())
    trace_day.write(bad, "trace_merged", [DAY])
    out = {r.job_id: r.lossless for r in write_trace_compression(trace_day, DAY).collect()}
    assert out == {"J0": True, "J1": False, "J2": False, "J3": False, "-": True}
    stored = {r.job_id: r.lossless for r in trace_day.read("trace_compression", [DAY]).collect()}
    assert stored == out


def test_compression_by_app_sums_the_jobs_of_each_application(trace_day):
    from lassi.beacon.trace_merge import build_trace_merged, compression_by_app

    build_trace_merged(trace_day, None, DAY)
    df = compression_by_app(trace_day, DAY, DAY)
    assert df["app"].tolist() == ["awp", "wrf", "xcfd"]
    assert df["jobs"].tolist() == [1, 1, 2]
    assert df["raw_entries"].tolist() == [1, 8, 38]
    assert df["first_pass_entries"].tolist() == [1, 1, 17]
    assert df["merged_entries"].tolist() == [1, 1, 10]
    assert df["second_pass_ratio"].tolist() == pytest.approx([1.0, 1.0, 1.7])
    assert df["total_ratio"].tolist() == pytest.approx([1.0, 8.0, 3.8])
    assert df["lossless"].all()


def test_a_day_without_trace_writes_nothing(warehouse):
    from lassi.beacon.trace_merge import build_trace_merged

    assert build_trace_merged(warehouse, None, DAY) == "no LWFS client trace (nothing to merge)"
    assert not warehouse.has("trace_merged", DAY)
    assert warehouse.read("trace_merged", [DAY]).count() == 0
    assert warehouse.read("trace_compression", [DAY]).count() == 0
