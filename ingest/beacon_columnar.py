"""Beacon's counter layers, columnar: `ost`, `lustre-client`, `mds` and `lwfs-server` with
Arrow parsing and numpy deltas, the same rows as their line parsers
(`beacon_layers.parse_ost`, `parse_lustre_client`, `parse_mds`, `lwfs_server.parse_file`).

Each layer is a `Layout`. Lines in its strict grammar (for `ost`/`lustre-client`:
printable ASCII fields one space apart, a UTC time Arrow reads as Python does, an OST name,
counters of at most 18 digits, on the file's day; for `mds`: every op once in
BEACON_MDS_OPS order; for `lwfs-server`: the real sample's exact spacing and a local time
that agrees with the UTC time) are parsed as Arrow arrays; every other line goes through the
layer's line parser, which also gives the quarantine reason. The samples of both are put
in line order and the deltas of `beacon_layers.apply_deltas` computed for the whole file at
once (`series_deltas`): per series in time order (line order for equal times), the previous
day's last sample as seed, resets, the first-sample / newborn-series rule. A file that
cannot be read to its end goes through the layer's whole-file parser.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from lassi.ingest import beacon_layers as bl
from lassi.ingest import beacon_mds_bytes, lwfs_server
from lassi.ingest.beacon_seeds import Seed, SeedStore, key_ids
from lassi.ingest.columnar import (
    COUNT_RE,
    PRINTABLE_RE,
    READ_THREADS,
    Fields,
    NotFast,
    all_of,
    block_lines,
    fold_offsets,
    matches,
    names_of,
    on_day,
    parsed_blocks,
    row_schema,
    rows_table,
    slow_lines,
    utc_micros,
    when,
)

from lassi.core.quarantine import ParseStats, Quarantined
from lassi.core.schemas import BEACON_MDS_OPS, LATENCY_BUCKETS

if TYPE_CHECKING:
    from lassi.core.config import Site

OST_RE = "^" + bl._OST_RE.pattern + "$"
_EPOCH = datetime(1970, 1, 1)
_US = timedelta(microseconds=1)
GAP_US = int(bl.NEWBORN_GAP_S * 1_000_000)


@dataclass(frozen=True)
class Layout:
    """One layer: its fixed-field grammar (`fields`, `names`) or its own (`fast`,
    `finish`), which columns key a series, which are counters (`values` or the items of
    `values_list`; a reset of one resets all), the optional counter kept apart (`aux`) and
    where the deltas go."""

    source: str
    table: str
    fields: tuple[int, ...]
    names: tuple[str, ...]          # base column of each field, in order
    key: tuple[str, ...]
    values: tuple[str, ...]
    deltas: tuple[str, ...]         # the delta column of each value
    line_parser: Callable[[Site | None, str], bl.LineParser]    # (site, file)
    aux: str | None = None
    aux_delta: str | None = None
    name_of: str | None = None      # base column filled with the site's name of `key[0]`
    values_list: str | None = None  # the values are this list column's items instead
                                    # (a row where it is null is no sample: no delta)
    sum_to: str | None = None       # column of the deltas' sum
    delta_list: str | None = None   # column of the deltas as a list
    fast: Callable | None = None    # (Fields, day, site, file) -> (ok, columns): a grammar
    finish: Callable | None = None  # (columns of the fast lines, site, file) -> columns
    newborn: bool = True            # apply_deltas' newborn rule
    extra: Callable | None = None   # (base table) -> extra stats of a parsed file
    parse_file: Callable | None = None   # the whole-file parser (default: beacon_layers')
    block: Callable | None = None   # (bytes of whole lines, day, site, file, schema) ->
                                    # (lines, fast mask, base rows) read from the bytes,
                                    # or None: read as lines (`fast` or `fields`)


OST = Layout("ost", "raw_ost", (8,),
             ("oss", "ts", "ost", "read_rpc", "write_rpc", "pages_per_rpc", "read_bytes",
              "write_bytes"),
             ("oss", "ost"), ("read_rpc", "write_rpc", "read_bytes", "write_bytes"),
             ("read_rpc_delta", "write_rpc_delta", "read_bytes_delta", "write_bytes_delta"),
             lambda site, file: bl.ost_line())
LUSTRE_CLIENT = Layout("lustre-client", "raw_lustre_client", (6, 7),
                       ("ip", "ts", "ost", "read_rpc", "write_rpc", "pages_per_rpc",
                        "rpc_wait_us"),
                       ("ip", "ost"), ("read_rpc", "write_rpc"),
                       ("read_rpc_delta", "write_rpc_delta"),
                       lambda site, file: bl.lustre_client_line(bl.site_names(site)),
                       aux="rpc_wait_us", aux_delta="rpc_wait_us_delta", name_of="fwd")


# --------------------------------------------------------------------------- parsing
def _mds_fast(f: Fields, day: date | None, site: Site | None, file: str
              ) -> tuple[pa.BooleanArray, dict[str, pa.Array]]:
    """An MDS line with every op of BEACON_MDS_OPS once, in that order: `<source> <UTC>
    open=<n> close=<n> ...`, printable fields one space apart, each count of 1-18 digits
    (other orders and missing ops go to the line parser). Checked field by field: one
    RE2 pattern over the whole line cost a third of the parse."""
    ts = utc_micros(f.field(1))
    source = f.field(0)
    ok = all_of(pc.is_valid(ts), on_day(ts, day), pc.ascii_is_printable(f.lines),
                pc.equal(f.n, 2 + len(BEACON_MDS_OPS)), pc.not_equal(source, ""))
    cols = {"source": source, "ts": ts}
    for i, op in enumerate(BEACON_MDS_OPS):
        field = f.field(2 + i)
        count = pc.utf8_slice_codeunits(field, len(op) + 1)
        ok = all_of(ok, pc.starts_with(field, op + "="), pc.ascii_is_decimal(count),
                    pc.less_equal(pc.binary_length(count), 18))
        cols[f"_{op}"] = count
    return ok, cols


def _mds_columns(cols: dict[str, pa.Array], site: Site | None, file: str
                 ) -> dict[str, pa.Array]:
    """The fast MDS lines' base columns: host, source naming and the counters as a list."""
    vals = np.zeros((len(cols["ts"]), len(BEACON_MDS_OPS)), np.int64)
    for j, op in enumerate(BEACON_MDS_OPS):
        vals[:, j] = pc.cast(cols.pop(f"_{op}"), pa.int64()).to_numpy(zero_copy_only=False)
    return _mds_named(cols["source"], cols["ts"], vals, site, file)


def _mds_named(source: pa.Array, ts: pa.Array, counts: np.ndarray, site: Site | None,
               file: str) -> dict[str, pa.Array]:
    """MDS base columns of sources, times and counters (rows x ops): the MDS host, the
    sources' node and kind, the counters as a list."""
    names, fwds = bl.site_names(site), bl.fwd_identities(site)
    enc = pc.dictionary_encode(source)
    keys = enc.dictionary.to_pylist()
    return {
        "source": source, "ts": ts,
        "mds": pa.repeat(pa.scalar(Path(file).parent.name, pa.string()), len(source)),
        "source_node": pc.take(pa.array([names.get(k) or (k if k in fwds else None)
                                         for k in keys], pa.string()), enc.indices),
        "source_kind": pc.take(pa.array([bl.source_kind(k, fwds) for k in keys],
                                        pa.string()), enc.indices),
        "cumulative": pa.ListArray.from_arrays(
            pa.array(np.arange(0, counts.size + 1, len(BEACON_MDS_OPS), dtype=np.int32)),
            pa.array(counts.reshape(-1))),
    }


def _mds_block(data: bytes | bytearray | memoryview, day: date | None, site: Site | None,
               file: str, schema: pa.Schema) -> tuple[int, pa.BooleanArray, pa.Table] | None:
    """A block's MDS lines read from its bytes (`beacon_mds_bytes`): (lines, the fast ones,
    their base rows), or None to read it as lines."""
    got = beacon_mds_bytes.read_block(data, day)
    if got is None:
        return None
    fast = np.zeros(got.lines, bool)
    fast[got.rows] = True
    cols = _mds_named(got.source, pa.array(got.ts, pa.int64()), got.counts, site, file)
    return got.lines, pa.array(fast), _base_rows(cols, got.rows, schema)


def _fast_block(lay: Layout, f: Fields, day: date | None, site: Site | None, file: str,
                schema: pa.Schema) -> tuple[pa.BooleanArray, pa.Table]:
    """The lines of a block the strict grammar covers (mask) and their base rows (the
    layer's columns without deltas, plus `line` = index in the block)."""
    if lay.fast is not None:
        return _table(lay, *lay.fast(f, day, site, file), site, file, schema)
    ok = pc.is_in(f.n, value_set=pa.array(lay.fields, f.n.type))
    cols = {}
    for i, name in enumerate(lay.names):
        arr = f.field(i)
        if name == "ts":
            arr = utc_micros(arr)
            ok = all_of(ok, pc.is_valid(arr), on_day(arr, day))
        elif name == "ost":
            ok = all_of(ok, matches(arr, OST_RE))
        elif i >= 3:
            optional = i >= min(lay.fields)
            good = matches(arr, COUNT_RE)
            ok = all_of(ok, pc.or_(good, pc.is_null(arr)) if optional else good)
        cols[name] = arr
    ok = all_of(ok, matches(f.lines, PRINTABLE_RE))      # printable, one space apart
    return _table(lay, ok, cols, site, file, schema)


def _table(lay: Layout, ok: pa.BooleanArray, cols: dict[str, pa.Array], site: Site | None,
           file: str, schema: pa.Schema) -> tuple[pa.BooleanArray, pa.Table]:
    """The fast lines (`ok`) and their base rows."""
    cols = {k: pc.filter(v, ok) for k, v in cols.items()}
    if lay.name_of:
        cols[lay.name_of] = names_of(cols[lay.key[0]], bl.site_names(site))
    if lay.finish:
        cols = lay.finish(cols, site, file)
    return ok, _base_rows(cols, pc.indices_nonzero(ok), schema)


def _base_rows(cols: dict[str, pa.Array], line: pa.Array | np.ndarray, schema: pa.Schema
               ) -> pa.Table:
    """Base rows of the schema's columns (null where `cols` has none) and `line`."""
    n = len(line)
    out = [pc.cast(cols[fl.name], fl.type) if fl.name in cols else pa.nulls(n, fl.type)
           for fl in schema]
    return pa.Table.from_arrays([*out, pa.array(line, pa.int64())],
                                names=[*schema.names, "line"])


def _base(lay: Layout, path: str | Path, site: Site | None, day: date | None,
          q: list[Quarantined], stats: ParseStats) -> pa.Table:
    """A file's samples as base rows in line order (`line` = line number); bad lines
    quarantined into `q`. NotFast when the file cannot be read to its end."""
    schema = row_schema(lay.table)
    file = str(path)
    parse = lay.line_parser(site, file)
    tables, slow, slow_no = [], [], []
    first = 1
    blocks = parsed_blocks(path, lambda data: _block_rows(lay, data, day, site, file, schema),
                           _pool(), as_lines=False)
    for count, fast, t, lines in blocks:
        tables.append(t.set_column(t.num_columns - 1, "line",
                                   pc.add(t.column("line"), first)))
        stats.lines_read += t.num_rows
        stats.lines_used += t.num_rows
        for line_no, line in slow_lines(lines, fast, first) if lines is not None else ():
            s = bl.judge_line(parse, lay.source, file, line_no, line, day, q, stats)
            if s is not None:
                slow.append(s.row)
                slow_no.append(line_no)
        first += count
    if tables and not slow:             # the blocks' rows are in line order already
        return pa.concat_tables(tables)
    st = rows_table(slow, schema)
    tables.append(st.append_column("line", pa.array(slow_no, pa.int64())))
    out = pa.concat_tables(tables)
    return out.take(pc.sort_indices(out.column("line")))


def _block_rows(lay: Layout, data: bytes | bytearray | memoryview, day: date | None,
                site: Site | None, file: str, schema: pa.Schema
                ) -> tuple[int, pa.BooleanArray, pa.Table, pa.StringArray | None]:
    """A block's line count, fast lines (mask) and their base rows, and its lines when
    some are not fast (else None)."""
    got = lay.block(data, day, site, file, schema) if lay.block else None
    if got is None:
        lines = block_lines(data)
        return len(lines), *_fast_block(lay, Fields(lines), day, site, file, schema), lines
    count, fast, t = got
    return count, fast, t, block_lines(data) if t.num_rows < count else None


@cache
def _pool() -> ThreadPoolExecutor:
    """The process's threads for a file's blocks (READ_THREADS), made at first use (in the
    Python worker, never before its fork): a file alone in its task (a day's one MDS
    file) uses both cores."""
    return ThreadPoolExecutor(READ_THREADS, thread_name_prefix="lassi-blocks")


# --------------------------------------------------------------------------- deltas
@dataclass
class Series:
    """Samples as numpy arrays: series id, time (µs), counters (n x k), the optional aux
    counter (`aux_ok`: present), and the host's last sample time (a seed's `host_ts`)."""

    ids: np.ndarray
    ts: np.ndarray
    values: np.ndarray
    aux: np.ndarray
    aux_ok: np.ndarray
    host_ts: int | None = None


def _key_text(lay: Layout, t: pa.Table) -> pa.Array:
    k = pc.binary_join_element_wise(*[t.column(c) for c in lay.key], "\x1f")
    return k.combine_chunks() if isinstance(k, pa.ChunkedArray) else k


def _series(lay: Layout, t: pa.Table, keys: pa.Array) -> Series:
    """A base table's samples; series ids index `keys` (-1: a key not there)."""
    ids = pc.fill_null(pc.index_in(_key_text(lay, t), value_set=keys), -1)
    vals = np.zeros((t.num_rows, len(lay.deltas)), np.int64)
    if lay.values_list:
        flat = pc.list_flatten(t.column(lay.values_list)).to_numpy(zero_copy_only=False)
        vals[:] = flat.reshape(t.num_rows, len(lay.deltas))
    for j, c in enumerate(lay.values):
        vals[:, j] = t.column(c).to_numpy(zero_copy_only=False)
    if lay.aux:
        col = t.column(lay.aux)
        ok = pc.is_valid(col).to_numpy(zero_copy_only=False)
        aux = pc.fill_null(col, 0).to_numpy(zero_copy_only=False).astype(np.int64)
    else:
        ok, aux = np.zeros(t.num_rows, bool), np.zeros(t.num_rows, np.int64)
    ts = t.column("ts").to_numpy(zero_copy_only=False).astype(np.int64)
    return Series(ids.to_numpy(zero_copy_only=False).astype(np.int64), ts, vals, aux, ok,
                  int(ts.max()) if len(ts) else None)


def _seed_of(lay: Layout, seed: bl.Seed | None, keys: pa.Array) -> Series:
    """A line parser's Seed (last sample per series) as a Series over `keys`."""
    index = {k: i for i, k in enumerate(keys.to_pylist())}
    last = list(seed.last.items()) if seed else []
    ids = np.array([index.get("\x1f".join(k), -1) for k, _ in last], np.int64)
    ts = np.array([int(_us(v[0])) for _, v in last], np.int64)
    vals = np.array([v[1] for _, v in last], np.int64).reshape(len(last), len(lay.deltas))
    aux = np.array([v[2][0] if v[2] else 0 for _, v in last], np.int64)
    ok = np.array([bool(v[2]) for _, v in last], bool)
    host = _us(seed.host_ts) if seed and seed.host_ts else None
    return Series(ids, ts, vals, aux, ok, host)


def _us(t: datetime) -> int:
    """Epoch microseconds of a naive UTC datetime."""
    return int((t - _EPOCH) // _US)


def _last_positions(s: Series) -> np.ndarray:
    """The position of each series' last sample (latest time, then latest line), in
    series id order."""
    order = np.lexsort((np.arange(len(s.ids)), s.ts, s.ids))
    last = np.ones(len(order), bool)
    last[:-1] = s.ids[order][1:] != s.ids[order][:-1]
    return order[last]


def _last_per_series(s: Series) -> dict[int, int]:
    """Series id -> position of its last sample (latest time, then latest line)."""
    at = _last_positions(s)
    return dict(zip(s.ids[at].tolist(), at.tolist(), strict=True))


def series_deltas(s: Series, seed: Series | None, stats: ParseStats, newborn: bool = True
                  ) -> tuple[np.ndarray, ...]:
    """`apply_deltas` for arrays: (delta n x k, has_delta, interval_s (NaN: none), reset,
    aux_delta, aux_delta_ok), in the samples' order; seed ids index the same keys. Each
    sample is compared with the one before it in its series (by time, then line), found
    through one sort of the ids and times: the counters themselves are never reordered."""
    n = len(s.ids)
    order = np.lexsort((np.arange(n), s.ts, s.ids))
    same = s.ids[order][1:] == s.ids[order][:-1]
    prev = np.full(n, -1, np.int64)              # each sample's previous of its series
    prev[order[1:][same]] = order[:-1][same]
    has = prev >= 0
    at = np.maximum(prev, 0)
    vals, ts, aux, aux_ok = s.values, s.ts, s.aux, s.aux_ok
    p_ts, p_vals, p_aux, p_ok = ts[at], vals[at], aux[at], aux_ok[at]
    if seed is not None and len(seed.ids):
        last = _last_per_series(seed)
        for i in np.flatnonzero(~has):
            j = last.get(int(s.ids[i]))
            if j is not None:
                has[i] = True
                p_ts[i], p_vals[i] = seed.ts[j], seed.values[j]
                p_aux[i], p_ok[i] = seed.aux[j], seed.aux_ok[j]
    delta = vals - p_vals
    reset = has & ((np.minimum.reduce(delta, axis=1) < 0) if delta.shape[1]
                   else np.zeros(n, bool))
    delta[reset] = vals[reset]
    interval = np.where(has, (ts - p_ts) / 1e6, np.nan)
    aux_d_ok = has & aux_ok & p_ok & (reset | (aux >= p_aux))
    aux_d = np.where(reset, aux, aux - p_aux)
    stats.counter_resets += int(reset.sum())
    orphans = np.flatnonzero(~has)
    if len(orphans):
        born, got = _previous_ends(ts[orphans], ts, seed, newborn)
        nb = orphans[got]
        has[nb] = True
        delta[nb] = vals[nb]
        interval[nb] = (ts[nb] - born[got]) / 1e6
        aux_d[nb], aux_d_ok[nb] = aux[nb], aux_ok[nb]
        for key, k in (("newborn_series", int(got.sum())),
                       ("first_samples", int((~got).sum()))):
            if k:
                stats.extra[key] = stats.extra.get(key, 0) + k
    return delta, has, interval, reset, aux_d, aux_d_ok & has


def _previous_ends(at: np.ndarray, ts: np.ndarray, seed: Series | None, newborn: bool
                   ) -> tuple[np.ndarray, np.ndarray]:
    """`HostSamples.previous_end` of each time in `at` (µs) and whether it has one (not
    in the host's first sample)."""
    if not newborn:
        return np.zeros(len(at), np.int64), np.zeros(len(at), bool)
    host = [seed.host_ts] if seed is not None and seed.host_ts is not None else []
    times = _distinct(np.concatenate([ts, np.array(host, np.int64)]))
    new = np.ones(len(times), bool)
    new[1:] = np.diff(times) > GAP_US
    starts = times[new]
    ends = times[np.r_[np.flatnonzero(new)[1:] - 1, len(times) - 1]]
    i = np.searchsorted(starts, at, side="right") - 1
    return ends[np.maximum(i - 1, 0)], i > 0


def _distinct(t: np.ndarray) -> np.ndarray:
    """np.unique of times, without a sort when they already ascend (a file's usually do:
    np.unique hashes them, 2-3 ms per 80k)."""
    if len(t) > 1 and (t[1:] >= t[:-1]).all():
        keep = np.ones(len(t), bool)
        keep[1:] = t[1:] != t[:-1]
        return t[keep]
    return np.unique(t)


# --------------------------------------------------------------------------- files
def _seed(lay: Layout, prev: str | Path | None, site: Site | None, keys: pa.Array,
          stats: ParseStats) -> Series | None:
    """The previous day's samples (bad lines skipped silently), ids over `keys`."""
    if prev is None:
        return None
    stats.extra["seed_files"] = stats.extra.get("seed_files", 0) + 1
    try:
        s = _series(lay, _samples(lay, _base(lay, prev, site, None, [],
                                             ParseStats(lay.source))), keys)
    except NotFast:
        stats.extra["seed_read_errors"] = stats.extra.get("seed_read_errors", 0) + 1
        seed = bl.read_seed(prev, lay.source, lay.line_parser(site, str(prev)),
                            ParseStats(lay.source))
        return _seed_of(lay, seed, keys)
    keep = s.ids >= 0
    return Series(s.ids[keep], s.ts[keep], s.values[keep], s.aux[keep], s.aux_ok[keep],
                  s.host_ts)


def _stored_seed(lay: Layout, store: SeedStore, prev: str | Path, keys: pa.Array,
                 stats: ParseStats) -> Series | None:
    """The previous day's seed from the store (as `_seed` parses it), or None (also for
    a seed of another number of counters, stored before an upgrade)."""
    got = store.load(prev)
    if got is None or got.values.shape[1] != len(lay.deltas):
        return None
    stats.extra["seed_files"] = stats.extra.get("seed_files", 0) + 1
    ids = key_ids(got, keys)
    keep = ids >= 0
    return Series(ids[keep], got.ts[keep], got.values[keep], got.aux[keep],
                  got.aux_ok[keep], got.host_ts)


def _store_seed(store: SeedStore, path: str | Path, s: Series, keys: pa.Array,
                stats: ParseStats) -> None:
    """Keep the file's last sample per series for the next day, when no line was
    quarantined (then the day's samples are all the file's: beacon_seeds)."""
    if stats.lines_quarantined:
        store.drop(path)
        return
    at = _last_positions(s)
    store.save(path, Seed(keys.take(pa.array(s.ids[at])), s.ts[at], s.values[at], s.aux[at],
                          s.aux_ok[at], s.host_ts))


def _samples(lay: Layout, t: pa.Table) -> pa.Table:
    """The rows that are samples of a series (all, unless `values_list` is null)."""
    if lay.values_list and t.column(lay.values_list).null_count:
        return t.filter(pc.is_valid(t.column(lay.values_list)))
    return t


def _scatter(values: np.ndarray, at: np.ndarray, n: int, fill=0) -> np.ndarray:
    """`values` (one per sample) placed at rows `at` of n rows."""
    out = np.full((n, *values.shape[1:]), fill, dtype=values.dtype)
    out[at] = values
    return out


def parse_arrow(lay: Layout, path: str | Path, site: Site | None = None,
                prev: str | Path | None = None, day: date | None = None,
                seeds: SeedStore | None = None
                ) -> tuple[pa.Table, list[Quarantined], ParseStats]:
    """One file of the layer as an Arrow table of `row_schema(lay.table)`: the rows of the
    layer's whole-file parser (`lay.parse_file`). With `seeds`, the previous day's seed
    comes from that store when it holds one, and this file's is stored there."""
    schema = row_schema(lay.table)
    stats = ParseStats(lay.source, files=1)
    q: list[Quarantined] = []
    try:
        base = _base(lay, path, site, day, q, stats)
    except NotFast:
        rows, q, stats = (lay.parse_file or bl.PARSERS[lay.source])(path, site, prev, day)
        return rows_table(rows, schema), q, stats
    n = base.num_rows
    gaps = lay.values_list is not None and base.column(lay.values_list).null_count > 0
    at = (pc.indices_nonzero(pc.is_valid(base.column(lay.values_list))).to_numpy()
          if gaps else np.arange(n))
    samples = base.take(at) if gaps else base          # the rows that are samples
    keys = pc.unique(_key_text(lay, samples))
    s = _series(lay, samples, keys)
    seed = _stored_seed(lay, seeds, prev, keys, stats) if seeds and prev else None
    if seed is None:
        seed = _seed(lay, prev, site, keys, stats)
    if seeds is not None:
        _store_seed(seeds, path, s, keys, stats)
    found = series_deltas(s, seed, stats, lay.newborn)      # per sample; rows that are no
    delta, has, interval, reset, aux_d, aux_ok = (           # sample get none
        _scatter(a, at, n, np.nan if i == 2 else 0) if gaps else a
        for i, a in enumerate(found))
    cols = {c: base.column(c) for c in schema.names}
    for j, c in enumerate(lay.deltas):
        cols[c] = pa.array(delta[:, j], pa.int64(), mask=~has)
    if lay.sum_to:
        cols[lay.sum_to] = pa.array(delta.sum(axis=1), pa.int64(), mask=~has)
    if lay.delta_list:
        k = len(lay.deltas)
        cols[lay.delta_list] = pa.ListArray.from_arrays(
            pa.array(np.arange(0, n * k + 1, k, dtype=np.int32)), pa.array(delta.reshape(-1)),
            mask=pa.array(~has))
    if "interval_s" in cols:
        cols["interval_s"] = pa.array(interval, pa.float64(), mask=np.isnan(interval))
    cols["reset"] = pa.array(reset, pa.bool_())
    if lay.aux_delta:
        cols[lay.aux_delta] = pa.array(aux_d, pa.int64(), mask=~aux_ok)
    cols["file"] = pa.repeat(pa.scalar(str(path), pa.string()), n)
    if lay.extra:
        stats.extra.update(lay.extra(base))
    out = pa.Table.from_arrays([pc.cast(cols[f.name], f.type) for f in schema], schema=schema)
    stats.rows = out.num_rows
    return out, q, stats


MDS = Layout("mds", "raw_mds", (), (), ("mds", "source"), (), tuple(BEACON_MDS_OPS),
             lambda site, file: bl.mds_line(Path(file).parent.name, bl.site_names(site),
                                            bl.fwd_identities(site)),
             values_list="cumulative", sum_to="ops", fast=_mds_fast, finish=_mds_columns,
             block=_mds_block)


def parse_mds_arrow(path: str | Path, site: Site | None = None,
                    prev: str | Path | None = None, day: date | None = None,
                    seeds: SeedStore | None = None):
    """`beacon_layers.parse_mds`, columnar (an Arrow table of `raw_mds` rows; the MDS is
    the host folder's name)."""
    return parse_arrow(MDS, path, site, prev, day, seeds)


# --------------------------------------------------------------------------- LWFS server
_LWFS_RE = (r"^[!-~]+ \[[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\]  \[Trace\]: "
            r"(?:(?:Meta|Read|Write) (?:exe|wait):(?: [0-9]{1,18}){" + str(LATENCY_BUCKETS) +
            r"}|queue length: [0-9]{1,18}) [!-~]+$")


def _zone(site: Site | None) -> ZoneInfo:
    return ZoneInfo(site.tz("beacon_local") if site is not None else "UTC")


def _lwfs_fast(f: Fields, day: date | None, site: Site | None, file: str
               ) -> tuple[pa.BooleanArray, dict[str, pa.Array]]:
    """An LWFS server line exactly as Beacon writes it (the real sample's spacing), whose
    local time names the same instant as its UTC time in the site's `beacon_local` zone."""
    hist = pc.equal(f.n, 8 + LATENCY_BUCKETS)
    utc = utc_micros(when(hist, f.field(7 + LATENCY_BUCKETS), f.field(8)))
    local_text = pc.binary_join_element_wise(
        pc.utf8_slice_codeunits(f.field(1), 1), pc.utf8_slice_codeunits(f.field(2), 0, 8), " ")
    local, agree = _local_times(local_text, utc, _zone(site))
    ok = all_of(matches(f.lines, _LWFS_RE), pc.is_valid(utc), on_day(utc, day), agree)
    counts = [f.field(7 + i) for i in range(LATENCY_BUCKETS)]
    return ok, {"ip": f.field(0), "ts": utc, "local_ts": local, "_hist": hist,
                "_cls": f.field(5), "_kind": pc.utf8_rtrim(f.field(6), ":"),
                "_queue": f.field(7), **{f"_h{i}": c for i, c in enumerate(counts)}}


def _local_times(text: pa.Array, utc: pa.Array, tz: ZoneInfo
                 ) -> tuple[pa.Array, pa.BooleanArray]:
    """Epoch microseconds of `YYYY-MM-DD HH:MM:SS` local wall times (as written, null where
    no such date exists or the line has no such fields) and `lwfs_server.local_matches` of
    every line: each distinct local time is read once, and the UTC offsets (either fold)
    once per distinct day."""
    enc = pc.dictionary_encode(text)
    keys = enc.dictionary
    if len(keys) == 0:                                  # no line has the fields
        return pa.nulls(len(text), pa.int64()), pa.array(np.zeros(len(text), bool))
    iso = pc.binary_join_element_wise(pc.replace_substring(keys, " ", "T", max_replacements=1),
                                      pa.scalar("Z"), "")    # read as UTC: the wall time
    as_utc = utc_micros(iso)
    valid = pc.is_valid(as_utc).to_numpy(zero_copy_only=False)
    us = pc.fill_null(as_utc, 0).to_numpy(zero_copy_only=False).astype(np.int64)
    offs = fold_offsets(us, valid, tz)
    idx = pc.fill_null(enc.indices, 0).to_numpy(zero_copy_only=False)
    lo, ut = us[idx], pc.fill_null(utc, 0).to_numpy(zero_copy_only=False)
    low, high = -int(lwfs_server.MAX_SKEW_S * 1e6), int((1.0 + lwfs_server.MAX_SKEW_S) * 1e6)
    ok = valid[idx] & pc.is_valid(enc.indices).to_numpy(zero_copy_only=False)
    match = np.zeros(len(idx), bool)
    for fold in (0, 1):
        skew = ut - (lo - offs[idx, fold])
        match |= (skew >= low) & (skew < high)
    return pa.array(lo, pa.int64(), mask=~ok), pa.array(ok & match)


def _lwfs_columns(cols: dict[str, pa.Array], site: Site | None, file: str
                  ) -> dict[str, pa.Array]:
    """The fast LWFS server lines' base columns: class and kind, histogram or queue."""
    hist = cols.pop("_hist")
    n = len(hist)
    cols["fwd"] = names_of(cols["ip"], bl.site_names(site))
    cols["op_class"] = when(hist, cols.pop("_cls"), "Queue")
    cols["kind"] = when(hist, cols.pop("_kind"), "length")
    queue = cols.pop("_queue")
    cols["queue_len"] = when(hist, pa.scalar(None, pa.int64()), pc.cast(queue, pa.int64()))
    vals = np.zeros((n, LATENCY_BUCKETS), np.int64)
    for i in range(LATENCY_BUCKETS):
        c = cols.pop(f"_h{i}")
        vals[:, i] = pc.cast(when(hist, c, "0"), pa.int64()).to_numpy(zero_copy_only=False)
    cols["hist"] = pa.ListArray.from_arrays(
        pa.array(np.arange(0, vals.size + 1, LATENCY_BUCKETS, dtype=np.int32)),
        pa.array(vals.reshape(-1)), mask=pc.invert(hist))
    return cols


def _queue_lines(base: pa.Table) -> dict[str, int]:
    return {"queue_lines": base.num_rows - pc.sum(pc.is_valid(base.column("hist"))).as_py()
            if base.num_rows else 0}


LWFS_SERVER = Layout(
    "lwfs-server", "raw_lwfs_server", (), (), ("ip", "op_class", "kind"), (),
    tuple(f"h{i}" for i in range(LATENCY_BUCKETS)),
    lambda site, file: lwfs_server.line_parser(bl.site_names(site), _zone(site)),
    values_list="hist", delta_list="hist_delta", sum_to="requests", fast=_lwfs_fast,
    finish=_lwfs_columns, newborn=False, extra=_queue_lines,
    parse_file=lambda path, site, prev, day: lwfs_server.parse_file(path, site, prev, day))


def parse_lwfs_server_arrow(path: str | Path, site: Site | None = None,
                            prev: str | Path | None = None, day: date | None = None,
                            seeds: SeedStore | None = None):
    """`lwfs_server.parse_file`, columnar (an Arrow table of `raw_lwfs_server` rows)."""
    return parse_arrow(LWFS_SERVER, path, site, prev, day, seeds)


def parse_ost_arrow(path: str | Path, site: Site | None = None,
                    prev: str | Path | None = None, day: date | None = None,
                    seeds: SeedStore | None = None):
    """`beacon_layers.parse_ost`, columnar (an Arrow table of `raw_ost` rows)."""
    return parse_arrow(OST, path, site, prev, day, seeds)


def parse_lustre_client_arrow(path: str | Path, site: Site | None = None,
                              prev: str | Path | None = None, day: date | None = None,
                              seeds: SeedStore | None = None):
    """`beacon_layers.parse_lustre_client`, columnar (an Arrow table of `raw_lustre_client`
    rows)."""
    return parse_arrow(LUSTRE_CLIENT, path, site, prev, day, seeds)


# the counter layers by source name
LAYOUTS = {lay.source: lay for lay in (OST, LUSTRE_CLIENT, MDS, LWFS_SERVER)}
