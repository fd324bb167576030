"""The same jobs on a Spark cluster: a standalone master and one worker started from
pyspark's own `spark-class` on loopback run the day (`jobs/daily.py --raw`: ingest, then
every stage) through `spark-submit --master spark://…`, and every table equals the local
run's.

The worker's Python is a bare virtualenv holding only pyspark's Python dependencies
(pandas, pyarrow, numpy): lassi reaches the executors as on a real cluster, the built wheel
shipped with `--py-files`. The driver runs from a virtualenv with the wheel installed
(tests/test_packaging.py). The bare virtualenv is made once by `make test`
(`.venv-worker`), or here with pip when it is missing.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import C1_ONLY, FAST_JVM
from tests.test_packaging import REPO, _env, _venv, wheel  # noqa: F401 - wheel: a fixture

DATE = dt.date(2017, 10, 10)
WORKER_VENV = REPO / ".venv-worker"
# columns that say when a run happened, not what it found
WHEN = {"ingested_at", "sent_at", "built_at", "generated_at"}


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def _bare_python(tmp: Path) -> Path:
    """Python of a virtualenv with pyspark's dependencies only (no lassi, no scikit-learn,
    no PyYAML): `.venv-worker` when `make test` made it, else one made here."""
    py = WORKER_VENV / "bin" / "python"
    if py.exists():
        return py
    import numpy
    import pyarrow

    root = tmp / "worker-venv"
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, timeout=120)
    p = subprocess.run([str(root / "bin" / "pip"), "install", "-q", f"pandas=={pd.__version__}",
                        f"pyarrow=={pyarrow.__version__}", f"numpy=={numpy.__version__}"],
                       capture_output=True, text=True, timeout=600)
    if p.returncode:
        pytest.skip(f"cannot make the worker's virtualenv: {p.stderr.strip()[-300:]}")
    return root / "bin" / "python"


def _wait_for(log: Path, text: str, proc: subprocess.Popen, timeout: float = 90) -> None:
    end = time.time() + timeout
    while time.time() < end:
        if log.exists() and text in log.read_text(errors="replace"):
            return
        if proc.poll() is not None:
            break
        time.sleep(0.5)
    raise AssertionError(f"{log.name}: no {text!r}:\n{log.read_text(errors='replace')[-3000:]}")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """(master URL, worker Python): a standalone master and a 2-core worker on loopback."""
    tmp = tmp_path_factory.mktemp("cluster")
    bare = _bare_python(tmp)
    home = _spark_home()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
    env.update(SPARK_HOME=str(home), SPARK_LOCAL_IP="127.0.0.1", PYSPARK_PYTHON=str(bare),
               SPARK_LOG_DIR=str(tmp / "logs"), SPARK_WORKER_DIR=str(tmp / "work"))
    port = _port()
    url = f"spark://127.0.0.1:{port}"
    procs = []
    try:
        for name, args, ready in (
                ("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                            "--port", str(port), "--webui-port", str(_port())],
                 "I have been elected leader"),
                ("worker", ["org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                            "--cores", "2", "--memory", "2g", "--webui-port", str(_port()),
                            "--work-dir", str(tmp / "work"), url],
                 "Successfully registered with master")):
            log = tmp / f"{name}.log"
            with log.open("w") as fh:
                procs.append(subprocess.Popen([str(home / "bin" / "spark-class"), *args],
                                              stdout=fh, stderr=subprocess.STDOUT, env=env))
            _wait_for(log, ready, procs[-1])
        yield url, bare, env
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


def _table(root: Path, table: str) -> pd.DataFrame:
    """A table of a local warehouse, sorted, without the columns that date the run."""
    df = pd.read_parquet(root / table)
    df = df[[c for c in df.columns if c not in WHEN]]
    df = df.astype({c: str for c in df.columns if df[c].dtype == object})
    return df.sort_values(list(df.columns)).reset_index(drop=True)


def test_cluster_run_equals_local_run(cluster, wheel, archer_day, tmp_path):  # noqa: F811
    """The shared 4-node ARCHER day (conftest.archer_day: simulated, ingested and run in
    this process) equals the same day run on the cluster from its raw files."""
    url, bare, cluster_env = cluster
    seen = subprocess.run([str(bare), "-c", "import lassi"], capture_output=True, text=True,
                          cwd=tmp_path)
    assert seen.returncode == 1 and "No module named 'lassi'" in seen.stderr
    assert (archer_day.date, archer_day.nodes) == (DATE, 4)
    raw, local = archer_day.raw, archer_day.warehouse

    venv = _venv(tmp_path / "driver", wheel)
    pyfiles = tmp_path / "lassi.zip"               # PySpark puts .zip (not .whl) on the path
    shutil.copy(wheel, pyfiles)
    env = {**_env(tmp_path), "SPARK_HOME": cluster_env["SPARK_HOME"],
           "SPARK_LOCAL_IP": "127.0.0.1"}
    env.pop("LASSI_SPARK_MASTER")
    wh = tmp_path / "cluster"
    common = ["--date", DATE.isoformat(), "--warehouse", str(wh), "--site", "archer",
              "--nodes", "4"]
    submit = [str(Path(cluster_env["SPARK_HOME"]) / "bin" / "spark-submit"), "--master", url,
              "--py-files", str(pyfiles), "--conf", f"spark.pyspark.python={bare}",
              "--conf", f"spark.pyspark.driver.python={venv / 'bin' / 'python'}",
              "--driver-memory", "1g", "--executor-memory", "1g",
              "--conf", "spark.sql.shuffle.partitions=3", "--conf", "spark.ui.enabled=false",
              "--conf", f"spark.driver.extraJavaOptions=-Duser.timezone=UTC {FAST_JVM}",
              "--conf", f"spark.executor.extraJavaOptions={C1_ONLY}"]
    # the whole day in one submission (`lassi run daily --raw`): ingest, then every stage
    t = time.time()
    p = subprocess.run([*submit, str(REPO / "jobs" / "daily.py"), "--raw", str(raw), *common],
                       env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, f"daily.py failed:\n{p.stdout[-3000:]}\n{p.stderr[-6000:]}"
    assert "lustre: " in p.stdout and "app_hour: " in p.stdout, p.stdout[-2000:]
    print(f"daily.py --raw on the cluster: {time.time() - t:.0f} s")

    tables = sorted(p.name for p in local.iterdir() if not p.name.startswith("_"))
    assert {"raw_lustre_stats", "app_run", "node_window", "app_hour", "fs_hour",
            "run_slowdown", "job_diagnosis"} <= set(tables)
    assert sorted(p.name for p in wh.iterdir() if not p.name.startswith("_")) == tables
    for t in tables:
        a, b = _table(local, t), _table(wh, t)
        pd.testing.assert_frame_equal(a, b, check_dtype=False, obj=t)
    assert not (wh / "_staging").exists() or not any((wh / "_staging").rglob("*.parquet"))
    # the executors ran on the worker, each application with the wheel it was given
    apps = list((Path(cluster_env["SPARK_WORKER_DIR"])).glob("app-*"))
    assert len(apps) == 1 and all(any(a.rglob("lassi.zip")) for a in apps), apps
