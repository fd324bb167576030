"""`lassi bad-ost`: pytokio's darshan_bad_ost answers (realdata README §6) through the CLI,
the JSON shape, the Pearson statistics against scipy on a hand-made fixture, errors."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from lassi.cli.main import main
from lassi.tools.bad_ost import correlate, file_performance, ost_matrix, ost_name, pearson


def run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(["bad-ost", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.fixture(scope="module")
def logs(realdata):
    d = realdata / "pytokio"
    return {k: str(d / f"{k}.darshan") for k in ("sample", "sample-badost", "sample-goodost")}


def test_badost_flags_exactly_ost_14(capsys, logs, realdata):
    rc, out, _ = run(capsys, logs["sample-badost"], "--json", "-p", "0.00001", "-c", "0.50")
    assert rc == 0
    (hit,) = json.loads(out)
    assert set(hit) == {"ost_index", "ost_name", "coefficient", "p_value"}
    assert hit["ost_index"] == 14 and hit["ost_name"] == "OST#14"
    assert hit["coefficient"] == pytest.approx(-0.703, abs=0.001)
    assert 0 < hit["p_value"] < 1e-300
    # the table, with the Lustre name from pytokio's site.json (/scratch1 = snx11025)
    rc, out, _ = run(capsys, logs["sample-badost"], "-p", "0.00001", "-c", "0.50",
                     "--site-json", str(realdata / "pytokio" / "site.json"))
    rows = [line for line in out.splitlines()[1:] if line.strip()]
    assert rc == 0 and len(rows) == 1
    assert rows[0].split()[:3] == ["14", "snx11025-OST000e", "-0.703"]
    assert "unhealthy" in rows[0]


def test_goodost_and_sample_flag_nothing(capsys, logs):
    rc, out, _ = run(capsys, logs["sample-goodost"], "--json", "-p", "0.01")
    assert rc == 0 and json.loads(out) == []
    rc, out, _ = run(capsys, logs["sample"], "--json")
    assert rc == 0 and json.loads(out) == []
    rc, out, _ = run(capsys, logs["sample"])
    assert rc == 0 and "no OST" in out


def test_bad_and_good_together(capsys, logs):
    rc, out, _ = run(capsys, logs["sample-badost"], logs["sample-goodost"], "--json",
                     "-c", "0.10")
    assert rc == 0 and json.loads(out) == []


def test_wrong_path_is_one_line_error(capsys, logs, tmp_path):
    rc, out, err = run(capsys, logs["sample"], str(tmp_path / "nope.darshan"))
    assert rc == 1 and out == ""
    assert err.strip().count("\n") == 0 and err.startswith("lassi: error: no such Darshan log")


def test_unreadable_log_is_a_warning(capsys, tmp_path, logs):
    bad = tmp_path / "zero.darshan"
    bad.write_bytes(b"")
    rc, out, err = run(capsys, str(bad), logs["sample-goodost"], "--json", "-p", "0.01")
    assert rc == 0 and json.loads(out) == [] and "zero.darshan" in err


# --- the statistics on a hand-made fixture ------------------------------------------------

def _files(rows):
    """POSIX darshan_file rows: (file, rank, bytes written, write time, OSTs)."""
    return pd.DataFrame([
        {"log_path": "a.darshan", "module": "POSIX", "file_name": f, "rank": rank,
         "bytes_read": 0, "bytes_written": b, "read_time_s": 0.0, "write_time_s": t,
         "meta_time_s": 0.0, "ost_ids": osts, "mount": "/scratch1"}
        for f, rank, b, t, osts in rows])


def test_file_performance_by_slowest_rank():
    perf = file_performance(_files([
        ("/f1", 0, 100, 1.0, [3]), ("/f1", 1, 300, 4.0, [3]),   # 400 B / 4 s
        ("/f2", -1, 500, 2.0, [1, 2]),                          # 250 B/s, two OSTs
        ("/f3", -1, 500, 0.0, [1]),                             # no I/O time: left out
        ("/f4", -1, 500, 1.0, []),                              # no LUSTRE data: left out
    ]))
    assert perf["file_name"].tolist() == ["/f1", "/f2"]
    assert perf["performance"].tolist() == [100.0, 250.0]
    m = ost_matrix(perf)
    assert m[[1, 2, 3]].values.tolist() == [[0.0, 0.0, 1.0], [0.5, 0.5, 0.0]]


def test_pearson_against_hand_computation():
    x, y = [1.0, 2.0, 3.0, 4.0, 5.0], [2.0, 4.0, 5.0, 4.0, 5.0]
    mx, my = sum(x) / 5, sum(y) / 5
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    r_hand = sxy / math.sqrt(sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y))
    r, p = pearson(x, y)
    assert r == pytest.approx(r_hand) == pytest.approx(0.7745966692)
    # two-sided p from t = r sqrt(n-2)/sqrt(1-r^2) with 3 degrees of freedom
    from scipy.stats import t as student

    tval = r_hand * math.sqrt(3) / math.sqrt(1 - r_hand ** 2)
    assert p == pytest.approx(2 * student.sf(tval, 3)) == pytest.approx(0.1240, abs=1e-4)


def test_correlate_flags_the_slow_ost():
    """Eight files on OSTs 0-3; the files on OST 2 are slow."""
    rows = []
    for i in range(8):
        ost = i % 4
        rows.append((f"/f{i}", -1, 1000, 10.0 if ost == 2 else 1.0 + 0.1 * i, [ost]))
    rows.append(("/g", -1, 1000, 1.0, [0, 1, 2, 3]))
    perf = file_performance(_files(rows))
    from scipy.stats import pearsonr

    out = correlate(perf, p_threshold=0.05, c_threshold=0.5, fs="snx11025")
    m = ost_matrix(perf)
    for r in out.itertuples():
        ref = pearsonr(m["performance"], m[r.ost_index])
        assert r.coefficient == pytest.approx(ref.statistic)
        assert r.p_value == pytest.approx(ref.pvalue)
    assert out.loc[out.flagged, "ost_index"].tolist() == [2]
    assert out.set_index("ost_index").loc[2, "ost_name"] == "snx11025-OST0002"
    assert ost_name(14, None) == "OST#14"


def test_constant_columns_are_not_correlated():
    perf = file_performance(_files([("/a", -1, 100, 1.0, [0]), ("/b", -1, 200, 1.0, [0])]))
    out = correlate(perf)
    assert len(out) == 1 and math.isnan(out.coefficient[0]) and not out.flagged[0]
