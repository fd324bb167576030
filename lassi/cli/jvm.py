"""`lassi jvm-archive`: build the Spark JVM's class-data archive (lassi.core.jvm_archive)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lassi.core.jvm_archive import QUIET, archive_path


def add_commands(sub) -> None:
    p = sub.add_parser("jvm-archive",
                       help="build the class-data archive that speeds up a Spark JVM's cold start")
    p.add_argument("--out", default=None,
                   help="archive file (default: $LASSI_JVM_ARCHIVE or ~/.cache/lassi/...)")
    p.add_argument("--if-missing", action="store_true",
                   help="do nothing when the archive already exists (what `make test` runs)")
    p.set_defaults(func=cmd_jvm_archive)


def cmd_jvm_archive(args) -> int:
    out = Path(args.out) if args.out else archive_path()
    if out is None:
        raise ValueError("no archive path: java not found or LASSI_JVM_ARCHIVE=off")
    if args.if_missing and out.is_file():
        print(f"JVM class-data archive: {out} (exists)")
        return 0
    path, seconds = build(out)
    size = path.stat().st_size / 2**20
    print(f"JVM class-data archive: {path} ({size:.0f} MiB, built in {seconds:.0f} s); "
          "lassi's Spark sessions use it from now on")
    return 0


def build(path: Path, timeout_s: float = 900) -> tuple[Path, float]:
    """Run the warm-up job (lassi.cli.jvm_warmup) under spark-submit with
    `-XX:ArchiveClassesAtExit`, then move the archive into place atomically.

    Returns (archive, seconds); ValueError with the job's last line when it fails.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    import pyspark

    submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    work = Path(tempfile.mkdtemp(prefix="lassi-jvm-warmup-"))
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable,
           "PYSPARK_DRIVER_PYTHON": sys.executable}
    cmd = [str(submit), "--master", "local[2]", "--driver-java-options",
           f"-XX:ArchiveClassesAtExit={tmp} -Duser.timezone=UTC {QUIET}",
           "--conf", "spark.ui.enabled=false",
           str(Path(__file__).with_name("jvm_warmup.py")), str(work)]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s,
                           cwd=work)
        if p.returncode != 0 or not tmp.is_file():
            lines = (p.stdout + p.stderr).strip().splitlines() or ["(no output)"]
            errors = [ln for ln in lines if "Error" in ln or "Exception" in ln]
            raise ValueError(f"the warm-up job failed (exit {p.returncode}): "
                             f"{(errors or lines)[-1].strip()[:300]}")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
        shutil.rmtree(work, ignore_errors=True)
    return path, time.time() - t0
