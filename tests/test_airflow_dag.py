"""The daily Airflow DAG (airflow_dags/lassi_daily.py) under real Airflow 3.

Airflow is imported only inside the `airflow` fixture, after AIRFLOW_HOME points to a
throwaway directory (Airflow reads its home and metadata DB at import time); the sqlite
metadata DB that `dag.test()` needs is created only by the slow test.
"""

from __future__ import annotations

import datetime as dt
import inspect
import logging
import os
import runpy
import shutil
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pandas as pd
import pytest

from tests.conftest import FAST_JVM
from tests.spark_cluster import cluster, table  # noqa: F401 - cluster: a fixture
from tests.test_packaging import _venv, wheel  # noqa: F401 - wheel: a fixture

REPO = Path(__file__).resolve().parents[1]
DAGS = REPO / "airflow_dags"
DAG_FILE = DAGS / "lassi_daily.py"
DATE = dt.date(2017, 10, 10)
CONN_ENV = "AIRFLOW_CONN_LASSI_SPARK"
# what the DAG file reads at parse time: the tests start from its defaults
DAG_ENV = ("LASSI_HOME", "LASSI_VENV", "LASSI_RAW", "LASSI_WAREHOUSE", "LASSI_REPORTS",
           "LASSI_SITE", "LASSI_NODES", "LASSI_START_DATE", "LASSI_SPARK_DRIVER_MEMORY",
           "LASSI_SPARK_JAVA_OPTIONS", "LASSI_SUBMIT_CONF", "LASSI_SPARK_PY_FILES",
           "LASSI_SPARK_ARCHIVES")


def _airflow_env(home: Path) -> dict[str, str]:
    return {"AIRFLOW_HOME": str(home), "AIRFLOW__CORE__DAGS_FOLDER": str(DAGS),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": f"sqlite:///{home / 'airflow.db'}"}


@pytest.fixture(scope="module")
def airflow(tmp_path_factory):
    """Import Airflow with a throwaway AIRFLOW_HOME (skip when not installed); yield the home.

    The home is None when something imported Airflow earlier with its own configuration.
    """
    preloaded = "airflow" in sys.modules
    home = tmp_path_factory.mktemp("airflow_home")
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    with mock.patch.dict(os.environ, _airflow_env(home)):
        for k in (CONN_ENV, *DAG_ENV):
            os.environ.pop(k, None)
        pytest.importorskip("airflow")
        yield None if preloaded else home
    # importing airflow points the root logger at the (captured) stdout of that moment;
    # later log lines (py4j's at exit) would hit a closed stream
    root.handlers[:] = handlers
    root.setLevel(level)


def _dagbag(**kw):
    from airflow.dag_processing.dagbag import DagBag

    if "include_examples" in inspect.signature(DagBag).parameters:   # Airflow < 3.3
        kw["include_examples"] = False
    return DagBag(dag_folder=str(DAGS), **kw)


@pytest.fixture(scope="module")
def dag(airflow):
    return _dagbag().dags["lassi_daily"]


@pytest.fixture(scope="module")
def dagfile(airflow):
    """The DAG file's globals (constants and helpers)."""
    return runpy.run_path(str(DAG_FILE))


def test_dagbag_imports_cleanly(airflow):
    bag = _dagbag()
    assert bag.import_errors == {}
    assert "lassi_daily" in bag.dags


def test_dag_file_is_thin(airflow):
    """Parsing the DAG file imports airflow and the standard library only."""
    code = ("import runpy, sys; runpy.run_path(sys.argv[1]); "
            "print(sorted({m.split('.')[0] for m in sys.modules} "
            "& {'lassi', 'ingest', 'jobs', 'pyspark', 'pandas', 'numpy', 'pyarrow'}))")
    out = subprocess.run([sys.executable, "-c", code, str(DAG_FILE)], check=True, text=True,
                         capture_output=True, cwd="/").stdout     # a fresh interpreter
    assert out.strip().splitlines()[-1] == "[]"


def test_task_graph(dag, dagfile):
    from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator

    from lassi.pipeline.daily import FAMILIES, STAGES

    assert dagfile["FAMILIES"] == list(FAMILIES)
    assert [s for f in FAMILIES.values() for s in f] == list(STAGES)   # contiguous, in order
    order = ["ingest", *FAMILIES, "report"]
    assert sorted(dag.task_ids) == sorted(order)
    for up, down in zip(order, order[1:], strict=False):
        assert dag.get_task(up).downstream_task_ids == {down}
        assert dag.get_task(down).upstream_task_ids == {up}
    assert dag.get_task("ingest").upstream_task_ids == set()
    assert dag.get_task("report").downstream_task_ids == set()
    for t in dag.tasks:
        assert isinstance(t, SparkSubmitOperator)
        assert t.retries >= 1 and t.retry_delay.total_seconds() > 0
        app = Path(t.application)
        assert app.parent == REPO / "jobs"
        if t.task_id == "report":
            assert app.name == "report.py"      # written separately; may not exist yet
        else:
            assert app.is_file(), app
        assert t._conn_id == "lassi_spark"
    for name in FAMILIES:
        args = dag.get_task(name).application_args
        assert Path(dag.get_task(name).application).name == "daily.py"
        assert args[args.index("--family") + 1] == name
    assert dag.schedule == "@daily"
    assert dag.catchup and dag.max_active_runs == 1
    assert set(dag.params) == {"raw_root", "warehouse", "report_root", "site", "nodes"}


@pytest.mark.parametrize("nodes", [None, 16])
def test_rendered_arguments_parse(dag, nodes):
    """Every task's rendered argv, after its script's `lassi` verb, is accepted by the CLI."""
    from lassi.cli.main import build_parser

    env = dag.get_template_env()
    params = {"raw_root": "/raw", "warehouse": "/wh", "report_root": "/rep", "site": "archer",
              "nodes": nodes}
    verbs = {"ingest": ["ingest"], "report": ["report", "daily"]}
    for t in dag.tasks:
        argv = [env.from_string(a).render(ds=DATE.isoformat(), params=params)
                for a in t.application_args]
        script = runpy.run_path(t.application)["ARGV"]      # not run: __name__ != "__main__"
        assert script == verbs.get(t.task_id, ["run", "daily"])
        a = build_parser().parse_args([*script, *argv])
        assert (a.warehouse, a.site, a.nodes) == ("/wh", "archer", nodes)
        if t.task_id == "ingest":
            assert (a.raw, a.date) == ("/raw", DATE)
        elif t.task_id == "report":
            assert (a.out, a.date, a.date_from, a.date_to) == ("/rep", DATE.isoformat(), None,
                                                               None)
        else:
            assert (a.family, a.stage, a.date) == ([t.task_id], None, DATE)


def test_missing_connection_means_local(dagfile, monkeypatch):
    """No `lassi_spark` connection: local[*] (not the provider's yarn); a defined one wins."""
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    monkeypatch.delenv(CONN_ENV, raising=False)
    for k in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON"):
        monkeypatch.setenv(k, "")          # so that monkeypatch removes them afterwards
    dagfile["_spark_environment"]({})
    assert SparkSubmitHook(conn_id="lassi_spark")._connection["master"] == "local[*]"
    venv = REPO / ".venv" / "bin"
    if (venv / "spark-submit").is_file():          # lassi's venv: its spark-submit and Python
        assert dagfile["SPARK_SUBMIT"] == str(venv / "spark-submit")
        assert os.environ["PYSPARK_PYTHON"] == os.environ["PYSPARK_DRIVER_PYTHON"] \
            == str(venv / "python")

    monkeypatch.setenv(CONN_ENV, "spark://spark-master.example:7077")
    dagfile["_spark_environment"]({})
    assert os.environ[CONN_ENV] == "spark://spark-master.example:7077"
    assert (SparkSubmitHook(conn_id="lassi_spark")._connection["master"]
            == "spark://spark-master.example:7077")


def test_cluster_submit_options(dagfile, monkeypatch):
    """A site's --conf, --py-files and --archives reach spark-submit; the driver's Python
    stays lassi's even when the executors get another (spark.pyspark.python would set
    both)."""
    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    opts = dagfile["_submit_options"]()
    assert (opts["py_files"], opts["archives"]) == (None, None)
    assert opts["conf"].get("spark.pyspark.driver.python") == dagfile["PYTHON"]
    monkeypatch.setenv("LASSI_SUBMIT_CONF", " spark.pyspark.python=./env/bin/python, "
                       "spark.executor.memory=8g")
    monkeypatch.setenv("LASSI_SPARK_PY_FILES", "/opt/lassi/lassi-0.1.0.zip")
    monkeypatch.setenv("LASSI_SPARK_ARCHIVES", "/opt/lassi/env.tar.gz#env")
    monkeypatch.setenv(CONN_ENV, "spark://spark-master.example:7077")
    opts = dagfile["_submit_options"]()
    cmd = SparkSubmitHook(conn_id="lassi_spark", **opts)._build_spark_submit_command("a.py")
    text = " ".join(cmd)
    assert "--py-files /opt/lassi/lassi-0.1.0.zip" in text
    assert "--archives /opt/lassi/env.tar.gz#env" in text
    assert "--conf spark.pyspark.python=./env/bin/python" in text
    assert "--conf spark.executor.memory=8g" in text
    assert "--master spark://spark-master.example:7077" in text


@pytest.fixture(scope="module")
def airflow_db(airflow):
    """The sqlite metadata DB of the throwaway AIRFLOW_HOME, created once."""
    if airflow is None:
        pytest.skip("airflow was imported before this module set AIRFLOW_HOME")
    from airflow.utils.db import initdb

    initdb()
    return airflow


def _driver_venv(root: Path, whl: Path) -> Path:
    """A virtualenv with the built wheel installed (tests/test_packaging._venv) and a
    `bin/spark-submit` that runs pyspark's: what a site's lassi environment looks like to
    the DAG ($LASSI_VENV)."""
    from tests.spark_cluster import _spark_home

    venv = _venv(root, whl)
    submit = venv / "bin" / "spark-submit"
    submit.write_text(f'#!/bin/sh\nexec "{_spark_home() / "bin" / "spark-submit"}" "$@"\n')
    submit.chmod(0o755)
    return venv


@pytest.mark.slow
def test_dag_runs_the_day_on_a_spark_cluster(airflow_db, archer_day, cluster, wheel,  # noqa: F811
                                             tmp_path):
    """dag.test() of the daily DAG on the shared simulated ARCHER day (conftest.archer_day),
    every task a `spark-submit --master spark://…` to a standalone cluster on loopback
    (tests/spark_cluster.py), as a site deploys it (airflow_dags/README.md): the `lassi_spark`
    connection names the master, the driver runs lassi from the built wheel ($LASSI_VENV),
    the executors get the wheel through `--py-files` ($LASSI_SPARK_PY_FILES) and a bare
    Python that has no lassi ($LASSI_SUBMIT_CONF). Every task succeeds, each application ran
    on the worker with the wheel, the report exists, and every table equals the in-process
    run's."""
    url, bare, cluster_env = cluster
    seen = subprocess.run([str(bare), "-c", "import lassi"], capture_output=True, text=True,
                          cwd=tmp_path)
    assert seen.returncode == 1 and "No module named 'lassi'" in seen.stderr
    venv = _driver_venv(tmp_path / "driver", wheel)
    pyfiles = tmp_path / "lassi.zip"               # PySpark puts .zip (not .whl) on the path
    shutil.copy(wheel, pyfiles)

    raw, wh, reports = archer_day.raw, tmp_path / "wh", tmp_path / "reports"
    env = {"LASSI_RAW": str(raw), "LASSI_WAREHOUSE": str(wh), "LASSI_REPORTS": str(reports),
           "LASSI_SITE": "archer", "LASSI_NODES": str(archer_day.nodes),
           "LASSI_VENV": str(venv), "LASSI_SPARK_PY_FILES": str(pyfiles),
           "LASSI_SPARK_DRIVER_MEMORY": "1g", "LASSI_SPARK_JAVA_OPTIONS": FAST_JVM,
           "LASSI_SUBMIT_CONF": f"spark.pyspark.python={bare},spark.executor.memory=1g,"
                                "spark.sql.shuffle.partitions=3,spark.ui.enabled=false,"
                                f"spark.executor.extraJavaOptions={FAST_JVM}",
           "LASSI_LOG_DIR": str(tmp_path / "logs"), "SPARK_LOCAL_IP": "127.0.0.1",
           "SPARK_HOME": cluster_env["SPARK_HOME"], CONN_ENV: url,
           # Airflow creates no tasks for a (non-backfill) run dated before start_date
           "LASSI_START_DATE": DATE.isoformat()}
    assert archer_day.date == DATE
    with mock.patch.dict(os.environ, env):
        for k in ("LASSI_SPARK_MASTER", "LASSI_SPARK_CONF", "PYTHONPATH"):
            os.environ.pop(k, None)                 # nothing that points back at the clone
        dag = _dagbag().dags["lassi_daily"]           # parsed now: defaults from env
        assert dag.params["raw_root"] == str(raw) and dag.params["nodes"] == archer_day.nodes
        for t in dag.tasks:
            assert t.conf["spark.driver.extraJavaOptions"] == f"-Duser.timezone=UTC {FAST_JVM}"
            assert t.conf["spark.pyspark.driver.python"] == str(venv / "bin" / "python")
            assert t.conf["spark.pyspark.python"] == str(bare)
            t.retries = 0                             # fail fast instead of waiting to retry
        dr = dag.test(logical_date=dt.datetime(DATE.year, DATE.month, DATE.day,
                                               tzinfo=dt.timezone.utc))
    states = {ti.task_id: ti.state for ti in dr.get_task_instances()}
    assert sorted(states) == sorted(dag.task_ids)
    assert states == {t: "success" for t in dag.task_ids}, states
    assert (reports / f"archer-{DATE.isoformat()}" / "index.html").exists(), "no report"
    # one application per task that had work, each run by the worker's executors with the
    # wheel it was given; the beacon family has nothing to do on ARCHER and asked for none
    apps = list(Path(cluster_env["SPARK_WORKER_DIR"]).glob("app-*"))
    assert len(apps) == len(dag.tasks) - 1 and all(any(a.rglob("lassi.zip")) for a in apps), \
        apps

    clean = archer_day.warehouse
    tables = sorted(p.name for p in clean.iterdir() if not p.name.startswith("_"))
    assert {"raw_lustre_stats", "app_run", "node_window", "app_hour", "fs_hour",
            "run_slowdown", "job_diagnosis"} <= set(tables)
    assert sorted(p.name for p in wh.iterdir() if not p.name.startswith("_")) == tables
    for t in tables:
        pd.testing.assert_frame_equal(table(clean, t), table(wh, t), check_dtype=False, obj=t)
    assert table(wh, "run_slowdown")["slowdown"].notna().any()
    assert not (wh / "_staging").exists() or not any((wh / "_staging").rglob("*.parquet"))
