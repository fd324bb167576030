"""A class-data-sharing (CDS) archive of the Spark driver JVM: a faster cold start.

A fresh Spark JVM spends most of its first seconds loading and verifying the classes of
Spark, Hadoop, Parquet and Arrow. Java's dynamic CDS (`-XX:ArchiveClassesAtExit`) records
the classes one representative run loaded; a later JVM started with `-XX:SharedArchiveFile`
maps them instead of loading them again (measured on 2 cores: the LASSi family of an
8-node day under spark-submit 20.4 -> 16.0 s; a bare session + first queries 20 -> 10 s on
a loaded machine). That matters wherever lassi starts many short JVMs: one per task of
the daily Airflow DAG, `lassi why`, the tests.

The archive belongs to one Java build and one Spark classpath, so its file name carries
both (`archive_path`). A JVM that cannot use it (another Java, another classpath, a
truncated file) starts normally and says nothing (CDS logging off).

`lassi jvm-archive` builds it (lassi.cli.jvm); lassi's own sessions use it whenever it exists
(`java_options`, added by lassi.core.spark.get_spark); a `spark-submit` started from
outside passes the same options in `spark.driver.extraJavaOptions` (the Airflow DAG:
LASSI_SPARK_JAVA_OPTIONS, see airflow_dags/README.md). `LASSI_JVM_ARCHIVE=off` disables it;
any other value is the archive's path.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"    # no comma: LASSI_SPARK_CONF splits on them


def _java() -> Path | None:
    """The java binary Spark will start (JAVA_HOME first, as spark-class does)."""
    home = os.environ.get("JAVA_HOME")
    cand = Path(home) / "bin" / "java" if home else None
    found = str(cand) if cand and cand.exists() else shutil.which("java")
    return Path(found).resolve() if found else None


def archive_path() -> Path | None:
    """Where the archive of this Java and this pyspark lives (None: disabled or no Java)."""
    env = os.environ.get("LASSI_JVM_ARCHIVE", "")
    if env.lower() == "off":
        return None
    if env:
        return Path(env)
    java = _java()
    if java is None:
        return None
    import pyspark

    key = f"{java}|{java.stat().st_mtime_ns}|{pyspark.__version__}|{Path(pyspark.__file__).parent}"
    digest = hashlib.sha1(key.encode()).hexdigest()[:12]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "lassi" / f"spark-{pyspark.__version__}-{digest}.jsa"


def java_options() -> str:
    """Driver JVM options that use the archive, or "" when there is none."""
    path = archive_path()
    if path is None or not path.is_file():
        return ""
    return f"-XX:SharedArchiveFile={path} {QUIET}"
