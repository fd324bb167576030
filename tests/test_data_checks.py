"""Data that does not match the site's configuration is loud (ingest.data_checks).

A 4-node ARCHER day is ingested once with its own site (every check finds nothing), then
with a site whose node numbering starts elsewhere (`first_nid`: other node names and
NIDs), as a site with a wrong `conf/` would: the Lustre export rows and the runs match
nothing, `lassi ingest` prints one warning line per check with the counts, and the report's
data-quality box shows them. Expected counts come from the raw files and the simulator's
truth, not from the tables checked. The Beacon side (trace IPs) is in test_beacon_ingest.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import io
import json
from html import escape
from pathlib import Path

import pytest

from lassi.cli.main import main
from lassi.core.config import conf_dir, load_site

DATE = dt.date(2017, 10, 10)


@pytest.fixture(scope="module")
def day(spark, tmp_path_factory) -> tuple[Path, Path, dict]:
    """(raw folder, a YAML site shifted by 1,000 node numbers, the truth)."""
    from lassi.sim.runner import simulate

    tmp = tmp_path_factory.mktemp("checks")
    raw = tmp / "raw"
    simulate(load_site("archer", nodes=4), DATE, 1, 3, raw, tokio=False)
    text = (conf_dir() / "sites" / "archer.yaml").read_text()
    assert "  first_nid: 8 " in text
    shifted = tmp / "archer-shifted.yaml"
    shifted.write_text(text.replace("  first_nid: 8 ", "  first_nid: 1008 "))
    return raw, shifted, json.loads((raw / "truth.json").read_text())


def _checks(wh_root: Path) -> dict[str, dict]:
    import pandas as pd

    df = pd.read_parquet(wh_root / "data_check" / f"date={DATE}")
    return {r["source"]: r for r in df.to_dict("records")}


def runs_of(truth: dict) -> int:
    """app_run rows of the date with nodes: every simulated run that starts on it is in
    both the PBS and the ALPS log (ARCHER's two schedulers)."""
    return 2 * sum(1 for r in truth["runs"] if r["start"].startswith(DATE.isoformat()))


def _export_lines(raw: Path) -> int:
    """Counter lines of export blocks in the day's captures (the next day's too): each is
    one export row (`<counter> <samples> samples [<unit>] ...`)."""
    n = 0
    for f in sorted((raw / "lustre").rglob("*")):
        if not f.is_file():
            continue
        export = False
        for line in f.read_text().splitlines():
            if line.startswith("obdfilter.") or line.startswith("mdt."):
                export = ".exports." in line
            elif export and " samples " in line:
                n += 1
    return n


def test_matching_site_passes_every_check(day, spark, tmp_path, capsys):
    raw, _, truth = day
    wh = tmp_path / "wh"
    rc = main(["ingest", "--raw", str(raw), "--date", DATE.isoformat(), "--warehouse", str(wh),
               "--site", "archer", "--nodes", "4"])
    assert rc == 0
    assert "warning" not in capsys.readouterr().err
    checks = _checks(wh)
    assert set(checks) == {"lustre", "scheduler"}                  # no Beacon trace here
    assert all(c["n_bad"] == 0 and c["warning"] is None for c in checks.values())
    started = runs_of(truth)
    assert checks["scheduler"]["n_total"] == started > 0
    from lassi.core.warehouse import Warehouse
    from lassi.report.data import load_quality
    from lassi.report.html import quality_box

    html = quality_box(load_quality(Warehouse(spark, str(wh)), [DATE]))
    assert "Checked against the site configuration (lustre, scheduler)" in html
    assert "class='warn'" not in html


@pytest.fixture(scope="module")
def shifted_run(day, tmp_path_factory) -> tuple[Path, list[str]]:
    """`lassi ingest --raw` of the day with the shifted site: (warehouse, warning lines)."""
    raw, shifted, _ = day
    wh = tmp_path_factory.mktemp("shifted") / "wh"
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = main(["ingest", "--raw", str(raw), "--date", DATE.isoformat(), "--warehouse",
                   str(wh), "--site", str(shifted), "--nodes", "4"])
    assert rc == 0                                         # loud, not fatal
    return wh, [x for x in err.getvalue().splitlines() if x.startswith("warning: ")]


def test_shifted_site_warns_in_one_line_per_check(day, shifted_run):
    raw, _, truth = day
    wh, err = shifted_run
    checks = _checks(wh)
    started = runs_of(truth)
    export_rows = checks["lustre"]["n_total"]
    assert 0 < export_rows <= _export_lines(raw)           # the date's captures of them
    assert (checks["lustre"]["n_bad"], checks["scheduler"]["n_bad"],
            checks["scheduler"]["n_total"]) == (export_rows, started, started)
    assert err == [checks["lustre"]["warning"], checks["scheduler"]["warning"]]
    assert err[0].startswith(f"warning: lustre: {export_rows:,} of {export_rows:,} export "
                             "statistics rows from clients that are no compute node of the "
                             "site (e.g. ")
    assert "8@gni1" in checks["lustre"]["examples"]          # nid00008's NID, by hand
    assert err[1].startswith(f"warning: scheduler: {started:,} of {started:,} runs on no "
                             "compute node of the site (e.g. nid0000")
    assert "job log of another machine" in err[1]


def test_report_quality_box_shows_the_warnings(shifted_run, spark):
    from lassi.core.warehouse import Warehouse
    from lassi.report.data import load_quality
    from lassi.report.html import quality_box

    wh, _ = shifted_run
    html = quality_box(load_quality(Warehouse(spark, str(wh)), [DATE]))
    warnings = [c["warning"] for c in _checks(wh).values()]
    for w in warnings:
        assert f"<p class='warn'>{escape(w)}</p>" in html
    assert html.count("class='warn'") == 2 and "runs on no compute node" in html
