"""`lassi why`'s plain-language answer (lassi.tools.why.format_text), no Spark: shares,
causes without a share, the folded tail of minor neighbours."""

from __future__ import annotations

import datetime as dt

from lassi.tools.why import Cause, Diagnosis, format_text


def test_text_ranks_causes_and_folds_minor_neighbours():
    d = Diagnosis("J7", dt.date(2024, 5, 6), app="cfd", user="ann",
                  start=dt.datetime(2024, 5, 6, 10, 0), runtime_s=3600.0, lost_s=600.0,
                  causes=[Cause("component", "fs2-OST0003", 0.7, "slow OST", "restripe", 420),
                          Cause("neighbour", "J9", 0.25, "shared", "move", 150),
                          Cause("neighbour", "J10", 0.01, "shared", "move", 6),
                          Cause("neighbour", "J11", 0.005, "shared", "move", 3),
                          Cause("pattern", "small-requests", 0.0, "tiny writes", "buffer", 0)],
                  notes=["no command-group history"])
    lines = format_text(d).splitlines()
    assert lines[0] == "Job J7 (cfd, ann), started 2024-05-06 10:00 UTC"
    assert lines[1] == "  ran 60.0 min; lost 10.0 min"
    assert lines[2] == "  1. [component] fs2-OST0003: 70 % of the lost time"
    assert lines[5] == "  2. [neighbour] J9: 25 % of the lost time"
    assert lines[8] == "  3. [pattern] small-requests: seen in its I/O; nothing lost is left to it"
    assert lines[11] == ("  + 2 more neighbours with under 2% each (2% together): J10, J11 "
                         "(--json lists all)")
    assert lines[12] == "  note: no command-group history"
    assert d.as_json()["causes"][3]["name"] == "J11"       # JSON keeps every cause


def test_text_of_a_job_with_no_measured_loss():
    d = Diagnosis("D2", dt.date(2024, 5, 6),
                  causes=[Cause("pattern", "random-access", 0.0, "random", "sort", 0)])
    text = format_text(d)
    assert "no lost time measured" in text
    assert "random-access: seen in its I/O; its cost is not measured" in text
