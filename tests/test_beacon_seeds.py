"""Delta seeds kept for the next day (lassi.ingest.beacon_seeds): a stored seed gives the
rows the parse of the previous day's file gives, it is used only while that file is
unchanged, never stored for a file with quarantined lines, and pruned after a week. The
shared TaihuLight history is ingested day after day with the store; its raw tables equal
the columnar parse without a store (which test_beacon_columnar holds equal to the line
parsers)."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pytest
from lassi.ingest import beacon_columnar, beacon_seeds
from lassi.ingest.beacon_seeds import Seed, SeedStore
from lassi.ingest.runner import prev_day_file

from lassi.core.config import load_site

IP = "20.0.2.100"
PREV = [f"{IP} 2018-02-24T23:59:40.000Z online1-OST0000 100 50 256 7000",
        f"{IP} 2018-02-24T23:59:50.000Z online1-OST0000 110 50 256 7200",
        f"{IP} 2018-02-24T23:59:50.000Z online1-OST0001 9 9 256"]
DAY = [f"{IP} 2018-02-25T00:00:00.000Z online1-OST0000 120 55 256 7500",
       f"{IP} 2018-02-25T00:00:00.000Z online1-OST0001 10 9 256",
       f"{IP} 2018-02-25T00:00:10.000Z online1-OST0000 130 60 256 7900"]
D = dt.date(2018, 2, 25)
PARSE = beacon_columnar.parse_lustre_client_arrow


@pytest.fixture(scope="module")
def site():
    return load_site("taihulight", nodes=1024)


def write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines))
    return path


def rows(result) -> list[dict]:
    return result[0].to_pylist()


def test_a_stored_seed_stands_for_its_file_until_the_file_changes(tmp_path, site):
    """The previous day's seed is read from the store while that file is unchanged (here
    its content is replaced by different counters of the same size, its time kept: the
    rows still follow the stored seed); once its time changes, it is parsed again."""
    folder = tmp_path / "raw" / "lustre-client" / "fwd000"
    prev, path = write(folder / "2018-02-24.log", PREV), write(folder / "2018-02-25.log", DAY)
    store = SeedStore(str(tmp_path / "wh" / "_seeds" / "lustre-client"))
    parsed = PARSE(path, site, prev, D)
    assert rows(parsed)[0]["read_rpc_delta"] == 10 and parsed[2].extra["seed_files"] == 1

    PARSE(prev, site, None, dt.date(2018, 2, 24), seeds=store)      # yesterday's ingest
    assert len(list(Path(store.root).glob("date=2018-02-24/*.parquet"))) == 1
    assert rows(PARSE(path, site, prev, D, seeds=store)) == rows(parsed)

    st = os.stat(prev)
    prev.write_text(prev.read_text().replace(" 110 50 ", " 111 50 "))    # same size
    os.utime(prev, ns=(st.st_atime_ns, st.st_mtime_ns))
    stored = PARSE(path, site, prev, D, seeds=store)
    assert rows(stored) == rows(parsed) and stored[2] == parsed[2]
    assert rows(PARSE(path, site, prev, D))[0]["read_rpc_delta"] == 9       # the file says

    os.utime(prev, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert rows(PARSE(path, site, prev, D, seeds=store))[0]["read_rpc_delta"] == 9


def test_no_seed_is_kept_for_a_file_with_quarantined_lines(tmp_path, site):
    """A file parsed for another day (every line quarantined as off-day) drops the seed its
    earlier parse kept; a file with a bad line keeps none."""
    folder = tmp_path / "raw" / "lustre-client" / "fwd000"
    path = write(folder / "2018-02-25.log", DAY)
    store = SeedStore(str(tmp_path / "seeds"))
    seeds = lambda: list(Path(store.root).rglob("*.parquet"))  # noqa: E731
    PARSE(path, site, None, D, seeds=store)
    assert len(seeds()) == 1 and store.load(path) is not None
    assert PARSE(path, site, None, dt.date(2018, 2, 26), seeds=store)[2].lines_quarantined == 3
    assert seeds() == [] and store.load(path) is None
    bad = write(folder / "2018-02-26.log", [*DAY, "junk"])
    PARSE(bad, site, None, None, seeds=store)
    assert seeds() == []
    undated = write(folder / "capture.log", DAY)       # no later file names it: no seed
    assert PARSE(undated, site, None, D, seeds=store)[2].lines_quarantined == 0
    assert seeds() == []


def test_a_seed_the_store_cannot_keep_or_use_costs_a_parse_only(tmp_path, site):
    """A store that cannot be written, a seed file that is no Parquet and a seed of another
    number of counters (stored before an upgrade): the previous day's file is parsed and
    the rows are those of a parse without a store."""
    folder = tmp_path / "raw" / "lustre-client" / "fwd000"
    prev, path = write(folder / "2018-02-24.log", PREV), write(folder / "2018-02-25.log", DAY)
    want = rows(PARSE(path, site, prev, D))
    (tmp_path / "a-file").write_text("not a folder")
    blocked = SeedStore(str(tmp_path / "a-file" / "lustre-client"))
    assert rows(PARSE(prev, site, None, dt.date(2018, 2, 24), seeds=blocked)) == rows(
        PARSE(prev, site, None, dt.date(2018, 2, 24)))
    assert rows(PARSE(path, site, prev, D, seeds=blocked)) == want

    store = SeedStore(str(tmp_path / "seeds"))
    store.save(prev, Seed(pa.array([f"{IP}\x1fonline1-OST0000"]), np.array([0]),
                          np.array([[999, 999, 999]]), np.array([0]), np.array([False]), 0))
    assert store.load(prev).values.shape == (1, 3)
    assert rows(PARSE(path, site, prev, D, seeds=store)) == want
    [seed_file] = Path(store.root).glob("date=2018-02-24/*.parquet")
    seed_file.write_bytes(b"no parquet")
    assert store.load(prev) is None
    assert rows(PARSE(path, site, prev, D, seeds=store)) == want


def test_prune_keeps_a_week(tmp_path):
    wh = tmp_path / "wh"
    for layer, day in (("ost", "2018-02-10"), ("ost", "2018-02-18"), ("mds", "2018-02-17"),
                       ("mds", "2018-02-25")):
        (wh / "_seeds" / layer / f"date={day}").mkdir(parents=True)
    (wh / "_seeds" / "ost" / "undated").mkdir()
    assert beacon_seeds.prune(wh, D) == 2
    left = sorted(p.relative_to(wh / "_seeds").as_posix() for p in (wh / "_seeds").glob("*/*"))
    assert left == ["mds/date=2018-02-25", "ost/date=2018-02-18", "ost/undated"]
    assert beacon_seeds.prune(None, D) == 0


@pytest.mark.parametrize("layer", sorted(beacon_columnar.LAYOUTS))
def test_the_history_ingested_with_stored_seeds(taihulight_days, layer):
    """Every day after the first of the shared history took its seeds from the store (one
    per file), and the warehouse's rows equal the columnar parse without a store."""
    site = load_site("taihulight", nodes=taihulight_days.nodes)
    wh = taihulight_days.warehouse
    lay = beacon_columnar.LAYOUTS[layer]
    day = taihulight_days.dates[1]
    files = sorted((taihulight_days.raw / "beacon" / layer).glob(f"*/{day}.log"))
    assert files and all(prev_day_file(f) for f in files)
    store = beacon_seeds.layer_store(wh, layer)
    assert all(store.load(prev_day_file(f)) is not None for f in files)
    expected = pa.concat_tables(
        [beacon_columnar.parse_arrow(lay, f, site, prev_day_file(f), day)[0] for f in files])
    got = ds.dataset(wh / lay.table / f"date={day}", format="parquet").to_table()
    got = got.select(expected.schema.names)
    got = pa.Table.from_arrays(
        [c.cast(pa.int64()) if pa.types.is_timestamp(c.type) else c for c in got.columns],
        names=got.column_names)

    def ordered(t: pa.Table) -> list[dict]:
        return sorted(t.to_pylist(), key=repr)

    assert got.num_rows == expected.num_rows > 0
    assert ordered(got) == ordered(expected)
