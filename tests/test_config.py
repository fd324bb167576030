"""Site configuration: the two example sites and clear validation errors."""

from pathlib import Path

import pytest
import yaml

from lassi.core.config import ConfigError, load_site


def test_archer_matches_lassi_paper():
    s = load_site("archer")
    assert len(s.compute_nodes) == 4920
    assert [(f.name, len(f.osts)) for f in s.filesystems] == [("fs2", 48), ("fs3", 48), ("fs4", 56)]
    assert s.thresholds["alpha"] == 2.0 and s.thresholds["slowdown_factor"] == 1.5
    assert s.thresholds["high_mdops"] == 300 and s.thresholds["anomaly_peak_fraction"] == 0.3
    assert s.thresholds["anomaly_min_minutes"] == 60
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
])
def test_invalid_site_names_the_key(tmp_path, change, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        load_site(str(_write(tmp_path, change)))


def test_unknown_site_and_bad_yaml(tmp_path):
    with pytest.raises(ConfigError, match="unknown site 'nowhere'"):
        load_site("nowhere")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_site(str(bad))
