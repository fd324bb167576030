"""The hourly LMT DAG (airflow_dags/lassi_lmt_hourly.py) under real Airflow 3.

As in test_airflow_dag.py, Airflow is imported only inside the `airflow` fixture, after
AIRFLOW_HOME points to a throwaway directory; `dag.test()` runs the one task for real
(spark-submit of jobs/archive_lmt.py) against the real MariaDB fixture.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest

from tests.conftest import FAST_JVM
from tests.test_lmt import PACIFIC, load_mysql

REPO = Path(__file__).resolve().parents[1]
DAGS = REPO / "airflow_dags"
DAG_FILE = DAGS / "lassi_lmt_hourly.py"
DAG_ID = "lassi_lmt_hourly"
CONN_ENV = "AIRFLOW_CONN_LASSI_SPARK"
DAG_ENV = ("LASSI_HOME", "LASSI_VENV", "LASSI_LMT_URI", "LASSI_LMT_TZ", "LASSI_WAREHOUSE",
           "LASSI_SITE", "LASSI_START_DATE", "LASSI_SPARK_DRIVER_MEMORY",
           "LASSI_SPARK_JAVA_OPTIONS", "LASSI_LMT_PASSWORD")
HOUR = dt.datetime(2018, 1, 28, 8)       # the hour archived: [08:00, 09:00) UTC
STEP = dt.timedelta(minutes=20)


def _airflow_env(home: Path) -> dict[str, str]:
    return {"AIRFLOW_HOME": str(home), "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}"}


@pytest.fixture(scope="module")
def airflow(tmp_path_factory):
    """Import Airflow with a throwaway AIRFLOW_HOME (skip when not installed); yield the
    home. When another test module imported Airflow first with its own throwaway home, that
    home is used; any other earlier import gives None (no metadata DB of ours)."""
    preloaded = "airflow" in sys.modules
    home = tmp_path_factory.mktemp("airflow_lmt_home")
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    with mock.patch.dict(os.environ, _airflow_env(home)):
        for k in (CONN_ENV, *DAG_ENV):
            os.environ.pop(k, None)
        pytest.importorskip("airflow")
        if preloaded:
            from airflow.configuration import AIRFLOW_HOME

            base = tmp_path_factory.getbasetemp().resolve()
            home = Path(AIRFLOW_HOME).resolve()
            home = home if base in home.parents else None
        yield home
    root.handlers[:] = handlers
    root.setLevel(level)


def _dagbag(**kw):
    import inspect

    from airflow.dag_processing.dagbag import DagBag

    if "include_examples" in inspect.signature(DagBag).parameters:   # Airflow < 3.3
        kw["include_examples"] = False
    return DagBag(dag_folder=str(DAGS), **kw)


@pytest.fixture(scope="module")
def dag(airflow):
    return _dagbag().dags[DAG_ID]


def test_dagbag_imports_cleanly(airflow):
    bag = _dagbag()
    assert bag.import_errors == {}
    assert DAG_ID in bag.dags


def test_dag_file_is_thin(airflow):
    """Parsing the DAG file imports airflow and the standard library only."""
    code = ("import runpy, sys; runpy.run_path(sys.argv[1]); "
            "print(sorted({m.split('.')[0] for m in sys.modules} "
            "& {'lassi', 'ingest', 'jobs', 'pyspark', 'pandas', 'numpy', 'pymysql'}))")
    out = subprocess.run([sys.executable, "-c", code, str(DAG_FILE)], check=True, text=True,
                         capture_output=True, cwd="/").stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_task_and_schedule(dag):
    from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

    (task,) = dag.tasks
    assert isinstance(task, SparkSubmitOperator) and task.task_id == "archive_lmt"
    assert task.retries >= 1 and task.retry_delay.total_seconds() > 0
    assert Path(task.application) == REPO / "jobs" / "archive_lmt.py"
    assert Path(task.application).is_file() and task._conn_id == "lassi_spark"
    assert dag.max_active_runs == 1
    assert set(dag.params) == {"lmt_uri", "tz", "warehouse", "site"}
    from airflow.sdk import timezone

    interval = dag.timetable.infer_manual_data_interval(run_after=timezone.coerce_datetime(
        dt.datetime(2018, 1, 28, 9, 17, tzinfo=dt.timezone.utc)))
    assert (interval.start.hour, interval.end.hour, interval.end.minute) == (8, 9, 0)


@pytest.mark.parametrize("tz", ["", PACIFIC])
def test_rendered_arguments_parse(dag, tz):
    """The rendered argv is what `lassi archive-lmt` accepts, for the run's data interval."""
    from lassi.cli.main import build_parser
    from lassi.tools.lmt_archive import parse_time

    (task,) = dag.tasks
    env = dag.get_template_env()
    start = dt.datetime(2018, 1, 28, 8, tzinfo=dt.timezone.utc)
    params = {"lmt_uri": "mysql://lmt@db:3306/fs", "tz": tz, "warehouse": "/wh",
              "site": "archer"}
    argv = [env.from_string(a).render(params=params, data_interval_start=start,
                                      data_interval_end=start + dt.timedelta(hours=1))
            for a in task.application_args]
    a = build_parser().parse_args(["archive-lmt", *argv])
    assert (a.input, a.warehouse, a.site, a.tz) == ("mysql://lmt@db:3306/fs", "/wh", "archer",
                                                    tz or None)
    assert parse_time(a.start) == HOUR and parse_time(a.end) == HOUR + dt.timedelta(hours=1)


def _hours_db() -> dict[str, list[tuple]]:
    """Samples every 20 minutes from 06:00Z to 10:40Z (local PST in TIMESTAMP_INFO): OST
    k reads k*1000 more bytes per step; MDS `open` grows 5 per step."""
    first = HOUR - dt.timedelta(hours=2)
    ts = [(i + 1, (first + i * STEP - dt.timedelta(hours=8)).strftime("%Y-%m-%d %H:%M:%S"))
          for i in range(15)]
    return {
        "FILESYSTEM_INFO": [(1, "hourfs", "/hour", 1.1)],
        "OSS_INFO": [(1, 1, "hour-oss1", None)],
        "OST_INFO": [(1, 1, "hourfs-OST0000", "hour-oss1", 0, None),
                     (2, 1, "hourfs-OST0001", "hour-oss1", 0, None)],
        "MDS_INFO": [(1, 1, "hourfs-MDT0000", "hour-mds1", None)],
        "OPERATION_INFO": [(1, "open", "reqs")],
        "TIMESTAMP_INFO": ts,
        "OST_DATA": [(k, i, i * k * 1000, i * k * 2000, 0.0, 1, 1, 1, 1)
                     for k in (1, 2) for i, _ in ts],
        "OSS_DATA": [], "MDS_DATA": [],
        "MDS_OPS_DATA": [(1, i, 1, i * 5, 0, 0) for i, _ in ts],
    }


@pytest.fixture(scope="module")
def airflow_db(airflow):
    if airflow is None:
        pytest.skip("airflow was imported before this module set AIRFLOW_HOME")
    from airflow.utils.db import initdb

    initdb()
    return airflow


@pytest.mark.slow
def test_dag_test_archives_one_hour(airflow_db, spark, mariadb, tmp_path):
    """dag.test() for the run after 09:00Z: the warehouse holds exactly 08:00-09:00."""
    from lassi.core.warehouse import Warehouse

    uri = load_mysql(mariadb, "lassi_lmtdag", _hours_db())
    wh = tmp_path / "wh"
    env = {"LASSI_LMT_URI": uri, "LASSI_LMT_TZ": PACIFIC, "LASSI_WAREHOUSE": str(wh),
           "LASSI_SITE": "archer", "LASSI_START_DATE": "2018-01-01",
           "LASSI_SPARK_DRIVER_MEMORY": "1g", "LASSI_SPARK_JAVA_OPTIONS": FAST_JVM}
    with mock.patch.dict(os.environ, env):
        os.environ.pop(CONN_ENV, None)
        os.environ.pop("LASSI_LMT_PASSWORD", None)
        dag = _dagbag().dags[DAG_ID]
        assert dag.params["lmt_uri"] == uri
        for t in dag.tasks:
            t.retries = 0
        dr = dag.test(logical_date=dt.datetime(2018, 1, 28, 9, tzinfo=dt.timezone.utc))
    states = {ti.task_id: ti.state for ti in dr.get_task_instances()}
    assert states == {"archive_lmt": "success"}, states
    w = Warehouse(spark, str(wh))
    ost = sorted(w.read("lmt_ost").collect(), key=lambda r: (r.ost, r.ts))
    want = [HOUR + k * STEP for k in range(3)]
    assert [(r.ost, r.ts) for r in ost] == [(f"hourfs-OST000{k}", t) for k in (0, 1)
                                            for t in want]
    assert [r.read_bytes_delta for r in ost] == [1000] * 3 + [2000] * 3   # seeded at 07:40
    assert {r.interval_s for r in ost} == {1200.0} and not any(r.reset for r in ost)
    mds = w.read("lmt_mds").collect()
    assert sorted(r.ts for r in mds) == want and {r.samples_delta for r in mds} == {5}
    assert w.dates("lmt_ost") == [HOUR.date()]
