"""
### lassi_daily: one site-day of LASSi I/O analytics

`ingest` → `risk` → `beacon` → `tokio` → `siox` → `report`, each task one `spark-submit`
of a thin entry point in `$LASSI_HOME/jobs/` for the run's date `{{ ds }}`:

* **ingest**: `jobs/ingest_raw.py --raw <raw_root> --date <ds>`, everything the collectors (or
  the simulator) wrote for that date;
* **one task per stage family** of `lassi.pipeline.daily.FAMILIES` (LASSi `risk`, `beacon`,
  `tokio`, `siox`), in order: `jobs/daily.py --family <name> --date <ds>` runs the family's
  stages in order in one Spark session (a JVM per family, not per stage; one stage alone:
  `lassi run daily --stage NAME`). A stage with nothing to do for the site or day (Beacon
  stages on ARCHER) returns at once, and a family of such stages starts no Spark
  application (no executors);
* **report**: `jobs/report.py --out <report_root>`, the daily HTML report in
  `<report_root>/<site>-<ds>/`.

**Idempotent per date.** Every job rewrites its own date's partitions from its inputs, so a
retry, a cleared task, a rerun or a backfill over dates that already ran is safe: it
replaces, never appends. (`alerts` records every alert in its date's partition and
delivers only those never sent before, and none for dates more than `alerts.max_age_days`
before today: a backfill never mails.) Runs go one at a time (`max_active_runs=1`): Spark
is `local[*]` on one machine by default. A backfill ignores that limit, so give it
`--max-active-runs 1`:
`airflow backfill create --dag-id lassi_daily --from-date A --to-date B --max-active-runs 1`.

**Params** (defaults from the environment of the DAG processor, overridable per run):
`raw_root` (`$LASSI_RAW`), `warehouse` (`$LASSI_WAREHOUSE`), `report_root`
(`$LASSI_REPORTS`), `site` (`$LASSI_SITE`, archer), `nodes` (`$LASSI_NODES`, optional).

**Spark** comes from the Airflow connection `lassi_spark`; when it is not defined the jobs run
with master `local[*]` (the provider alone would fall back to `yarn`). `spark-submit` and the
Python that runs the jobs are those of lassi's virtualenv (`$LASSI_VENV`, default
`$LASSI_HOME/.venv`). See `airflow_dags/README.md`.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from pathlib import Path

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import DAG, BaseHook, Param, chain
from airflow.sdk.exceptions import AirflowNotFoundException

# The stage families of lassi.pipeline.daily.FAMILIES, in order (kept literal: the DAG file
# imports no lassi; a test checks it).
FAMILIES = ["risk", "beacon", "tokio", "siox"]

LASSI_HOME = Path(os.environ.get("LASSI_HOME") or Path(__file__).resolve().parents[1])
SPARK_CONN_ID = "lassi_spark"
# What `lassi_spark` means when it is not defined: local[*] (JSON form of an Airflow connection).
LOCAL_SPARK_CONN = json.dumps({"conn_type": "spark", "host": "local[*]"})


def _venv_bin() -> Path | None:
    """The bin directory of lassi's virtualenv: $LASSI_VENV, $LASSI_HOME/.venv, or ours."""
    for venv in (os.environ.get("LASSI_VENV"), LASSI_HOME / ".venv"):
        if venv and (Path(venv) / "bin" / "spark-submit").is_file():
            return Path(venv) / "bin"
    here = Path(sys.executable).parent
    return here if (here / "spark-submit").is_file() else None


VENV_BIN = _venv_bin()
SPARK_SUBMIT = str(VENV_BIN / "spark-submit") if VENV_BIN else "spark-submit"   # else PATH
PYTHON = str(VENV_BIN / "python") if VENV_BIN else None


def _spark_environment(context) -> None:
    """pre_execute of every Spark task: local[*] unless `lassi_spark` exists; lassi's Python.

    SparkSubmitHook falls back to master `yarn` when its connection is missing; defining the
    connection in this task's process environment (only when no backend has it, so a
    connection set in the UI, CLI or a secrets backend wins) makes the fallback local[*].
    spark-submit's launcher script and the driver both pick Python from PYSPARK_*. A task
    that finds another command writing the warehouse (a manual run, a retry's first try)
    waits up to $LASSI_LOCK_WAIT seconds for it (default here 900) before it fails.
    """
    try:
        BaseHook.get_connection(SPARK_CONN_ID)
    except AirflowNotFoundException:
        os.environ[f"AIRFLOW_CONN_{SPARK_CONN_ID.upper()}"] = LOCAL_SPARK_CONN
    if PYTHON:
        os.environ["PYSPARK_PYTHON"] = os.environ["PYSPARK_DRIVER_PYTHON"] = PYTHON
    os.environ.setdefault("LASSI_LOCK_WAIT", "900")


def _submit_options() -> dict:
    """What every task passes to spark-submit: lassi's driver settings, then a site's own
    (airflow_dags/README.md): `--conf` items from $LASSI_SUBMIT_CONF (k=v,k=v, e.g. the
    executors' Python), `--py-files` from $LASSI_SPARK_PY_FILES (the wheel as a .zip) and
    `--archives` from $LASSI_SPARK_ARCHIVES (a packed environment). The driver runs lassi's
    Python even when the executors get another one."""
    conf = {"spark.driver.extraJavaOptions":
            f"-Duser.timezone=UTC {os.environ.get('LASSI_SPARK_JAVA_OPTIONS', '')}".strip(),
            "spark.ui.showConsoleProgress": "false"}
    if PYTHON:
        conf["spark.pyspark.driver.python"] = PYTHON
    for item in filter(None, (x.strip() for x in os.environ.get("LASSI_SUBMIT_CONF", "")
                              .split(","))):
        k, _, v = item.partition("=")
        conf[k.strip()] = v.strip()
    return {"conf": conf, "py_files": os.environ.get("LASSI_SPARK_PY_FILES") or None,
            "archives": os.environ.get("LASSI_SPARK_ARCHIVES") or None}


def _env_nodes() -> int | None:
    v = os.environ.get("LASSI_NODES", "").strip()
    return int(v) if v else None


# One argv item either way: `--nodes=N`, or (nodes unset) a harmless repeat of `--site=S`.
NODES_ARG = "{{ ('--nodes=' ~ params.nodes) if params.nodes else ('--site=' ~ params.site) }}"
SITE_ARGS = ["--date", "{{ ds }}", "--warehouse", "{{ params.warehouse }}",
             "--site", "{{ params.site }}", NODES_ARG]


def _spark_task(task_id: str, job: str, args: list[str]) -> SparkSubmitOperator:
    return SparkSubmitOperator(
        task_id=task_id,
        application=str(LASSI_HOME / "jobs" / job),
        application_args=[*args, *SITE_ARGS],
        name=f"lassi_daily.{task_id} {{{{ ds }}}}",
        conn_id=SPARK_CONN_ID,
        spark_binary=SPARK_SUBMIT,
        driver_memory=os.environ.get("LASSI_SPARK_DRIVER_MEMORY", "4g"),
        **_submit_options(),
        pre_execute=_spark_environment,
    )


with DAG(
    dag_id="lassi_daily",
    description="lassi daily: ingest raw I/O data, analysis stages, HTML report",
    doc_md=__doc__,
    schedule="@daily",
    start_date=dt.datetime.fromisoformat(os.environ.get("LASSI_START_DATE", "2026-01-01"))
    .replace(tzinfo=dt.timezone.utc),
    catchup=True,          # missed days are caught up; `airflow backfill create` for history
    max_active_runs=1,
    default_args={
        "owner": "lassi",
        "retries": 2,
        "retry_delay": dt.timedelta(minutes=10),
        "execution_timeout": dt.timedelta(hours=6),
    },
    params={
        "raw_root": Param(os.environ.get("LASSI_RAW", str(LASSI_HOME / "raw")), type="string",
                          description="folder the site's collectors (or the simulator) write"),
        "warehouse": Param(os.environ.get("LASSI_WAREHOUSE", str(LASSI_HOME / "warehouse")),
                           type="string", description="warehouse root (directory or URI)"),
        "report_root": Param(os.environ.get("LASSI_REPORTS", str(LASSI_HOME / "reports")),
                             type="string", description="reports go to <report_root>/<site>-<ds>/"),
        "site": Param(os.environ.get("LASSI_SITE", "archer"), type="string",
                      description="site name (conf/sites/<site>.yaml)"),
        "nodes": Param(_env_nodes(), type=["null", "integer"],
                       description="override the site's compute-node count (optional)"),
    },
    tags=["lassi"],
) as dag:
    tasks = [_spark_task("ingest", "ingest_raw.py", ["--raw", "{{ params.raw_root }}"])]
    tasks += [_spark_task(name, "daily.py", ["--family", name]) for name in FAMILIES]
    tasks.append(_spark_task("report", "report.py",
                             ["--out", "{{ params.report_root }}"]))
    chain(*tasks)
