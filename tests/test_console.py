"""A quiet console: Spark's JVM start-up lines and WARNs go to a log file, not the terminal."""

from __future__ import annotations

import os
import subprocess
import sys

CODE = ("from lassi.core.spark import get_spark\n"
        "s = get_spark('quiet-test', master='local[1]', extra={'spark.ui.enabled': 'false'})\n"
        "print(s.range(5).count())\n"
        "s.stop()\n")


def test_spark_warnings_go_to_the_log_file(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "LASSI_VERBOSE"}
    env["LASSI_LOG_DIR"] = str(tmp_path / "logs")
    p = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env,
                       cwd=tmp_path, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.strip() == "5"
    noisy = [ln for ln in p.stderr.splitlines()
             if " WARN " in ln or " INFO " in ln or "log4j" in ln.lower()
             or "Setting default log level" in ln]
    assert noisy == []
    log = tmp_path / "logs" / "spark.log"
    assert log.exists()       # where the warnings went (may be empty on a quiet machine)
