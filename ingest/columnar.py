"""Columnar line parsing: the fast path of the big text sources (pyarrow, no Python object
per field).

A file is read in large blocks (gzip transparently, universal newlines as `open_text`),
split into lines and then into space-separated fields as Arrow arrays; a source checks
every field of every line at once against a strict grammar (RE2 patterns, no captures)
and converts the fields that pass with Arrow casts. A line the strict grammar does not
cover goes through the source's exact line parser (the reference, which also gives the
quarantine reason), so the result equals the line-by-line parse: the fast path only ever
takes lines whose values it computes identically. A file that cannot be read to its end
(truncated gzip) is left to the line-by-line parser as a whole.
"""

from __future__ import annotations

import datetime as dt
import io
import mmap
import os
import stat
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timedelta
from pathlib import Path
from typing import TypeVar
from zoneinfo import ZoneInfo

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from lassi.ingest.arrow_bytes import first_bytes
from lassi.ingest.heap import keep_freed_heap
from lassi.ingest.iso_times import iso_at, read_iso

from lassi.core.schemas import schema_of
from lassi.core.textio import open_bytes

_US = timedelta(microseconds=1)
T = TypeVar("T")
READ_THREADS = 2               # blocks parsed at once by the driver-side column-wise readers
BLOCK_CHARS = 1 << 24          # bytes read per block (bounded memory per file)
MIN_BLOCK_CHARS = 1 << 20      # smaller blocks than this would cost more than they share
# blocks read beyond those being parsed: a thread that finishes finds its next block read
READ_AHEAD = 1
COUNT_RE = r"^[0-9]{1,18}$"      # 18 digits always fit a LongType
_YEAR_1900 = -2_208_988_800 * 1_000_000   # 1900-01-01 and 2201-01-01 UTC, epoch µs
_YEAR_2201 = 7_289_654_400 * 1_000_000
PRINTABLE_RE = r"^[!-~]+(?: [!-~]+)*$"   # printable ASCII fields, one space apart


class NotFast(Exception):
    """The fast path cannot take this file (the caller parses it line by line)."""


def line_blocks(path: str | Path, block_chars: int | None = None
                ) -> Iterator[pa.StringArray]:
    """The file's lines (no line ends) as Arrow strings, in blocks of about `block_chars`
    (default BLOCK_CHARS) bytes: the lines `open_text` gives (universal newlines,
    undecodable bytes replaced).

    Raises NotFast when the file cannot be read to its end."""
    for data in raw_blocks(path, block_chars):
        yield block_lines(data)


def raw_blocks(path: str | Path, block_chars: int | None = None
               ) -> Iterator[bytearray | memoryview]:
    """The file's bytes (gzip decompressed) in blocks of whole lines of about
    `block_chars` (default BLOCK_CHARS) bytes, the last block's end as the file's.

    A plain file's blocks are memoryviews of a memory map of just that block (no copy:
    reading a 15 MB block into a buffer cost 14 ms of a core, twice what splitting it
    into lines costs), unmapped when nothing refers to them any more (pipes, devices and
    filesystems that map nothing are read as gzip files are); a block with a
    carriage return is copied into a bytearray instead, so a memoryview block never holds
    one (`has_carriage_return`). A raw file must not shrink while it is read: the
    operating system ends a process that touches a mapped page past a file's end (SIGBUS);
    growing, as a log being written does, is safe (the blocks end where the file did).
    A gzip file's blocks are read into their own buffers, which `block_lines` then splits
    without a copy (a slice of a `bytes` would copy every block once more, twice with the
    carry).

    Raises NotFast when the file cannot be read to its end."""
    size = block_chars or BLOCK_CHARS
    keep_freed_heap()                  # the blocks' numpy arrays reuse the pages freed
    try:
        with open_bytes(path) as fh:
            if isinstance(fh, io.BufferedReader) and _mappable(fh):
                yield from _mapped_blocks(fh, size)
            else:
                yield from _read_blocks(fh, size)
    except (OSError, EOFError, ValueError, zlib.error) as exc:
        raise NotFast(f"{type(exc).__name__}: {exc}") from exc


def _mappable(fh: io.BufferedReader) -> bool:
    """Whether the open file can be mapped: a regular file (not a pipe or a device, whose
    size says nothing of what a read gives) on a filesystem that maps files."""
    st = os.fstat(fh.fileno())
    if not stat.S_ISREG(st.st_mode):
        return False
    if not st.st_size:
        return True                                # nothing to map, nothing to read
    try:
        mmap.mmap(fh.fileno(), 1, access=mmap.ACCESS_READ).close()
    except (OSError, ValueError):
        return False
    return True


def _mapped_blocks(fh: io.BufferedReader, size: int) -> Iterator[bytearray | memoryview]:
    """Blocks of whole lines of a plain file, each mapped on its own (`raw_blocks`): block
    k ends at the last line end before (k + 1) * size (no drift: a file of n sizes is n
    blocks), or, when none is after the block's start, at the last before a map of one
    more size."""
    total = os.fstat(fh.fileno()).st_size
    start, k = 0, 1
    while start < total:
        base = start - start % mmap.ALLOCATIONGRANULARITY
        want = min(total, max(k * size, start + 1))
        while True:
            mm = mmap.mmap(fh.fileno(), want - base, access=mmap.ACCESS_READ, offset=base)
            end = total if want == total else mm.rfind(b"\n", start - base) + 1 + base
            if end > start:
                break
            want = min(total, want + size)       # no line end yet: a longer map
        view = memoryview(mm)[start - base:end - base]
        yield view if mm.find(b"\r", start - base, end - base) < 0 else bytearray(view)
        start, k = end, max(k + 1, -(-end // size))


def _read_blocks(fh, size: int) -> Iterator[bytearray]:
    """Blocks of whole lines read into their own buffers (`raw_blocks`)."""
    carry = b""                        # bytes after the last line end so far
    while True:
        buf = bytearray(len(carry) + size)
        buf[:len(carry)] = carry
        n = len(carry) + _read_into(fh, memoryview(buf)[len(carry):])
        if n == len(carry):
            break
        end = buf.rfind(b"\n", 0, n)
        if end < 0:
            carry = bytes(buf[:n])
            continue
        carry = bytes(buf[end + 1:n])
        del buf[end + 1:]
        yield buf
    if carry:
        yield bytearray(carry)


def _read_into(fh, view: memoryview) -> int:
    """Bytes read into the view until it is full or the file ends."""
    got = 0
    while got < len(view) and (k := fh.readinto(view[got:])):
        got += k
    return got


def block_lines(data: bytes | bytearray | memoryview) -> pa.StringArray:
    """The lines of whole lines' bytes (one line end at the end dropped), as `open_text`
    reads them; valid UTF-8 without a carriage return is split without a copy to Python."""
    if not has_carriage_return(data):
        text = pa.StringArray.from_buffers(
            1, pa.py_buffer(np.array([0, len(data)], np.int32)), pa.py_buffer(data))
        try:
            text.validate(full=True)            # UTF-8 checked by Arrow
        except pa.ArrowInvalid:
            text = None
    else:
        text = None
    if text is None:                            # decoded and translated as open_text does
        s = bytes(data).decode("utf-8", "replace").replace("\r\n", "\n").replace("\r", "\n")
        text = pa.array([s], pa.string())
    lines = pc.split_pattern(text, "\n").flatten()
    if len(lines) > 1 and lines[-1].as_py() == "" and _ends_line(data):
        lines = lines.slice(0, len(lines) - 1)
    return lines


def _ends_line(data: bytes | bytearray | memoryview) -> bool:
    """True when the bytes end with a line end (the empty piece after it is no line)."""
    return len(data) > 0 and data[-1] in (10, 13)


def has_carriage_return(data: bytes | bytearray | memoryview) -> bool:
    """Whether a block of `raw_blocks` holds a carriage return (a memoryview never does)."""
    return not isinstance(data, memoryview) and b"\r" in data


def balanced_block_chars(path: str | Path) -> int:
    """A block size that cuts the file into a multiple of READ_THREADS blocks of about
    equal size, none over BLOCK_CHARS (a 20 MB file: two of 10 MB, not 16 and 4, which
    leave one thread idle for most of the read) and none under MIN_BLOCK_CHARS unless
    BLOCK_CHARS is. A compressed file's blocks come out smaller than that (its size on
    disk is less than its text)."""
    try:
        size = Path(path).stat().st_size
    except OSError:
        return BLOCK_CHARS
    blocks = -(-max(size, 1) // BLOCK_CHARS)
    blocks = -(-blocks // READ_THREADS) * READ_THREADS
    return min(BLOCK_CHARS, max(MIN_BLOCK_CHARS, -(-size // blocks)))


def parsed_blocks(path: str | Path, parse: Callable[[pa.StringArray], T],
                  pool: ThreadPoolExecutor, as_lines: bool = True) -> list[T]:
    """`parse` of each block of the file's lines (or, not `as_lines`, of its bytes), in
    order, READ_THREADS blocks at once (Arrow's kernels and numpy's run outside the GIL),
    READ_AHEAD more read and waiting (else each thread waited for the main thread to read
    its next block: 12-17 ms of idle threads per block on the PBS site-scale file).
    NotFast when the file cannot be read to its end."""
    ahead: deque[Future] = deque()
    out = []
    for data in raw_blocks(path, balanced_block_chars(path)):   # split in the pool too
        ahead.append(pool.submit(lambda d: parse(block_lines(d) if as_lines else d), data))
        if len(ahead) >= READ_THREADS + READ_AHEAD:
            out.append(ahead.popleft().result())
    out += [f.result() for f in ahead]
    return out


class Fields:
    """A block of lines split at single spaces (`runs`: at runs of whitespace, for grammars
    that allow no leading or trailing space): `field(i)` is the i-th field of every line,
    `i` a number or one position per line (null where a line has fewer), `n` the field
    counts, `flat` all fields in order, `start` each line's first in `flat`, `parent`
    each field's line (numpy)."""

    def __init__(self, lines: pa.StringArray, runs: bool = False) -> None:
        self.lines = lines
        self.lists = pc.ascii_split_whitespace(lines) if runs else pc.split_pattern(lines, " ")
        self.n = pc.list_value_length(self.lists)
        self.flat = self.lists.flatten()
        self.start = self.lists.offsets.slice(0, len(self.lists)).cast(pa.int64())

    def field(self, i: int | pa.Array) -> pa.Array:
        idx = pc.if_else(pc.greater(self.n, i), pc.add(self.start, i),
                         pa.scalar(None, pa.int64()))
        return pc.take(self.flat, idx)

    @property
    def parent(self) -> np.ndarray:
        return np.asarray(pc.list_parent_indices(self.lists))


def list_item(lists: pa.Array, i: int) -> pa.Array:
    """The i-th item of each list (null where a list is shorter or null)."""
    offsets = np.asarray(lists.offsets)
    first = offsets[:-1] + i
    missing = first >= offsets[1:]
    if lists.null_count:
        missing |= ~np.asarray(lists.is_valid())
    values = lists.values                     # flatten() drops null lists' items: not here
    return values.take(pa.array(first, mask=missing if missing.any() else None))


def int_list_pattern(digits: int) -> str:
    """A comma list of integers and ranges of them (`8-10,12`), each of 1-`digits` digits."""
    one = f"[0-9]{{1,{digits}}}(?:-[0-9]{{1,{digits}}})?"
    return f"^{one}(?:,{one})*$"


def int_ranges(text: pa.Array, digits: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The values of `text` that are such lists (`int_list_pattern`; ALPS nid lists, Torque
    core lists): their positions, and per range its owner (a position), low and high ends
    (a single number is a range of one; a descending range is left for the caller)."""
    rows = np.flatnonzero(np.asarray(matches(text, int_list_pattern(digits))))
    items = pc.split_pattern(text.take(pa.array(rows)), ",")
    owner = rows[np.asarray(pc.list_parent_indices(items))]
    bounds = pc.split_pattern(items.flatten(), "-")
    lo = np.asarray(pc.cast(list_item(bounds, 0), pa.int64()))
    hi = np.asarray(pc.cast(pc.coalesce(list_item(bounds, 1), list_item(bounds, 0)), pa.int64()))
    return rows, owner, lo, hi


def matches(arr: pa.Array, pattern: str) -> pa.BooleanArray:
    """True where the value matches the (anchored) RE2 pattern; False for nulls."""
    return pc.fill_null(pc.match_substring_regex(arr, pattern), False)


def utc_micros(text: pa.Array) -> pa.Array:
    """Epoch microseconds of `YYYY-MM-DDTHH:MM:SS[.fff|.ffffff]Z` strings, null where the
    text is not one or names no real instant (Feb 30, 24:00, a leap second, year 0), read
    from the bytes with numpy (`iso_times`).

    A distinct text is converted once when most repeat (a counter layer's series share
    their sample times: 4,757 distinct times in a block of 212k Lustre client lines)."""
    enc = pc.dictionary_encode(text)
    if len(enc.dictionary) * 2 > len(text):
        return _utc_micros(text)
    return pc.take(_utc_micros(enc.dictionary), enc.indices)


def _utc_micros(text: pa.Array) -> pa.Array:
    iso = read_iso(text)
    ok = iso.ok & (iso.zone == 1) & ~iso.spaced
    return pa.array(iso.wall, pa.int64(), mask=~ok)


def utc_micros_at(raw: np.ndarray, starts: np.ndarray, lengths: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """`utc_micros` of the texts `raw[starts[i]:starts[i] + lengths[i]]`: (epoch µs, where
    the text is such a time)."""
    iso = iso_at(raw, starts, lengths)
    return iso.wall, iso.ok & (iso.zone == 1) & ~iso.spaced


def on_day_micros(micros: np.ndarray, day: dt.date | None) -> np.ndarray:
    """`on_day` of epoch microseconds in numpy."""
    if day is None:
        return np.ones(len(micros), bool)
    return np.floor_divide(micros, 86_400_000_000) == (day - dt.date(1970, 1, 1)).days


def _offsets(t: datetime, tz: ZoneInfo) -> tuple[int, int]:
    """The UTC offsets (µs) of a local wall time, fold 0 and fold 1."""
    return tuple((t.replace(fold=fold, tzinfo=tz).utcoffset() or timedelta(0)) // _US
                 for fold in (0, 1))


def fold_offsets(wall: np.ndarray, valid: np.ndarray, tz: ZoneInfo) -> np.ndarray:
    """The (fold 0, fold 1) UTC offsets in µs of each valid local wall time, given as
    epoch microseconds read as if UTC (a fraction of a second is ignored): per distinct
    day when its first and last seconds have the same (a zone's offsets change at its
    transitions only, and no zone of the tz database has two within four days: a test
    checks), else per distinct minute, else per second (`_minute_offsets`, from text)."""
    wall = wall - wall % 1_000_000
    day = np.where(valid, np.floor_divide(wall, 86_400_000_000), 0)
    low = int(day.min(initial=0))
    days, at = dense_codes(day - low)                  # a few days: no sort
    days = days + low
    per_day = np.zeros((len(days), 2), np.int64)
    whole = np.zeros(len(days), bool)
    for j, d in enumerate(days.tolist()):
        first = datetime(1970, 1, 1) + timedelta(days=d)
        a = _offsets(first, tz)
        if a == _offsets(first.replace(hour=23, minute=59, second=59), tz):
            per_day[j], whole[j] = a, True
    offs = per_day[at]
    rest = np.flatnonzero(valid & ~whole[at])
    if len(rest):
        text = np.char.replace(np.datetime_as_string(wall[rest].astype("datetime64[us]"),
                                                     unit="s"), "T", " ")
        offs[rest] = _minute_offsets(pa.array(text.tolist(), pa.string()), tz)
    return offs


def _minute_offsets(keys: pa.Array, tz: ZoneInfo) -> np.ndarray:
    """`fold_offsets` of valid local times per distinct minute when its first and last
    seconds have the same, else per second."""
    minutes = pc.dictionary_encode(pc.utf8_slice_codeunits(keys, 0, 16))
    per_minute = np.zeros((len(minutes.dictionary), 2), np.int64)
    whole = np.zeros(len(minutes.dictionary), bool)
    for j, m in enumerate(minutes.dictionary.to_pylist()):
        first = datetime(int(m[:4]), int(m[5:7]), int(m[8:10]), int(m[11:13]), int(m[14:16]))
        a, b = _offsets(first, tz), _offsets(first.replace(second=59), tz)
        if a == b:
            per_minute[j], whole[j] = a, True
    at = minutes.indices.to_numpy(zero_copy_only=False)
    offs = per_minute[at]
    for i in np.flatnonzero(~whole[at]):
        v = keys[int(i)].as_py()
        offs[i] = _offsets(datetime.strptime(v, "%Y-%m-%d %H:%M:%S"), tz)
    return offs


def iso_micros(text: pa.Array, tz: str) -> tuple[pa.Array, pa.Array]:
    """`alps.parse_time` of ISO-8601 texts (`T` or a space between date and time; `.fff`
    or `.ffffff`; `Z`, `+HH:MM`, `-HH:MM` or no offset: local in `tz`, fold 0) as UTC
    epoch microseconds, and where this reading is exact: years 1900-2200 (other texts:
    the caller's line parser)."""
    iso = read_iso(text)
    ok = iso.ok & in_years(iso.wall)
    utc = iso.wall - iso.offset * 1_000_000
    local = np.flatnonzero(ok & (iso.zone == 0))
    if tz != "UTC" and len(local):
        utc[local] -= fold_offsets(iso.wall[local], np.ones(len(local), bool),
                                   ZoneInfo(tz))[:, 0]
    return pa.array(utc, pa.int64()), pa.array(ok)


_INT_RE = r"^ *(?P<i>-?[0-9]{1,9})(?:[^0-9]|$)"     # alps.to_int within 9 digits
_LONG_INT_RE = r"^ *-?[0-9]{10}"


def dense_codes(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(values, return_inverse=True) of non-negative ints (distinct values and
    each value's index among them); by a table of flags when they are small (nids, a
    machine's name patterns), which needs no sort."""
    top = int(values.max(initial=-1)) + 1
    if top > 4 * len(values) + (1 << 16):
        uniq, inverse = np.unique(values, return_inverse=True)
        return uniq, inverse.astype(np.int64)
    present = np.zeros(top, bool)
    present[values] = True
    return np.flatnonzero(present), (np.cumsum(present) - 1)[values]


def take_ascending(table: pa.Table, at: np.ndarray, pool: ThreadPoolExecutor) -> pa.Table:
    """The rows at ascending positions `at`, taken chunk by chunk on the pool's threads:
    Arrow's take of a chunked column joins its chunks first (a copy of the whole column,
    node lists and all). The columns chunked as the first one is go together; the others
    (a column rebuilt whole) are taken whole."""
    first = table.column(0)
    lens = [len(c) for c in first.chunks]
    bounds = np.cumsum([0, *lens])
    cut = np.searchsorted(at, bounds)
    local = [pa.array(at[cut[k]:cut[k + 1]] - bounds[k]) for k in range(len(lens))]
    same = [name for name in table.column_names
            if [len(c) for c in table.column(name).chunks] == lens]
    parts = list(pool.map(lambda k: [table.column(name).chunk(k).take(local[k])
                                     for name in same], range(len(lens))))
    out = {name: pa.chunked_array([p[i] for p in parts], table.schema.field(name).type)
           for i, name in enumerate(same)}
    whole = pa.array(at)
    return pa.table({name: out[name] if name in out else table.column(name).take(whole)
                     for name in table.column_names})


def kept_rows(keep: pa.Array, n: int) -> Callable[[pa.Array], pa.Array]:
    """The rows at `keep` (ascending indices into n rows) of an array: the array itself,
    not a copy, when every row is kept (a block of usual lines)."""
    if len(keep) == n:
        return lambda values: values
    return lambda values: values.take(keep)


def leading_ints(text: pa.Array) -> tuple[pa.Array, pa.Array]:
    """`alps.to_int` of each value (its leading integer after spaces; null when absent or
    without one) and where this reading cannot say (10 digits or more). Values of 1-9
    digits alone (most) are cast; RE2 reads the others (on these short values it beats
    numpy on their bytes: 3.9 against 6.3 ms per 48k)."""
    plain = pc.fill_null(pc.and_(pc.ascii_is_decimal(text),
                                 pc.less_equal(pc.binary_length(text), 9)), False)
    ints = pc.cast(pc.if_else(plain, text, None), pa.int64())
    rest = pc.and_(pc.invert(plain), pc.is_valid(text))
    longer = pc.and_(plain, False)                               # all False, no nulls
    if pc.any(rest).as_py():
        other = text.filter(rest)
        digits = pc.extract_regex(other, _INT_RE).flatten()[0]   # null where no match
        ints = pc.replace_with_mask(ints, rest, pc.cast(digits, pa.int64()))
        longer = pc.replace_with_mask(longer, rest, matches(other, _LONG_INT_RE))
    return ints, longer


def in_years(wall: np.ndarray) -> np.ndarray:
    """Where epoch microseconds fall in the years 1900-2200 (the columnar readers' range
    for local times; the line parsers read the others)."""
    return (wall >= _YEAR_1900) & (wall < _YEAR_2201)


def utc_timestamps(micros: pa.Array) -> pa.Array:
    """Epoch microseconds as UTC timestamps (app_run's `start` and `end`)."""
    return micros.cast(pa.timestamp("us")).cast(pa.timestamp("us", tz="UTC"))


def nonempty(v: pa.Array) -> pa.Array:
    """v where it is a non-empty text, else null."""
    return when(pc.not_equal(v, ""), v, pa.scalar(None, pa.string()))


def blank_lines(lines: pa.StringArray, chars: str = " ") -> pa.BooleanArray:
    """Per line, whether it holds nothing but `chars` (`utf8_trim(lines, chars) == ""`):
    only the lines that start with one of them are trimmed, not the whole block."""
    if lines.null_count or not pa.types.is_string(lines.type):
        return pc.equal(pc.utf8_trim(lines, chars), "")
    filled, first = first_bytes(lines)
    out = np.ones(len(lines), bool)
    out[filled] = False
    maybe = filled[np.isin(first, np.frombuffer(chars.encode(), np.uint8))]
    if len(maybe):
        trimmed = pc.utf8_trim(lines.take(pa.array(maybe)), chars)
        out[maybe] = np.asarray(pc.equal(trimmed, ""))
    return pa.array(out)


def utc_day(micros: pa.Array) -> pa.Array:
    """The UTC date of epoch microseconds."""
    return pc.cast(pc.cast(micros, pa.timestamp("us")), pa.date32())


def on_day(micros: pa.Array, day: dt.date | None) -> pa.BooleanArray:
    """True where the time falls on `day` (all True without a day)."""
    if day is None:
        return pc.is_valid(micros)
    return pc.fill_null(pc.equal(utc_day(micros), pa.scalar(day, pa.date32())), False)


def names_of(keys: pa.Array, names: dict[str, str]) -> pa.Array:
    """keys mapped through `names` (null where unknown), one dictionary lookup per distinct
    key."""
    enc = keys.dictionary_encode()
    mapped = pa.array([names.get(k) for k in enc.dictionary.to_pylist()], pa.string())
    return pc.take(mapped, enc.indices)


def row_schema(table: str) -> pa.Schema:
    """A warehouse table's columns as parsers hand them over: no `date`, timestamps as
    epoch microseconds (int64), every column nullable."""
    from pyspark.sql.pandas.types import to_arrow_type
    from pyspark.sql.types import TimestampType

    return pa.schema([pa.field(f.name, pa.int64() if isinstance(f.dataType, TimestampType)
                               else to_arrow_type(f.dataType))
                      for f in schema_of(table).fields if f.name != "date"])


def table_schema(table: str) -> pa.Schema:
    """A warehouse table's columns but `date`, with the Arrow types the warehouse's own
    writes take (`frames.arrow_type`: timestamps UTC-aware): the driver-side readers'
    tables."""
    from lassi.core.frames import arrow_type

    return pa.schema([pa.field(f.name, arrow_type(f.dataType))
                      for f in schema_of(table).fields if f.name != "date"])


def when(cond: pa.Array, a, b) -> pa.Array:
    """`a` where cond is True, else `b` (a null cond counts as False)."""
    return pc.if_else(pc.fill_null(cond, False), a, b)


def all_of(*conds: pa.Array) -> pa.BooleanArray:
    """Element-wise AND of boolean arrays, nulls as False."""
    out = pc.fill_null(conds[0], False)
    for c in conds[1:]:
        out = pc.and_(out, pc.fill_null(c, False))
    return out


def any_of(*conds: pa.Array) -> pa.BooleanArray:
    """Element-wise OR of boolean arrays, nulls as False."""
    out = pc.fill_null(conds[0], False)
    for c in conds[1:]:
        out = pc.or_(out, pc.fill_null(c, False))
    return out


def rows_table(rows: list[dict], schema: pa.Schema) -> pa.Table:
    """Dict rows (datetimes naive UTC) as a table of `schema` (timestamps as int64 micros)."""
    cols = []
    for f in schema:
        vals = [r.get(f.name) for r in rows]
        if pa.types.is_int64(f.type) and any(isinstance(v, dt.datetime) for v in vals):
            cols.append(pa.array(vals, pa.timestamp("us")).cast(pa.int64()))
        else:
            cols.append(pa.array(vals, f.type))
    return pa.Table.from_arrays(cols, schema=schema)


def slow_lines(lines: pa.StringArray, fast: pa.BooleanArray, first_line_no: int
               ) -> Iterator[tuple[int, str]]:
    """(line_no, line) of the lines the fast path did not take."""
    idx = pc.indices_nonzero(pc.invert(fast))
    for i, line in zip(idx.to_pylist(), lines.take(idx).to_pylist(), strict=True):
        yield first_line_no + i, line
