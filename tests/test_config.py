"""Site configuration: the two example sites and clear validation errors."""

from pathlib import Path

import pytest
import yaml

from lassi.core.config import ConfigError, load_site


def test_archer_matches_lassi_paper():
    s = load_site("archer")
    assert len(s.compute_nodes) == 4920
    assert [(f.name, len(f.osts)) for f in s.filesystems] == [("fs2", 48), ("fs3", 48), ("fs4", 56)]
    th = s.settings.thresholds
    assert th.alpha == 2.0 and th.slowdown_factor == 1.5
    assert th.high_mdops == 300 and th.anomaly_peak_fraction == 0.3
    assert th.anomaly_min_minutes == 60
    assert s.window_s == 180 and s.schedulers == ["pbs", "alps"]
    assert s.node_nid("nid00008") == "8@gni1" and s.nid_map["8@gni1"] == "nid00008"


def test_taihulight_forwarding_is_512_to_1():
    s = load_site("taihulight")
    assert len(s.compute_nodes) == 40960 and len(s.fwd_nodes) == 80
    assert s.fwd_of(s.compute_nodes[511]) == "fwd000" and s.fwd_of(s.compute_nodes[512]) == "fwd001"
    assert s.fwd_peak_bw == 2.5e9 and s.data["forwarding"]["threads"] == 16
    ip = s.node_ip(s.compute_nodes[5])
    assert s.nid_map[ip] == s.compute_nodes[5]


def test_scaling_by_node_count():
    t = load_site("taihulight", nodes=2048)
    assert len(t.fwd_nodes) == 4 and len(t.filesystems[0].osts) == 24
    a = load_site("archer", nodes=492)
    assert len(a.compute_nodes) == 492
    assert a.filesystems[0].ost_peak_bw == pytest.approx(6.5e8 / 10)
    assert len(a.filesystems[0].osts) == 48


def _write(tmp_path: Path, change) -> Path:
    data = yaml.safe_load((Path(__file__).parents[1] / "conf/sites/archer.yaml").read_text())
    change(data)
    p = tmp_path / "site.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


@pytest.mark.parametrize("change, message", [
    (lambda d: d.setdefault("thresholds", {}).update(alpha="two"), "thresholds.alpha"),
    (lambda d: d["filesystems"][1].update(osts=-4), "filesystems[1].osts"),
    (lambda d: d["timezones"].update(pbs="Mars/Olympus"), "unknown time zone"),
    (lambda d: d.pop("compute"), "missing required key 'compute'"),
    (lambda d: d["filesystems"].append(dict(d["filesystems"][0])), "unique filesystem name"),
    (lambda d: d.setdefault("thresholds", {}).update(anomaly_peak_fraction=1.5), "fraction"),
    (lambda d: d.setdefault("thresholds", {}).update(dbscan_stage2={"eps": 0.2, "min_samples": 0}),
     "thresholds.dbscan_stage2.min_samples: expected a positive integer"),
    (lambda d: d.setdefault("thresholds", {}).update(cache_thrashing_factor="two"),
     "thresholds.cache_thrashing_factor: expected a positive number"),
    (lambda d: d.setdefault("thresholds", {}).update(fwd_load_bands={"high": 2}),
     "thresholds.fwd_load_bands: expected high, mid and low cut-offs"),
    (lambda d: d.update(risk={"oss_ops": ["read_kb", "nope"], "mds_ops": ["open"]}),
     "risk.oss_ops"),
    (lambda d: d.update(baseline_days=0), "baseline_days: expected a positive integer"),
    (lambda d: d.update(alerts={"sink": "pigeon"}), "alerts.sink: expected file or smtp"),
    (lambda d: d.update(alerts={"sink": "file", "path": ""}), "alerts.path: expected a file path"),
    (lambda d: d.update(alerts={"sink": "smtp", "host": "h", "from": "a@x", "to": [],
                                "port": 25}), "alerts.to: expected addresses"),
    (lambda d: d.update(alerts={"sink": "smtp", "host": "h", "from": "a@x", "to": "b@x",
                                "port": "25"}), "alerts.port: expected a port, got '25'"),
    (lambda d: d.update(alerts={"sink": "smtp", "from": "a@x", "to": "b@x"}),
     "alerts.host: expected a string"),
    (lambda d: d.update(alerts={"sink": "file", "path": "a.log", "max_age_days": -1}),
     "alerts.max_age_days: expected a non-negative integer"),
    (lambda d: d.update(tokio={"jobinfo": ["slurm", "lsf"]}), "tokio.jobinfo: unknown source"),
    (lambda d: d.update(tokio={"p_value": 1.5}), "tokio.p_value"),
    (lambda d: d.update(interference={"significant_share": -0.1}),
     "interference.significant_share: expected a positive number"),
    (lambda d: d.update(wavelet={"level": 0}), "wavelet.level: expected a positive integer"),
])
def test_invalid_site_names_the_key(tmp_path, change, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_site(str(_write(tmp_path, change)))


def test_invalid_settings_fail_at_load_naming_the_file(tmp_path):
    p = _write(tmp_path, lambda d: d.update(alerts={"sink": "smtp", "host": "mail",
                                                    "from": "a@x", "to": ["b@x"], "port": 0}))
    with pytest.raises(ConfigError) as err:
        load_site(str(p))
    assert str(err.value) == f"{p}: alerts.port: expected a port, got 0"


def test_settings_are_typed_frozen_and_defaulted(tmp_path):
    import dataclasses
    import datetime as dt

    from lassi.core.settings import FWD_LOAD_BANDS, Alerts, Diagnosis, Interference, Tokio, Wavelet

    s = load_site("taihulight").settings
    assert (s.window_s, s.baseline_days) == (60, 30)
    assert s.baseline_period(dt.date(2018, 3, 30)) == (dt.date(2018, 3, 1), dt.date(2018, 3, 30))
    th = s.thresholds
    assert (th.dbscan_stage1.eps, th.dbscan_stage1.min_samples,
            th.dbscan_stage1.scale_min_phases) == (0.3, 3, 10)
    assert th.dbscan_one_stage.params() == {"eps": 0.05, "min_samples": 5}
    assert (th.large_job_nodes, th.perf_vector_intervals, th.alert_after_hours) == (512, 20, 96.0)
    assert (th.cache_thrashing_factor, th.write_amplification_factor) == (2.0, 1.2)
    assert th.fwd_load_bands == FWD_LOAD_BANDS
    assert s.risk.oss_ops[:2] == ("read_kb", "read_ops") and "open" in s.risk.mds_ops
    # conf/defaults.yaml and the dataclass defaults agree
    assert s.wavelet == Wavelet() and s.interference == Interference()
    assert s.alerts == Alerts() and s.diagnosis == Diagnosis()
    assert s.tokio == Tokio(mounts=(("/online1", "online1"),))    # the site's Darshan mount
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.baseline_days = 7
    p = _write(tmp_path, lambda d: d.update(
        alerts={"sink": "smtp", "host": "mail", "from": "a@x", "to": "b@x", "password": "pw",
                "max_age_days": 0},
        tokio={"mounts": {"/scratch2": "snx11035"}, "jobinfo": ["darshan"]},
        thresholds={**d.get("thresholds", {}),
                    "fwd_load_bands": {"low": 0.05, "high": 0.8, "mid": 0.4}}))
    s = load_site(str(p)).settings
    assert (s.alerts.sink, s.alerts.port, s.alerts.sender, s.alerts.to) == ("smtp", 25, "a@x",
                                                                            ("b@x",))
    assert s.alerts.max_age_days == 0 and "pw" not in repr(s.alerts)
    assert s.tokio.mounts == (("/scratch2", "snx11035"),) and s.tokio.jobinfo == ("darshan",)
    assert s.thresholds.fwd_load_bands == (("high", 0.8), ("mid", 0.4), ("low", 0.05))


def test_unknown_site_and_bad_yaml(tmp_path):
    with pytest.raises(ConfigError, match="unknown site 'nowhere'"):
        load_site("nowhere")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_site(str(bad))


def test_spark_conf_from_env_keeps_commas_inside_a_value(monkeypatch):
    """LASSI_SPARK_CONF is k=v,k=v; a comma inside a value (the JVM's -Xlog:a,b) stays in it."""
    from lassi.core.config import spark_defaults

    monkeypatch.setenv("LASSI_SPARK_CONF", "spark.driver.extraJavaOptions=-Xlog:cds=off,"
                       "cds+dynamic=off -Xmx1g, spark.sql.shuffle.partitions=3")
    got = spark_defaults()
    assert got["spark.driver.extraJavaOptions"] == "-Xlog:cds=off,cds+dynamic=off -Xmx1g"
    assert got["spark.sql.shuffle.partitions"] == "3" and "cds+dynamic" not in got
    monkeypatch.setenv("LASSI_SPARK_CONF", "spark.ui.enabled")
    with pytest.raises(ConfigError, match="expected key=value, got 'spark.ui.enabled'"):
        spark_defaults()
