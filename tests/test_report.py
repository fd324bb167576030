"""`lassi report daily`: a hand-made warehouse (2 filesystems, 3 hours) -> HTML + PNGs."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from lassi.core.schemas import ALL_COUNTERS, RISK_COLS, schema_of

DAY = dt.date(2017, 10, 10)
H = [dt.datetime(2017, 10, 10, h) for h in range(3)]
FIGS = ["risk_stats", "oss_risk", "mds_risk", "ops_metric"]

# (app_id, fs, hour index, risk_oss, risk_mds, dominant op, exe, user)
APP_HOURS = [
    ("A1", "fs2", 0, 10.0, 1.0, "write_kb", "hog.exe", "u1"),      # the riskiest on fs2
    ("A1", "fs2", 1, 20.0, 5.0, "write_kb", "hog.exe", "u1"),
    ("A2", "fs2", 0, 0.5, 0.0, "read_ops", "victim.exe", "u2"),    # the slowed run
    ("A2", "fs2", 1, 0.0, 0.0, None, "victim.exe", "u2"),
    ("A2", "fs2", 2, 0.0, 0.0, None, "victim.exe", "u2"),
    ("A3", "fs2", 2, 0.0, 7.5, "mkdir", "meta.py", "u3"),
    ("B1", "fs3", 0, 3.0, 0.0, "read_kb", "reader.x", "u4"),
    ("B1", "fs3", 1, 4.0, 0.0, "read_kb", "reader.x", "u4"),
    ("B1", "fs3", 2, 5.0, 0.5, "read_kb", "reader.x", "u4"),
    ("B2", "fs3", 1, 0.0, 0.0, None, "quiet.x", "u5"),
]
# Concurrent risk of A2 over its hours 00-02 on fs2: all risk there minus its own 0.5.
A2_CONCURRENT = (10 + 1 + 0.5) + (20 + 5) + 7.5 - 0.5
VICTIM = "aprun -n 24 ./victim.exe in.nml"


def _row(table: str, **values) -> tuple:
    """A row of `table` in schema order: counters and risks default to 0."""
    out = []
    for f in schema_of(table).fields:
        if f.name in values:
            out.append(values[f.name])
        elif f.name in ALL_COUNTERS:
            out.append(0.0 if f.name.endswith("_kb") else 0)
        elif f.name in RISK_COLS:
            out.append(0.0)
        else:
            out.append(None)
    return tuple(out)


def _app_hours():
    rows = []
    for app, fs, h, ross, rmds, op, exe, user in APP_HOURS:
        risks = {f"r_{op}": ross + rmds} if op else {}
        rows.append(_row(
            "app_hour", app_id=app, job_id=f"j{app}", fs=fs, hour=H[h], user=user, exe=exe,
            command=VICTIM if app == "A2" else f"aprun ./{exe}", n_nodes=1, node_windows=20,
            read_kb=1024.0 * 100, read_ops=400, write_kb=1024.0 * 50, write_ops=60,
            risk_oss=ross, risk_mds=rmds, read_kb_ops=4.0, write_kb_ops=1.2, date=DAY,
            **risks))
    return rows


def _fs_hours():
    rows = []
    for fs in ("fs2", "fs3"):
        for h in range(3):
            sel = [r for r in APP_HOURS if r[1] == fs and r[2] == h]
            if not sel:
                continue
            rows.append(_row(
                "fs_hour", fs=fs, hour=H[h], n_apps=len(sel),
                read_kb=1024.0 * 100 * len(sel), read_ops=400 * len(sel),
                write_kb=1024.0 * 50 * len(sel), write_ops=60 * len(sel),
                risk_oss=sum(r[3] for r in sel), risk_mds=sum(r[4] for r in sel),
                read_kb_ops=4.0, write_kb_ops=1.2 + h, date=DAY))
    return rows


def _run(app, exe, user, start_h, minutes, slowdown, command=None, source="alps"):
    """A launch: its app_run row (ingest) and its run_slowdown row (the slowdown stage)."""
    start = dt.datetime(2017, 10, 10, start_h, 10)
    slowed = None if slowdown is None else slowdown >= 1.5
    run = _row("app_run", app_id=app, job_id=f"j{app}", user=user, exe=exe,
               command=command or f"aprun ./{exe}", nodes=["nid00010"], n_nodes=1,
               n_procs=24, start=start, end=start + dt.timedelta(minutes=minutes),
               exit_status=0, source=source, date=DAY)
    analysis = _row("run_slowdown", app_id=app, source=source, runtime_s=minutes * 60.0,
                    group_runs=4, group_mean_s=minutes * 60.0 / (slowdown or 1.0),
                    slowdown=slowdown, slowed=slowed, risk_oss_sum=1.0, risk_mds_sum=0.5,
                    date=DAY)
    return run, analysis


@pytest.fixture(scope="module")
def built(spark, tmp_path_factory):
    """The hand-made warehouse and the reports of 2017-10-10 and of 10-10..10-11."""
    from lassi.core.config import load_site
    from lassi.core.warehouse import Warehouse
    from lassi.report import daily
    from lassi.report.daily import write_daily_report
    from lassi.report.data import load

    root = tmp_path_factory.mktemp("report")
    wh = Warehouse(spark, str(root / "wh"))
    wh.write_rows(_app_hours(), "app_hour")
    wh.write_rows(_fs_hours(), "fs_hour")
    wh.write_rows([_row("fs_baseline", fs=fs, op=op, mean=1000.0 * (i + 1), std=1500.0,
                        rsd=1.5 / (i + 1), n=300, period_start=DAY, period_end=DAY, date=DAY)
                   for fs in ("fs2", "fs3") for i, op in enumerate(ALL_COUNTERS)],
                  "fs_baseline")
    launches = [
        _run("A1", "hog.exe", "u1", 0, 110, 1.0),
        _run("A2", "victim.exe", "u2", 0, 150, 2.0, command=VICTIM),
        _run("A2", None, "u2", 0, 152, None, source="pbs"),   # the job's PBS row
        _run("V2", "victim.exe", "u2", 0, 75, 1.0, command=VICTIM),
        _run("V3", "victim.exe", "u2", 0, 70, 0.9, command=VICTIM),
        _run("V4", "victim.exe", "u2", 0, 80, 1.1, command=VICTIM),
        _run("A3", "meta.py", "u3", 2, 40, 1.2),
        _run("B1", "reader.x", "u4", 0, 170, 1.4),   # not slowed: below 1.5
        _run("B2", "quiet.x", "u5", 1, 30, 1.0),
    ]
    wh.write_rows([run for run, _ in launches], "app_run")
    wh.write_rows([analysis for _, analysis in launches], "run_slowdown")
    wh.write_rows([
        _row("run_group", command=VICTIM, exe="victim.exe", user="u2", n_runs=4,
             mean_runtime_s=5625.0, std_runtime_s=1800.0, n_slowed=1,
             corr_runtime_risk_oss=0.8, corr_runtime_risk_mds=-0.1, period_start=DAY,
             period_end=DAY, date=DAY),
        _row("run_group", command="aprun ./hog.exe", exe="hog.exe", user="u1", n_runs=2,
             mean_runtime_s=6600.0, std_runtime_s=0.0, n_slowed=0, period_start=DAY,
             period_end=DAY, date=DAY),
    ], "run_group")
    now = dt.datetime(2017, 10, 11, 1, 0)
    wh.write_rows([_row("ingest_log", source="lustre", files=10, lines_read=12345,
                        lines_used=12340, lines_quarantined=5, rows=9000, counter_resets=2,
                        ingested_at=now, date=DAY),
                   _row("ingest_log", source="alps", files=1, lines_read=40, lines_used=40,
                        lines_quarantined=0, rows=9, counter_resets=0, ingested_at=now,
                        date=DAY)], "ingest_log")
    site = load_site("archer", nodes=64)
    out = root / "reports"
    seen = []

    def spy(*args):   # keep what the report loaded
        seen.append(load(*args))
        return seen[-1]

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(daily, "load", spy)
        day = write_daily_report(wh, site, DAY, DAY, out)
    # The period 10-10..10-11 loads the same rows (10-11 has none): render it without
    # querying again, to keep the test short.
    data = dataclasses.replace(seen[0], last=DAY + dt.timedelta(days=1))
    assert data.missing_dates == [DAY + dt.timedelta(days=1)]
    period = daily.publish(out, daily.report_name(site, DAY, data.last),
                           lambda f: daily.render(data, f))
    return {"wh": wh, "site": site, "out": out, "day": day, "period": period}


class _Tables(HTMLParser):
    """Rows (lists of cell texts) of every <table class=...>, per section id (h2 id)."""

    def __init__(self):
        super().__init__()
        self.section, self.tables, self.cur, self.row, self.cell = None, {}, None, None, None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "h2":
            self.section = a.get("id")
        elif tag == "table":
            self.cur = self.tables.setdefault((self.section, a.get("class")), [])
        elif tag == "tr" and self.cur is not None:
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = ""

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self.cell is not None:
            self.row.append(self.cell.strip())
            self.cell = None
        elif tag == "tr" and self.row is not None:
            self.cur.append(self.row)
            self.row = None
        elif tag == "table":
            self.cur = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def _tables(index: Path) -> dict:
    p = _Tables()
    p.feed(index.read_text())
    return p.tables


def test_page_has_a_section_per_filesystem(built):
    index = built["day"]
    assert index.name == "index.html" and index.parent.name == "archer-2017-10-10"
    html = index.read_text()
    for fs in ("fs2", "fs3", "fs4"):
        assert f'<h2 id="{fs}">' in html
    assert "No application I/O recorded on fs4" in html      # archer's third fs: no rows
    assert "<script" not in html and "http://" not in html and "https://" not in html
    assert "α = 2" in html and "1 is ideal" in html
    assert "12,385 lines read, 5 quarantined, 2 Lustre counter resets" in html
    # runs: the PBS row of A2's job is not a run of its own
    assert re.search(r"<b>8</b> application runs started, <b>1</b> slowed", html)
    assert not list(built["out"].glob(".*")), "temporary folders left behind"


def test_every_figure_is_a_real_png(built):
    import matplotlib.image as mpimg

    folder = built["day"].parent
    html = built["day"].read_text()
    pngs = [folder / fs / f"{k}.png" for fs in ("fs2", "fs3") for k in FIGS]
    pngs.append(folder / "_groups" / "run_groups.png")
    for png in pngs:
        rel = png.relative_to(folder).as_posix()
        assert f'src="{rel}"' in html, rel
        assert png.stat().st_size > 8_000, rel
        img = mpimg.imread(png)
        wide = 500 if "_groups" in rel else 1000
        assert img.shape[1] >= wide and img.shape[0] >= 300, (rel, img.shape)
        assert img[..., :3].std() > 0.02, f"{rel} looks blank"
    assert not (folder / "fs4").exists()


def test_top_risky_application_comes_first(built):
    tables = _tables(built["day"])
    top = tables[("fs2", "top-apps")]
    head, first = top[0], top[1]
    row = dict(zip(head, first, strict=True))
    assert row["app_id"] == "A1" and row["exe"] == "hog.exe" and row["user"] == "u1"
    assert row["peak risk_oss"] == "20" and row["peak risk_mds"] == "5"
    assert row["hours active"] == "2" and row["top op (largest r_x)"].startswith("write_kb")
    assert [r[1] for r in top[1:]] == ["A1", "A3", "A2"]       # B* are on fs3
    assert [r[1] for r in tables[("fs3", "top-apps")][1:]] == ["B1"]   # B2 had no risk


def test_slowed_runs_list_the_slowed_run_with_concurrent_risk(built):
    tables = _tables(built["day"])
    slowed = tables[("fs2", "slowed")]
    assert len(slowed) == 2, slowed                            # header + exactly one run
    row = dict(zip(slowed[0], slowed[1], strict=True))
    assert row["app_id"] == "A2" and row["exe"] == "victim.exe"
    assert row["slowdown"] == "2.00×" and row["runtime"] == "2:30:00"
    assert row["concurrent risk (other apps)"] == f"{A2_CONCURRENT:g}" == "43.5"
    assert row["largest other contributor (Σ risk)"] == "hog.exe (u1) A1 (36)"
    assert ("fs3", "slowed") not in tables


def test_baseline_and_run_group_tables(built):
    tables = _tables(built["day"])
    base = {r[0]: r for r in tables[("fs2", "baseline")][1:]}
    assert base["read_kb"][1:4] == ["1,000", "1,500", "1.5"]
    assert base["read_kb"][5] == "risk_oss" and base["open"][5] == "risk_mds"
    assert base["getxattr"][5] == "not counted"
    groups = tables[("run-groups", "groups")]
    assert len(groups) == 2 and groups[1][0] == VICTIM        # hog.exe: only 2 runs


def test_period_with_a_day_without_data_still_renders(built):
    index = built["period"]
    assert index.parent.name == "archer-2017-10-10_2017-10-11"
    html = index.read_text()
    assert "No app_hour data for 2017-10-11" in html
    for k in FIGS:
        assert (index.parent / "fs2" / f"{k}.png").stat().st_size > 8_000


def test_a_failed_render_keeps_the_old_report(tmp_path):
    from lassi.report.daily import publish

    def good(text):
        def build(folder):
            folder.mkdir()
            (folder / "index.html").write_text(text)
            return folder / "index.html"
        return build

    def bad(folder):
        folder.mkdir()
        (folder / "index.html").write_text("half")
        raise RuntimeError("disk full")

    first = publish(tmp_path, "archer-2017-10-10", good("v1"))
    assert first == tmp_path / "archer-2017-10-10" / "index.html"
    with pytest.raises(RuntimeError):
        publish(tmp_path, "archer-2017-10-10", bad)
    assert first.read_text() == "v1" and not list(tmp_path.glob(".*"))
    assert publish(tmp_path, "archer-2017-10-10", good("v2")).read_text() == "v2"
    assert [p.name for p in tmp_path.iterdir()] == ["archer-2017-10-10"]


def test_no_data_is_a_clean_error(built):
    from lassi.report.daily import write_daily_report

    with pytest.raises(ValueError, match=r"no app_hour data for 2017-01-01 in .* \(run "):
        write_daily_report(built["wh"], built["site"], dt.date(2017, 1, 1),
                           dt.date(2017, 1, 1), built["out"])


@pytest.mark.parametrize("make, needle", [
    (True, "no app_hour or job_summary data for 2017-01-01 in {wh} (run `lassi run daily` first)"),
    (False, "no warehouse at {wh}"),
])
def test_cli_without_data_fails_in_one_line(tmp_path, make, needle):
    wh = tmp_path / "EMPTY"
    if make:
        wh.mkdir()
    p = subprocess.run([sys.executable, "-m", "lassi.cli", "report", "daily", "--date",
                        "2017-01-01", "--warehouse", str(wh), "--out", str(tmp_path / "X")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert p.stderr.strip().splitlines() == [f"lassi: error: {needle.format(wh=wh)}"]
    assert not (tmp_path / "X").exists()


def test_cli_date_arguments(capsys):
    from lassi.cli.main import main

    assert main(["report", "daily", "--from", "2017-10-10"]) == 1
    assert main(["report", "daily", "--from", "2017-10-12", "--to", "2017-10-10"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["lassi: error: give --date D, or --from D1 and --to D2",
                   "lassi: error: --from 2017-10-12 is after --to 2017-10-10"]
