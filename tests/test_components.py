"""Failing forwarding nodes and OSTs (lassi.beacon.components) and their alerts (stage
`alerts`, lassi.beacon.alerts: table `alert`, sent once, never for a backfill)."""

from __future__ import annotations

import copy
import datetime as dt
import email
import json
import socketserver
import threading
from email import policy

import pytest

from lassi.core.config import Site, load_site
from lassi.core.schemas import (
    COMPONENT_ANOMALY,
    JOB_SUMMARY,
    JOB_TIMESERIES,
    RAW_LUSTRE_CLIENT,
    RAW_LWFS_SERVER,
    RAW_OST,
)

DAY = dt.date(2018, 3, 1)
T0 = dt.datetime(2018, 3, 1)
OST_PEAK = 5.0e8
FWD_PEAK = 2.5e9
MIB = 1 << 20


def _site(tmp_path, nodes: int = 2048, alerts: dict | None = None, **thresholds) -> Site:
    site = load_site("taihulight", nodes=nodes)
    data = copy.deepcopy(site.data)
    data["thresholds"].update(thresholds)
    data["alerts"] = alerts or {"sink": "file", "path": str(tmp_path / "alerts.log")}
    return Site(data, site.source)


def _at(hhmm: str, day: dt.date = DAY) -> dt.datetime:
    h, m = hhmm.split(":")
    return dt.datetime.combine(day, dt.time()) + dt.timedelta(hours=int(h), minutes=int(m))


def _minutes(a: str, b: str):
    """Every minute in [a, b)."""
    t, end = _at(a), _at(b)
    while t < end:
        yield t
        t += dt.timedelta(minutes=1)


def _row(schema, **kw) -> tuple:
    return tuple(kw.get(f.name) for f in schema.fields)


# --- hand-made raw layers ------------------------------------------------------------------

def _ost_rows(ost: str, spans: list[tuple[str, str, float]], both_samples: bool = True):
    """Two 30-s samples per minute (both inside the minute) at `fraction` x peak over
    [a, b); both_samples=False: only the first moves bytes (the OST goes idle)."""
    out = []
    for a, b, frac in spans:
        for m in _minutes(a, b):
            for k, busy in ((1, True), (2, both_samples)):
                nbytes = int(frac * OST_PEAK * 30) if busy else 0
                out.append(_row(RAW_OST, ost=ost, oss="oss0", ts=m + dt.timedelta(seconds=30 * k),
                                read_rpc=0, write_rpc=0, pages_per_rpc=256, read_bytes=0,
                                write_bytes=0, read_rpc_delta=0,
                                write_rpc_delta=nbytes // MIB, read_bytes_delta=0,
                                write_bytes_delta=nbytes, interval_s=30.0, reset=False,
                                file="x", date=DAY))
    return out


def _ost_rows_3(ost: str, a: str, b: str, fractions: tuple[float, float, float]):
    """Three 20-s samples per minute over [a, b) at these fractions of the peak (0: idle)."""
    out = []
    for m in _minutes(a, b):
        for k, frac in enumerate(fractions, 1):
            nbytes = int(frac * OST_PEAK * 20)
            out.append(_row(RAW_OST, ost=ost, oss="oss0", ts=m + dt.timedelta(seconds=20 * k),
                            read_rpc=0, write_rpc=0, pages_per_rpc=256, read_bytes=0,
                            write_bytes=0, read_rpc_delta=0, write_rpc_delta=nbytes // MIB,
                            read_bytes_delta=0, write_bytes_delta=nbytes, interval_s=20.0,
                            reset=False, file="x", date=DAY))
    return out


def _fwd_rows(fwd: str, spans: list[tuple[str, str, float, int]]):
    """Lustre client and LWFS server samples (30 s) of `fwd`: bandwidth `fraction` x peak
    to one OST, Read/Write requests served and the queue length `queue`."""
    client, server = [], []
    for a, b, frac, queue in spans:
        for m in _minutes(a, b):
            for k in (1, 2):
                ts = m + dt.timedelta(seconds=30 * k)
                rpcs = int(frac * FWD_PEAK * 30 / MIB)
                client.append(_row(RAW_LUSTRE_CLIENT, fwd=fwd, ip="1", ts=ts,
                                   ost="online1-OST0000", read_rpc=0, write_rpc=0,
                                   pages_per_rpc=256, read_rpc_delta=0, write_rpc_delta=rpcs,
                                   interval_s=30.0, reset=False, file="x", date=DAY))
                server.append(_row(RAW_LWFS_SERVER, fwd=fwd, ip="1", ts=ts, op_class="Write",
                                   kind="exe", requests=max(rpcs, 1), reset=False, date=DAY))
                server.append(_row(RAW_LWFS_SERVER, fwd=fwd, ip="1", ts=ts, op_class="Queue",
                                   kind="length", queue_len=queue, reset=False, date=DAY))
    return client, server


@pytest.fixture(scope="module")
def system_wh(spark, tmp_path_factory):
    """A warehouse with the hand-made day, and its component_anomaly written."""
    from lassi.beacon.components import build_component_anomaly
    from lassi.core.warehouse import Warehouse

    tmp = tmp_path_factory.mktemp("system")
    wh = Warehouse(spark, str(tmp / "wh"))
    ost = []
    # 70 min slow between healthy minutes: found, exactly
    ost += _ost_rows("online1-OST0000", [("09:50", "10:00", 0.6), ("10:00", "11:10", 0.1),
                                         ("11:10", "11:20", 0.6)])
    # 50 min slow: too short
    ost += _ost_rows("online1-OST0001", [("11:50", "12:00", 0.6), ("12:00", "12:50", 0.1),
                                         ("12:50", "13:00", 0.6)])
    # lightly used for 3 h (idle between requests): low demand, not low capability
    ost += _ost_rows("online1-OST0002", [("08:00", "11:00", 0.05)], both_samples=False)
    # slow with a 10-min pause in the middle: one anomaly across the pause
    ost += _ost_rows("online1-OST0004", [("13:50", "14:00", 0.6), ("14:00", "14:40", 0.1),
                                         ("14:50", "15:20", 0.1), ("15:20", "15:30", 0.6)])
    # two 45-min stretches 20 min apart: the pause is too long to bridge
    ost += _ost_rows("online1-OST0005", [("16:00", "16:45", 0.1), ("17:05", "17:50", 0.1)])
    # slowed from 15 min after OST0000 until it recovers: a consequence, not a cause
    ost += _ost_rows("online1-OST0006", [("10:15", "11:15", 0.2), ("11:15", "11:30", 0.7)])
    # as long as OST0000's and from the same minute, but clearly faster: its consequence
    ost += _ost_rows("online1-OST0008", [("10:00", "11:10", 0.25), ("11:10", "11:20", 0.6)])
    # high bandwidth every 40 min breaks the island
    ost += _ost_rows("online1-OST0007", [("18:00", "18:40", 0.1), ("18:40", "18:41", 0.5),
                                         ("18:41", "19:20", 0.1)])
    # capped at 10 % and idle between bursts: every burst at the same ceiling (found)
    ost += _ost_rows_3("online1-OST000a", "20:00", "21:10", (0.1, 0.1, 0.0))
    # lightly used, idle between requests, its clients' demand varies: no ceiling (not found)
    ost += _ost_rows_3("online1-OST000b", "20:00", "23:00", (0.05, 0.02, 0.0))
    c1, s1 = _fwd_rows("fwd001", [("02:50", "03:00", 0.8, 5), ("03:00", "04:30", 0.2, 50),
                                  ("04:30", "04:40", 0.8, 5)])
    c2, s2 = _fwd_rows("fwd002", [("02:00", "06:00", 0.05, 0)])       # light: empty queue
    c3, s3 = _fwd_rows("fwd000", [("02:00", "06:00", 0.8, 20)])       # busy and healthy
    wh.write(spark.createDataFrame(ost, RAW_OST), "raw_ost")
    wh.write(spark.createDataFrame(c1 + c2 + c3, RAW_LUSTRE_CLIENT), "raw_lustre_client")
    wh.write(spark.createDataFrame(s1 + s2 + s3, RAW_LWFS_SERVER), "raw_lwfs_server")
    site = _site(tmp)
    msg = build_component_anomaly(wh, site, DAY)
    return wh, msg


def test_system_rule_exact_anomalies(system_wh):
    wh, msg = system_wh
    got = [(r["kind"], r["component"], r["start"], r["end"], r["duration_min"],
            round(r["max_bw_fraction"], 3), r["peak_bw"], r["ongoing"])
           for r in wh.read("component_anomaly", DAY).filter("rule = 'system'")
           .orderBy("kind", "component").collect()]
    assert got == [
        ("fwd", "fwd001", _at("03:00"), _at("04:30"), 90, 0.2, FWD_PEAK, False),
        ("ost", "online1-OST0000", _at("10:00"), _at("11:10"), 70, 0.1, OST_PEAK, False),
        ("ost", "online1-OST0004", _at("14:00"), _at("15:20"), 80, 0.1, OST_PEAK, False),
        ("ost", "online1-OST000a", _at("20:00"), _at("21:10"), 70, 0.1, OST_PEAK, False),
    ], got
    assert msg.startswith("1 forwarding-node and 3 OST anomalies, 0 stragglers")
    ev = wh.read("component_anomaly", DAY).filter("component = 'fwd001'").first()["evidence"]
    assert "LWFS queue 50.0" in ev


# --- stragglers ------------------------------------------------------------------------------

def _ts_rows(job: str, layer: str, comp: str, start: str, minutes: int, bw: float):
    return [_row(JOB_TIMESERIES, job_id=job, layer=layer, component=comp, ts=m,
                 interval_s=60, read_bytes=0.0, write_bytes=bw * 60, read_ops=0.0,
                 write_ops=1.0, md_ops=0.0, share=1.0, date=DAY)
            for m in list(_minutes(start, "23:59"))[:minutes]]


def _job(job: str, n_nodes: int):
    return _row(JOB_SUMMARY, job_id=job, app="app", n_nodes=n_nodes, read_bytes=0,
                write_bytes=1, start=_at("09:00"), end=_at("12:00"), date=DAY)


def test_straggler_in_large_job(spark, tmp_path):
    from lassi.beacon.components import stragglers
    from lassi.core.warehouse import Warehouse

    wh = Warehouse(spark, str(tmp_path / "wh"))
    ts = []
    peers = [0.97, 0.98, 0.99, 1.0, 1.01, 1.02, 1.03]
    for i, f in enumerate(peers):         # J1: seven peers at ~1 GB/s for 10 min ...
        ts += _ts_rows("J1", "forwarding", f"fwd{i:03d}", "10:00", 10, f * 1e9)
    ts += _ts_rows("J1", "forwarding", "fwd007", "10:00", 100, 1e8)   # ... one 10x slower
    for k in range(16):                   # J1's OSTs: homogeneous
        ts += _ts_rows("J1", "ost", f"online1-OST{k:04x}", "10:00", 10, 4e8 + 1e6 * k)
    for i in range(8):                    # J2: homogeneous forwarding nodes
        ts += _ts_rows("J2", "forwarding", f"fwd{i:03d}", "10:00", 10, (1 + 0.01 * i) * 1e9)
    for i, f in enumerate(peers):         # J3: the same straggler, but a small job
        ts += _ts_rows("J3", "forwarding", f"fwd{i:03d}", "10:00", 10, f * 1e9)
    ts += _ts_rows("J3", "forwarding", "fwd007", "10:00", 100, 1e8)
    wh.write(spark.createDataFrame(ts, JOB_TIMESERIES), "job_timeseries")
    wh.write(spark.createDataFrame([_job("J1", 4096), _job("J2", 4096), _job("J3", 64)],
                                   JOB_SUMMARY), "job_summary")
    got = stragglers(wh, _site(tmp_path), DAY).collect()
    assert [(r["job_id"], r["kind"], r["component"], r["rule"], r["start"], r["end"],
             r["duration_min"]) for r in got] == [
        ("J1", "fwd", "fwd007", "straggler", _at("10:00"), _at("11:40"), 100)]
    assert got[0]["est_slowdown"] == pytest.approx(10.0)
    assert got[0]["max_bw_fraction"] == pytest.approx(1e8 / FWD_PEAK)
    # a lower size threshold brings J3 in too
    got = stragglers(wh, _site(tmp_path, large_job_nodes=64), DAY).collect()
    assert sorted(r["job_id"] for r in got) == ["J1", "J3"]


# --- Table 2 and alerts ----------------------------------------------------------------------

def _anomaly(kind, comp, day, a, b, ongoing, rule="system", job=None, slow=None):
    d = DAY + dt.timedelta(days=day)
    end = _at("00:00", d + dt.timedelta(days=1)) if b == "24:00" else _at(b, d)
    return _row(COMPONENT_ANOMALY, kind=kind, component=comp, rule=rule, job_id=job,
                start=_at(a, d), end=end,
                duration_min=int((end - _at(a, d)).total_seconds() // 60),
                max_bw_fraction=0.1, peak_bw=OST_PEAK if kind == "ost" else FWD_PEAK,
                evidence="e", est_slowdown=slow, ongoing=ongoing, date=d)


HISTORY = [
    _anomaly("fwd", "fwd001", 0, "22:00", "24:00", True),      # joined with day 1: 5 h
    _anomaly("fwd", "fwd001", 1, "00:00", "03:00", False),
    _anomaly("ost", "online1-OST0001", 0, "10:00", "11:30", False),     # 1.5 h
    _anomaly("ost", "online1-OST0002", 0, "20:00", "24:00", True),      # 4+24+1 = 29 h
    _anomaly("ost", "online1-OST0002", 1, "00:00", "24:00", True),
    _anomaly("ost", "online1-OST0002", 2, "00:00", "01:00", False),
    _anomaly("ost", "online1-OST0003", 1, "00:30", "02:00", False),     # 1.5 h, not joined
    _anomaly("fwd", "fwd002", 2, "05:00", "18:00", False),              # 13 h
    _anomaly("ost", "online1-OST0009", 2, "09:00", "09:40", False, rule="straggler",
             job="J9", slow=4.0),
]


@pytest.fixture
def history_wh(spark, tmp_path):
    from lassi.core.warehouse import Warehouse

    wh = Warehouse(spark, str(tmp_path / "wh"))
    wh.write(spark.createDataFrame(HISTORY, COMPONENT_ANOMALY), "component_anomaly")
    wh.write(spark.createDataFrame([_row(JOB_SUMMARY, job_id="J9", app="shentu", n_nodes=4096,
                                         read_bytes=0, write_bytes=0,
                                         date=DAY + dt.timedelta(days=2))], JOB_SUMMARY),
             "job_summary")
    return wh


def test_table2_buckets_join_days(history_wh):
    from lassi.beacon.components import component_anomaly_summary

    t = component_anomaly_summary(history_wh, DAY, DAY + dt.timedelta(days=2))
    assert t.to_dict("records") == [
        {"bucket": "(0, 1) h", "fwd": 0, "ost": 0},
        {"bucket": "[1, 4) h", "fwd": 0, "ost": 2},
        {"bucket": "[4, 12) h", "fwd": 1, "ost": 0},
        {"bucket": "[12, 96) h", "fwd": 1, "ost": 1},
        {"bucket": ">= 96 h", "fwd": 0, "ost": 0},
    ]


DAY3 = DAY + dt.timedelta(days=2)
STRAGGLER_SUBJECT = "[lassi] straggler OST online1-OST0009 in job J9 (~4.0x slower)"


def _alerts(wh, date) -> list[tuple]:
    return [(r["kind"], r["component_kind"], r["component"], r["job_id"], r["status"])
            for r in wh.read("alert", date).orderBy("kind", "key").collect()]


def test_alerts_to_file_once(history_wh, tmp_path):
    from lassi.beacon.alerts import build_alerts, pending_alerts

    site = _site(tmp_path, alert_after_hours=24)
    # nothing long enough yet: no rows, nothing sent
    assert build_alerts(history_wh, site, DAY, today=DAY3) == "no alerts for the day"
    assert not history_wh.has("alert", DAY)
    msg = build_alerts(history_wh, site, DAY3, today=DAY3)
    assert msg.startswith("2 alerts: 2 sent, 0 sent by an earlier run of the day"), msg
    assert _alerts(history_wh, DAY3) == [
        ("straggler", "ost", "online1-OST0009", "J9", "sent"),
        ("system", "ost", "online1-OST0002", None, "sent")]
    rows = history_wh.read("alert", DAY3).orderBy("kind", "key").collect()
    assert [r["subject"] for r in rows] == [
        STRAGGLER_SUBJECT,
        "[lassi] OST online1-OST0002 slow for 29 h (since 2018-03-01 20:00 UTC)"]
    assert rows[1]["key"] == "system:ost:online1-OST0002:2018-03-01T20:00"
    assert all(r["sent_at"] is not None for r in rows)
    text = (tmp_path / "alerts.log").read_text()
    assert text.count("Subject: ") == 2 and "job: J9 (shentu, 4096 nodes)" in text
    # a rerun of the same date sends nothing new and keeps the record as it was
    before = sorted((r["key"], r["status"], r["sent_at"]) for r in rows)
    msg = build_alerts(history_wh, site, DAY3, today=DAY3)
    assert msg.startswith("2 alerts: 0 sent, 2 sent by an earlier run of the day"), msg
    assert (tmp_path / "alerts.log").read_text() == text
    assert sorted((r["key"], r["status"], r["sent_at"])
                  for r in history_wh.read("alert", DAY3).collect()) == before
    # another date calling for a key sent before: recorded as already sent, not delivered
    day4 = DAY + dt.timedelta(days=3)
    again = _anomaly("ost", "online1-OST0009", 3, "00:00", "00:30", False, rule="straggler",
                     job="J9", slow=4.0)
    history_wh.write(history_wh.spark.createDataFrame([again], COMPONENT_ANOMALY),
                     "component_anomaly", [day4])
    assert build_alerts(history_wh, site, day4, today=day4).startswith("1 alerts: 0 sent")
    (r,) = history_wh.read("alert", day4).collect()
    assert (r["status"], r["sent_at"]) == ("already sent", rows[0]["sent_at"])
    assert (tmp_path / "alerts.log").read_text() == text
    # the default 96 h: only the straggler is called for
    site96 = _site(tmp_path, alerts={"sink": "file", "path": str(tmp_path / "b.log")})
    assert [a["subject"] for a in pending_alerts(history_wh, site96, DAY3)] == [
        STRAGGLER_SUBJECT]


def test_alerts_of_a_backfill_are_recorded_not_sent(history_wh, tmp_path):
    from lassi.beacon.alerts import build_alerts

    site = _site(tmp_path, alert_after_hours=24)
    log = tmp_path / "alerts.log"
    # today (UTC) is years after 2018: a backfill
    msg = build_alerts(history_wh, site, DAY3)
    assert msg.endswith("2 not sent (backfill: the date is more than 2 days ago)"), msg
    assert [a[-1] for a in _alerts(history_wh, DAY3)] == ["not sent: backfill"] * 2
    assert history_wh.read("alert", DAY3).filter("sent_at IS NOT NULL").count() == 0
    assert not log.exists()
    build_alerts(history_wh, site, DAY3, today=DAY3 + dt.timedelta(days=3))   # 3 > 2 days
    assert not log.exists()
    # within alerts.max_age_days the same keys are still deliverable, once
    build_alerts(history_wh, site, DAY3, today=DAY3 + dt.timedelta(days=2))
    assert [a[-1] for a in _alerts(history_wh, DAY3)] == ["sent"] * 2
    assert log.read_text().count("Subject: ") == 2
    # a later backfill of the date keeps what was sent and sends nothing
    build_alerts(history_wh, site, DAY3)
    assert [a[-1] for a in _alerts(history_wh, DAY3)] == ["sent"] * 2
    assert log.read_text().count("Subject: ") == 2
    # max_age_days from the site: a week
    week = _site(tmp_path, alert_after_hours=24,
                 alerts={"sink": "file", "path": str(tmp_path / "w.log"), "max_age_days": 7})
    assert week.settings.alerts.max_age_days == 7
    day4 = DAY + dt.timedelta(days=3)
    history_wh.write(history_wh.spark.createDataFrame(
        [_anomaly("fwd", "fwd003", 3, "00:00", "00:30", False, rule="straggler", job="J8",
                  slow=3.0)], COMPONENT_ANOMALY), "component_anomaly", [day4])
    assert build_alerts(history_wh, week, day4, today=day4 + dt.timedelta(days=7)) \
        .startswith("1 alerts: 1 sent")
    assert "fwd003" in (tmp_path / "w.log").read_text()


def test_a_bad_alerts_block_fails_at_load(tmp_path):
    import yaml

    from lassi.core.config import ConfigError, conf_dir

    data = yaml.safe_load((conf_dir() / "sites/taihulight.yaml").read_text())
    data["alerts"] = {"sink": "smtp", "host": "mail.example.org", "from": "beacon@x"}
    p = tmp_path / "site.yaml"
    p.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match="alerts.to: expected addresses, got None") as err:
        load_site(str(p))
    assert str(err.value).startswith(f"{p}: ")
    data["alerts"] = {"sink": "file", "path": "a.log", "max_age_days": "two"}
    p.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError, match="alerts.max_age_days"):
        load_site(str(p))


class _SMTPHandler(socketserver.StreamRequestHandler):
    """Just enough SMTP for smtplib: EHLO, MAIL, RCPT, DATA, QUIT."""

    def _say(self, line: str) -> None:
        self.wfile.write(line.encode() + b"\r\n")

    def handle(self) -> None:
        self._say("220 localhost test SMTP")
        while True:
            line = self.rfile.readline()
            if not line:
                return
            cmd = line.decode().strip().upper()
            if cmd.startswith(("EHLO", "HELO")):
                self._say("250 localhost")
            elif cmd.startswith(("MAIL", "RCPT", "RSET", "NOOP")):
                self._say("250 OK")
            elif cmd == "DATA":
                self._say("354 end with <CRLF>.<CRLF>")
                data = []
                while (part := self.rfile.readline()) not in (b".\r\n", b""):
                    data.append(part[1:] if part.startswith(b"..") else part)
                self.server.messages.append(b"".join(data))
                self._say("250 OK queued")
            elif cmd == "QUIT":
                self._say("221 bye")
                return
            else:
                self._say("502 not implemented")


def test_alerts_to_loopback_smtp(history_wh, tmp_path):
    from lassi.beacon.alerts import build_alerts

    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _SMTPHandler)
    server.messages = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        site = _site(tmp_path, alerts={"sink": "smtp", "host": "127.0.0.1",
                                       "port": server.server_address[1], "from": "beacon@x",
                                       "to": ["ops@x"], "starttls": False})
        assert build_alerts(history_wh, site, DAY3, today=DAY3).startswith("1 alerts: 1 sent")
        assert build_alerts(history_wh, site, DAY3, today=DAY3).startswith("1 alerts: 0 sent")
    finally:
        server.shutdown()
        server.server_close()
    assert len(server.messages) == 1
    m = email.message_from_bytes(server.messages[0], policy=policy.default)
    assert m["Subject"] == "[lassi] straggler OST online1-OST0009 in job J9 (~4.0x slower)"
    assert m["To"] == "ops@x" and m["From"] == "beacon@x"
    assert "estimated slowdown of the job's I/O through it: 4.0x" in m.get_content()
    assert _alerts(history_wh, DAY3) == [("straggler", "ost", "online1-OST0009", "J9", "sent")]


def test_a_failed_delivery_fails_the_stage_and_records_nothing(history_wh, tmp_path):
    from lassi.beacon.alerts import build_alerts

    server = socketserver.TCPServer(("127.0.0.1", 0), _SMTPHandler)
    port = server.server_address[1]
    server.server_close()                     # nobody listens there now
    site = _site(tmp_path, alerts={"sink": "smtp", "host": "127.0.0.1", "port": port,
                                   "from": "beacon@x", "to": "ops@x", "timeout": 5})
    with pytest.raises(OSError):
        build_alerts(history_wh, site, DAY3, today=DAY3)
    assert not history_wh.has("alert", DAY3)      # the retry sends again


# --- end to end on a simulated day -------------------------------------------------------------

def test_simulated_day_finds_the_injected_faults(spark, tmp_path):
    from lassi.ingest.runner import ingest_raw

    from lassi.beacon.components import build_component_anomaly
    from lassi.core.warehouse import Warehouse
    from lassi.sim.runner import simulate

    day = dt.date(2018, 2, 25)
    site = load_site("taihulight", nodes=1024)
    raw = tmp_path / "raw"
    simulate(site, day, 1, 1, raw, traced_fraction=0.0, tokio=False)   # Beacon layers only
    truth = json.loads((raw / "truth.json").read_text())["faults"]
    wh = Warehouse(spark, str(tmp_path / "wh"))
    ingest_raw(spark, wh, site, raw, day)
    build_component_anomaly(wh, site, day)
    found = {(r["kind"], r["component"]): r for r in
             wh.read("component_anomaly", day).filter("rule = 'system'").collect()}
    expected = {(f["kind"], f["name"]): f for f in truth}
    hits = set(found) & set(expected)
    precision, recall = len(hits) / max(len(found), 1), len(hits) / len(expected)
    print(f"component anomalies: precision {precision:.2f}, recall {recall:.2f}, "
          f"found {sorted(found)}")
    assert len(expected) == 2 and precision == 1.0 and recall == 1.0
    for key in hits:
        f, r = expected[key], found[key]
        start = dt.datetime.fromisoformat(f["start"]).replace(tzinfo=None)
        end = dt.datetime.fromisoformat(f["end"]).replace(tzinfo=None)
        assert abs((r["start"] - start).total_seconds()) <= 300, (key, r["start"], start)
        assert abs((r["end"] - end).total_seconds()) <= 300, (key, r["end"], end)
    # `lassi evaluate`'s scoring of the same day agrees (name and time overlap with truth)
    from lassi.evaluate.scores import evaluate_components

    full = json.loads((raw / "truth.json").read_text())
    scores = evaluate_components(wh, full, day, day)
    assert (scores["precision"], scores["recall"], scores["faults_found"]) == (1.0, 1.0, 2)
    # and the daily report lists them, with Table 2 over the period
    from lassi.report.anomaly import component_section

    html = component_section(wh, site, day)
    assert "Failing components" in html and "Table 2" in html
    for f in full["faults"]:
        assert f">{f['name']}<" in html
