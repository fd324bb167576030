"""The one SparkSession factory.

`local[*]` unless a master is given (argument, `$LASSI_SPARK_MASTER`) or the process was
launched by `spark-submit`, in which case the submitted master and settings win (lassi's
`spark.sql.*` defaults fill only what the submission left unset). Session time zone is UTC;
other settings come from `conf/spark-defaults.yaml` and `$LASSI_SPARK_CONF`.

A JVM that lassi starts itself uses the class-data archive of `lassi jvm-archive` when it
exists (lassi.core.jvm_archive: a faster cold start), and logs to `$LASSI_LOG_DIR/spark.log`
(default `<tmp>/lassi-logs`), not the console, unless `$LASSI_VERBOSE` is set (`lassi --verbose`).
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
import time
from pathlib import Path

from pyspark.sql import SparkSession

from lassi.core.config import conf_file, spark_defaults
from lassi.core.jvm_archive import java_options as archive_options

# C1 only reserves a 48 MB code cache by default; keep tiered's 240 MB (see tests/conftest.py)
SHORT_LIVED_JVM = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m -XX:+UseSerialGC"


def spark_log_file() -> Path:
    """Where the JVM log of lassi's own Spark sessions goes (folder made)."""
    folder = Path(os.environ.get("LASSI_LOG_DIR") or Path(tempfile.gettempdir()) / "lassi-logs")
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "spark.log"


def _quiet_java_options(settings: dict[str, str]) -> None:
    """Point the driver JVM's log4j at the quiet profile (file, errors on the console)."""
    opts = (f"-Dlog4j2.configurationFile={conf_file('log4j2-quiet.properties')} "
            f"-Dlassi.spark.log={spark_log_file()}")
    key = "spark.driver.extraJavaOptions"
    settings[key] = f"{settings.get(key, '')} {opts}".strip()


def _under_spark_submit() -> bool:
    """True when a JVM gateway was started for us (spark-submit, pyspark shell)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def _prepare_process() -> None:
    """The process environment a lassi session needs, set before its JVM starts."""
    os.environ["TZ"] = "UTC"  # Python-side datetime conversions must agree with Spark's UTC
    time.tzset()
    # pandas UDF workers run this interpreter (the venv: pandas, pywavelets, scikit-learn),
    # not whatever `python3` is first on PATH, unless the caller chose one
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    if not _under_spark_submit() and not os.environ.get("LASSI_VERBOSE"):
        # PySpark's own JSON record of a failed query (the CLI says it in one line)
        logging.getLogger("DataFrameQueryContextLogger").setLevel(logging.CRITICAL)


def _settings(extra: dict[str, str] | None, short_lived: bool) -> dict[str, str]:
    """conf/spark-defaults.yaml with $LASSI_SPARK_CONF, the short-lived JVM's options and
    the caller's `extra`."""
    settings = spark_defaults()
    if short_lived:
        key = "spark.driver.extraJavaOptions"
        settings[key] = f"{settings.get(key, '')} {SHORT_LIVED_JVM}".strip()
    settings.update(extra or {})
    return settings


def _options(app_name: str, master: str | None, settings: dict[str, str]) -> dict[str, str]:
    """What `SparkSession.builder` carries: the app name, the master and, outside
    spark-submit, every setting (with the class-data archive and the quiet log profile).
    Under spark-submit the submission's master and settings stand."""
    opts = {"spark.app.name": app_name}
    master = master or os.environ.get("LASSI_SPARK_MASTER")
    if master:
        opts["spark.master"] = master
    elif not _under_spark_submit():
        opts["spark.master"] = "local[*]"
    if _under_spark_submit():
        return opts
    settings = dict(settings)
    if cds := archive_options():                           # `lassi jvm-archive` was run
        key = "spark.driver.extraJavaOptions"
        settings[key] = f"{settings.get(key, '')} {cds}".strip()
    if not os.environ.get("LASSI_VERBOSE"):
        _quiet_java_options(settings)
    return {**opts, **settings}


def start_jvm(app_name: str = "lassi", master: str | None = None,
              extra: dict[str, str] | None = None, short_lived: bool = False):
    """The driver JVM, started as `get_spark` would start it (or spark-submit's, or the one
    already running), without a Spark application: a command can reach the warehouse's
    Hadoop filesystem and learn that it has nothing to do before it asks a cluster for
    executors. `get_spark` with the same arguments later builds its session on this JVM."""
    from pyspark import SparkConf, SparkContext

    if SparkContext._jvm is None:
        _prepare_process()
        conf = SparkConf()
        for k, v in _options(app_name, master, _settings(extra, short_lived)).items():
            conf.set(k, v)
        SparkContext._ensure_initialized(conf=conf)
    return SparkContext._jvm


def get_spark(app_name: str = "lassi", master: str | None = None,
              extra: dict[str, str] | None = None, short_lived: bool = False) -> SparkSession:
    """Build (or return the running) SparkSession with lassi's settings. `short_lived`: a
    command of a few small queries (`lassi why`): the driver JVM compiles with C1 only and
    a serial GC, which starts faster (about 4 s of a 13 s cold answer) and would slow a
    long pipeline."""
    _prepare_process()
    settings = _settings(extra, short_lived)
    builder = SparkSession.builder
    for k, v in _options(app_name, master, settings).items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    if _under_spark_submit():   # the submission's --conf wins; lassi's SQL defaults fill gaps
        given = spark.sparkContext.getConf()
        for k, v in settings.items():   # a static one is fixed once the session exists
            if (k.startswith("spark.sql.") and not given.contains(k)
                    and spark.conf.isModifiable(k)):
                spark.conf.set(k, v)
    spark.sparkContext.setLogLevel(os.environ.get("LASSI_SPARK_LOG_LEVEL", "WARN"))
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    return spark
