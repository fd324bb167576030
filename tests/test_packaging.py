"""The wheel is the product: build it, install it into a fresh virtualenv outside the clone,
and run `lassi simulate` -> `lassi ingest` from it (tests/test_airflow_dag.py runs the daily
DAG from the same wheel, on a Spark cluster).

The virtualenv gets its dependencies (pyspark, pandas, ...) from this interpreter's
site-packages through a `.pth` file that lists those directories. A plain path line in a
`.pth` file is only appended to sys.path: the `.pth` files inside that directory (the
editable install's finder among them) are not run, so the clone's lassi stays invisible and
`import lassi` can only find the installed wheel.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import C1_ONLY

REPO = Path(__file__).resolve().parents[1]
DATE = dt.date(2017, 10, 10)
# what the build reads (pyproject.toml [project] readme, [tool.setuptools] package dirs)
SOURCES = ["pyproject.toml", "README.md", "lassi", "ingest", "sql", "conf"]


def _build_requirements_missing() -> str | None:
    """Why pyproject.toml's build backend cannot run in this interpreter, or None."""
    try:
        st = importlib.metadata.version("setuptools")
    except importlib.metadata.PackageNotFoundError:
        return "setuptools is not installed"
    major, minor = (int(x) for x in (st.split(".") + ["0"])[:2])
    if (major, minor) < (68, 0):
        return f"setuptools {st} is older than the 68 pyproject.toml requires"
    try:
        importlib.metadata.version("wheel")
    except importlib.metadata.PackageNotFoundError:
        if (major, minor) < (70, 1):     # setuptools >= 70.1 has bdist_wheel itself
            return "the wheel package is not installed"
    return None


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel of the working tree, built offline with this interpreter's setuptools.

    Built from a copy of the sources (a build in the clone would leave build/ there, and a
    stale build/lib could put deleted modules into the wheel)."""
    missing = _build_requirements_missing()
    if missing:
        pytest.skip(f"cannot build a wheel without build isolation: {missing} "
                    "(`make venv` installs the build requirements)")
    base = tmp_path_factory.mktemp("wheel")
    src, out = base / "src", base / "dist"
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            src.mkdir(exist_ok=True)
            shutil.copy2(REPO / name, src / name)
    p = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                        "--no-index", "-q", "-w", str(out), str(src)],
                       capture_output=True, text=True, timeout=300, cwd=base)
    assert p.returncode == 0, f"pip wheel failed:\n{p.stdout}\n{p.stderr}"
    (whl,) = out.glob("lassi-*.whl")
    return whl


def test_wheel_contents(wheel):
    """One package, lassi, with its SQL and configuration inside; no top-level ingest or jobs."""
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        top = z.read(next(n for n in names if n.endswith(".dist-info/top_level.txt")))
        entry = z.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt")))
    assert {"lassi/__init__.py", "lassi/cli/main.py", "lassi/ingest/runner.py",
            "lassi/conf/defaults.yaml", "lassi/conf/spark-defaults.yaml",
            "lassi/conf/log4j2-quiet.properties", "lassi/conf/sites/archer.yaml",
            "lassi/conf/sites/taihulight.yaml", "lassi/sql/risk/node_window.sql",
            "lassi/sql/risk/app_hour.sql"} <= names
    # every module, SQL file and configuration file of the source tree is in the wheel
    # (a subpackage or a SQL folder missing from pyproject.toml would be left out silently)
    want = set()
    for pkg, root, pattern in (("lassi", "lassi", "*.py"), ("lassi/ingest", "ingest", "*.py"),
                               ("lassi/sql", "sql", "*.sql"), ("lassi/conf", "conf", "*.yaml")):
        want |= {f"{pkg}/{p.relative_to(REPO / root).as_posix()}"
                 for p in (REPO / root).rglob(pattern) if "__pycache__" not in p.parts}
    assert want and want <= names, sorted(want - names)
    tops = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert tops == {"lassi"}, tops
    assert top.decode().split() == ["lassi"]
    assert "lassi = lassi.cli.main:main" in entry.decode()


def _venv(root: Path, wheel: Path) -> Path:
    """A new virtualenv at `root` with the wheel installed and our dependencies visible."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True,
                   timeout=120)
    py = root / "bin" / "python"
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_path("
                              "'purelib'))"], check=True, capture_output=True, text=True
                             ).stdout.strip()
    deps = [p for p in dict.fromkeys([*site.getsitepackages(), site.getusersitepackages()])
            if Path(p).is_dir()]
    (Path(purelib) / "_lassi_test_deps.pth").write_text("".join(f"{p}\n" for p in deps))
    p = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "-q",
                        "--no-deps", "--no-index", str(wheel)],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"pip install failed:\n{p.stdout}\n{p.stderr}"
    return root


def _env(tmp_path: Path) -> dict[str, str]:
    """A clean environment: nothing that points back into the clone or at our Spark."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("LASSI_", "PYSPARK_", "PYTHON", "SPARK_HOME"))}
    env.update(LASSI_SPARK_MASTER="local[2]", LASSI_LOG_DIR=str(tmp_path / "logs"),
               LASSI_SPARK_CONF="spark.driver.memory=1g,spark.sql.shuffle.partitions=4,"
                                "spark.ui.enabled=false,spark.driver.extraJavaOptions="
                                f"-Duser.timezone=UTC {C1_ONLY}")
    return env


def test_installed_wheel_runs_a_simulated_day(wheel, tmp_path):
    """From the installed wheel alone, in a folder outside the clone: simulate and ingest
    a 4-node ARCHER day into its raw tables."""
    venv = _venv(tmp_path / "venv", wheel)
    work = tmp_path / "work"
    work.mkdir()
    env = _env(tmp_path)

    def run(*argv: str, timeout: int = 600) -> str:
        p = subprocess.run([str(a) for a in argv], cwd=work, env=env, capture_output=True,
                           text=True, timeout=timeout)
        assert p.returncode == 0, f"{argv[:3]} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}"
        return p.stdout

    # the installed package, not the clone; no top-level ingest or jobs
    where = run(venv / "bin" / "python", "-c",
                "import importlib.util as u, lassi, lassi.cli.main; print(lassi.__file__); "
                "print(u.find_spec('ingest'), u.find_spec('jobs'))")
    file_, specs = where.strip().splitlines()
    assert Path(file_).resolve().is_relative_to(venv.resolve()), file_
    assert not Path(file_).resolve().is_relative_to(REPO), file_
    assert specs == "None None"
    # the resources resolve inside the installed package
    res = run(venv / "bin" / "python", "-c",
              "from importlib.resources import files; "
              "print(files('lassi.sql').joinpath('risk/node_window.sql').is_file(), "
              "files('lassi.conf').joinpath('sites/archer.yaml').is_file())")
    assert res.split() == ["True", "True"]

    lassi, raw, wh = venv / "bin" / "lassi", tmp_path / "raw", tmp_path / "wh"
    common = ["--warehouse", wh, "--site", "archer", "--nodes", "4"]    # 4 nodes: 34 launches
    out = run(lassi, "simulate", "--site", "archer", "--date", DATE.isoformat(), "--nodes", "4",
              "--no-tokio", "--out", raw)
    assert out.startswith("simulated ") and (raw / "truth.json").is_file()
    out = run(lassi, "ingest", "--raw", raw, "--date", DATE.isoformat(), *common)
    assert "lustre" in out
    for table in ("raw_lustre_stats", "app_run"):    # the daily stages: tests/test_airflow_dag.py
        part = wh / table / f"date={DATE.isoformat()}"
        assert part.is_dir() and any(part.rglob("*.parquet")), table
    # a failure is still one line from the installed command (refused before Spark starts)
    p = subprocess.run([str(lassi), "report", "daily", "--date", "2017-01-01", "--warehouse",
                        str(wh), "--out", str(tmp_path / "reports")], cwd=work, env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and p.stderr.strip().splitlines() == [
        f"lassi: error: no app_hour or job_summary data for 2017-01-01 in {wh} "
        "(run `lassi run daily` first)"]
