"""A Spark standalone cluster on loopback for the tests: a master and one 2-core worker started
from pyspark's own `spark-class` (tests/test_airflow_dag.py runs the daily DAG on it).

The worker's Python is a bare virtualenv holding only pyspark's Python dependencies
(pandas, pyarrow, numpy): lassi reaches the executors as on a real cluster, the built wheel
shipped with `--py-files`. The bare virtualenv is made once by `make test`
(`.venv-worker`), or here with pip when it is missing.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import FAST_JVM

REPO = Path(__file__).resolve().parents[1]
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
               SPARK_LOG_DIR=str(tmp / "logs"), SPARK_WORKER_DIR=str(tmp / "work"),
               # the master's and worker's own JVMs start as the tests' others do
               SPARK_DAEMON_JAVA_OPTS=FAST_JVM)
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


def table(root: Path, table: str) -> pd.DataFrame:
    """A table of a local warehouse, sorted, without the columns that date the run."""
    df = pd.read_parquet(root / table)
    df = df[[c for c in df.columns if c not in WHEN]]
    df = df.astype({c: str for c in df.columns if df[c].dtype == object})
    return df.sort_values(list(df.columns)).reset_index(drop=True)
