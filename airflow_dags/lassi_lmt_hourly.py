"""
### lassi_lmt_hourly: archive the last hour of the LMT database (TOKIO `archive_lmtdb`)

One task, `archive_lmt`, once an hour: a `spark-submit` of `jobs/archive_lmt.py`, the same
code as `lassi archive-lmt --input <lmt_uri> --from <start> --to <end>`, for the run's data
interval `[data_interval_start, data_interval_end)` (the previous full hour, UTC). The rows of
that hour replace exactly those rows of `lmt_ost` and `lmt_mds`; the rest of the day is kept.
Deltas are seeded by the sample before the hour, so the hours add up to the day archived at
once, and a retry, rerun or backfill of an hour changes nothing else.

**Params** (defaults from the environment of the DAG processor, overridable per run):
`lmt_uri` (`$LASSI_LMT_URI`: `mysql://user@host:port/db` or an LMT `.sqlite3` copy; keep the
password out of the URI: `$LASSI_LMT_PASSWORD` in the workers' environment), `tz`
(`$LASSI_LMT_TZ`: the database's TIMESTAMP_INFO zone; empty = the site's `lmt` zone),
`warehouse` (`$LASSI_WAREHOUSE`), `site` (`$LASSI_SITE`, archer).

Retries: 3, 5 minutes apart (the database may be briefly away; the connector itself
retries a refused connection a few times within seconds). Runs go one at a time.
Spark: the `lassi_spark` connection, local[*] when undefined, as for `lassi_daily`.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from pathlib import Path

from airflow.providers.apache.spark.operators.spark_submit import SparkSubmitOperator
from airflow.sdk import DAG, BaseHook, Param
from airflow.sdk.exceptions import AirflowNotFoundException
from airflow.timetables.interval import CronDataIntervalTimetable

LASSI_HOME = Path(os.environ.get("LASSI_HOME") or Path(__file__).resolve().parents[1])
SPARK_CONN_ID = "lassi_spark"
LOCAL_SPARK_CONN = json.dumps({"conn_type": "spark", "host": "local[*]"})
APPLICATION = LASSI_HOME / "jobs" / "archive_lmt.py"


def _venv_bin() -> Path | None:
    """The bin directory of lassi's virtualenv: $LASSI_VENV, $LASSI_HOME/.venv, or ours."""
    for venv in (os.environ.get("LASSI_VENV"), LASSI_HOME / ".venv"):
        if venv and (Path(venv) / "bin" / "spark-submit").is_file():
            return Path(venv) / "bin"
    here = Path(sys.executable).parent
    return here if (here / "spark-submit").is_file() else None


VENV_BIN = _venv_bin()
SPARK_SUBMIT = str(VENV_BIN / "spark-submit") if VENV_BIN else "spark-submit"
PYTHON = str(VENV_BIN / "python") if VENV_BIN else None


def _spark_environment(context) -> None:
    """pre_execute: local[*] unless `lassi_spark` is defined; lassi's Python for PySpark; the
    archive waits up to $LASSI_LOCK_WAIT s (default here 900) for a daily run writing the
    same warehouse."""
    try:
        BaseHook.get_connection(SPARK_CONN_ID)
    except AirflowNotFoundException:
        os.environ[f"AIRFLOW_CONN_{SPARK_CONN_ID.upper()}"] = LOCAL_SPARK_CONN
    if PYTHON:
        os.environ["PYSPARK_PYTHON"] = os.environ["PYSPARK_DRIVER_PYTHON"] = PYTHON
    os.environ.setdefault("LASSI_LOCK_WAIT", "900")


def _submit_options() -> dict:
    """What the task passes to spark-submit: lassi's driver settings, then the site's own
    `--conf`, `--py-files` and `--archives` ($LASSI_SUBMIT_CONF, $LASSI_SPARK_PY_FILES,
    $LASSI_SPARK_ARCHIVES; as lassi_daily.py, see airflow_dags/README.md)."""
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


# `--tz=Z` when a zone is given, else a harmless repeat of `--site=S` (one argv item either way)
TZ_ARG = "{{ ('--tz=' ~ params.tz) if params.tz else ('--site=' ~ params.site) }}"
ARGS = ["--input", "{{ params.lmt_uri }}",
        "--from", "{{ data_interval_start.isoformat() }}",
        "--to", "{{ data_interval_end.isoformat() }}",
        "--warehouse", "{{ params.warehouse }}", "--site", "{{ params.site }}", TZ_ARG]

with DAG(
    dag_id="lassi_lmt_hourly",
    description="TOKIO archive_lmtdb: the last hour of LMT into lmt_ost / lmt_mds",
    doc_md=__doc__,
    schedule=CronDataIntervalTimetable("0 * * * *", timezone="UTC"),
    start_date=dt.datetime.fromisoformat(os.environ.get("LASSI_START_DATE", "2026-01-01"))
    .replace(tzinfo=dt.timezone.utc),
    catchup=False,         # history: `airflow backfill create` (hours are independent)
    max_active_runs=1,
    default_args={
        "owner": "lassi",
        "retries": 3,
        "retry_delay": dt.timedelta(minutes=5),
        "execution_timeout": dt.timedelta(minutes=50),
    },
    params={
        "lmt_uri": Param(os.environ.get("LASSI_LMT_URI", ""), type="string",
                         description="mysql://user@host:port/db or an LMT .sqlite3 file"),
        "tz": Param(os.environ.get("LASSI_LMT_TZ", ""), type="string",
                    description="TIMESTAMP_INFO time zone (empty: the site's lmt zone)"),
        "warehouse": Param(os.environ.get("LASSI_WAREHOUSE", str(LASSI_HOME / "warehouse")),
                           type="string", description="warehouse root (directory or URI)"),
        "site": Param(os.environ.get("LASSI_SITE", "archer"), type="string",
                      description="site name (conf/sites/<site>.yaml)"),
    },
    tags=["lassi", "tokio"],
) as dag:
    SparkSubmitOperator(
        task_id="archive_lmt",
        application=str(APPLICATION),
        application_args=ARGS,
        name="lassi_lmt_hourly {{ data_interval_start }}",
        conn_id=SPARK_CONN_ID,
        spark_binary=SPARK_SUBMIT,
        driver_memory=os.environ.get("LASSI_SPARK_DRIVER_MEMORY", "2g"),
        **_submit_options(),
        pre_execute=_spark_environment,
    )
