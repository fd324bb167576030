"""Shared fixtures: real Spark (local[2]), a throwaway real MariaDB, ../shared real data."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# The JVMs of the tests (the shared session, the DAG tests' spark-submits) run small data for
# seconds: C1 JIT only cuts their wall time by a third (measured: 83 s -> 53 s on two files).
# With C1 only the JVM reserves a 48 MB code cache (not tiered's 240 MB); a worker's shared
# session compiles the whole suite's queries and once ran out ("Out of space in CodeCache
# for adapters", session 15), so the cache keeps the tiered size. The parallel (throughput)
# GC, not G1: G1's concurrent marking took 13 % of a shared session's JVM CPU (session 25:
# three ingest + daily + report rounds of the 4-node day, 170 JVM CPU-s with the parallel
# GC against 178-206 s with G1), and the whole suite took 1,727 busy CPU-s instead of 2,009.
C1_ONLY = "-XX:TieredStopAtLevel=1 -XX:ReservedCodeCacheSize=240m -XX:+UseParallelGC"


def _fast_jvm() -> str:
    """C1 only, plus the class-data archive `make test` builds (`lassi jvm-archive`) when it
    exists: the options of every JVM a test starts through spark-submit."""
    from lassi.core.jvm_archive import java_options

    return f"{C1_ONLY} {java_options()}".strip()


FAST_JVM = _fast_jvm()

# The shared sessions' SQL settings for the tests' small data. A JFR profile of the shared
# sessions over the whole suite (session 24) found a third of their sampled JVM time in
# code generation (24 % compiling generated Java with Janino): a daily run of the 4-node
# day compiles ~1,160 classes, and Spark's default cache of 100 generated classes kept
# almost none of them for the next test. With a cache of 5,000 the same run repeated
# compiled 92, then 36 classes; with whole-stage code generation off as well
# (per-expression classes, smaller and quicker to compile; interpreted operators cost
# nothing on rows this few) a cold run's JVM took 67 s CPU instead of 84. The product keeps
# Spark's defaults (whole-stage code is what large days need); the DAG test on the cluster
# runs with them and must give the same tables as the shared session's run.
SMALL_DATA_SQL = {"spark.sql.codegen.cache.maxEntries": "10000",
                  "spark.sql.codegen.wholeStage": "false"}


# The longest test files (measured with --durations), run first: `make test` spreads whole
# files over the workers in collection order (--no-loadscope-reorder), so starting these
# early lets the workers finish together.
LONGEST_FIRST = ["test_airflow_dag.py", "test_io_phase.py",
                 "test_components.py", "test_beacon_profile.py", "test_kill_rerun.py",
                 "test_beacon_ingest.py",
                 "test_stragglers.py",
                 "test_packaging.py", "test_node_window.py", "test_interference.py",
                 "test_system_views.py", "test_report.py", "test_job_metrics.py"]


def pytest_configure(config) -> None:
    """Every test process collects garbage as the `lassi` command does (lassi.cli.main)."""
    from lassi.core.gc_tuning import tune_gc

    tune_gc()


def pytest_collection_modifyitems(items) -> None:
    """The LONGEST_FIRST files first (in that order), then the rest as collected."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


def _shared_dir() -> Path:
    env = os.environ.get("LASSI_SHARED")
    return Path(env) if env else REPO.parent / "shared"


@pytest.fixture(scope="session")
def realdata() -> Path:
    """`../shared/realdata`, or skip the test cleanly when the project is cloned alone."""
    p = _shared_dir() / "realdata"
    if not p.is_dir():
        pytest.skip("../shared/realdata is not beside this clone")
    return p


@pytest.fixture(scope="session")
def spark():
    """One real local[2] SparkSession per test process (per xdist worker)."""
    from lassi.core.config import spark_defaults
    from lassi.core.spark import get_spark

    java = spark_defaults().get("spark.driver.extraJavaOptions", "")
    if os.environ.get("LASSI_TEST_JFR"):   # a folder: record where the session's JVM time goes
        who = os.environ.get("PYTEST_XDIST_WORKER", "main")
        java += (" -XX:StartFlightRecording:settings=profile,filename="
                 f"{os.environ['LASSI_TEST_JFR']}/{who}.jfr")
    s = get_spark("lassi-tests", master="local[2]",
                  extra={**SMALL_DATA_SQL,
                         "spark.sql.shuffle.partitions": "4", "spark.ui.enabled": "false",
                         "spark.driver.memory": "2g",
                         "spark.driver.extraJavaOptions": f"{java} {C1_ONLY}".strip()})
    yield s
    s.stop()


@pytest.fixture
def warehouse(spark, tmp_path):
    """An empty warehouse in a fresh directory."""
    from lassi.core.warehouse import Warehouse

    return Warehouse(spark, str(tmp_path / "wh"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _mariadb_binary() -> str | None:
    for name in ("mariadbd", "mysqld"):
        p = shutil.which(name) or (f"/usr/sbin/{name}" if Path(f"/usr/sbin/{name}").exists()
                                   else None)
        if p:
            return p
    return None


class MariaDbServer:
    """A throwaway MariaDB server on loopback with its own datadir and port, which a test
    may stop, kill and start again (same data, same port)."""

    def __init__(self) -> None:
        server = _mariadb_binary()
        if server is None:
            pytest.fail("MariaDB server not installed: run `make test` (it installs "
                        "mariadb-server)")
        install = shutil.which("mariadb-install-db") or shutil.which("mysql_install_db")
        self.server, self.base = server, Path(tempfile.mkdtemp(prefix="lassi-mariadb-"))
        self.port, self.proc = _free_port(), None
        self.args = {"host": "127.0.0.1", "port": self.port, "user": "root", "password": ""}
        self._install_db(install)

    def _install_db(self, install: str | None) -> None:
        """Create the system tables in a new datadir, with none of the machine's option
        files (`--no-defaults`) and no host name lookup (`--force`: the tests reach the
        server by IP only). Tried twice; a failure names the tool's last lines and the free
        disk."""
        if install is None:
            pytest.fail("mariadb-install-db not found: run `make test` (it installs "
                        "mariadb-server)")
        data, failures = self.base / "data", []
        for _attempt in range(2):           # once more in a clean datadir (CI saw exit 1)
            shutil.rmtree(data, ignore_errors=True)
            p = subprocess.run([install, "--no-defaults", f"--datadir={data}",
                                "--auth-root-authentication-method=normal", "--skip-test-db",
                                "--force", "--user=" + os.environ.get("USER", "root")],
                               capture_output=True, text=True)
            if p.returncode == 0:
                return
            free = shutil.disk_usage(self.base).free / 2**20
            tail = "\n".join((p.stdout + p.stderr).strip().splitlines()[-20:])
            failures.append(f"exit {p.returncode}, {free:,.0f} MiB free:\n{tail}")
        pytest.fail(f"{install} failed twice under {self.base}:\n" + "\n".join(failures))

    def start(self) -> None:
        """Start the server and wait until it answers (60 s at most)."""
        import pymysql

        b = self.base
        self.proc = subprocess.Popen(
            [self.server, "--no-defaults", f"--datadir={b / 'data'}",
             f"--socket={b / 'mysqld.sock'}", f"--port={self.port}", "--bind-address=127.0.0.1",
             "--skip-name-resolve", f"--pid-file={b / 'pid'}",
             "--user=" + os.environ.get("USER", "root"), f"--log-error={b / 'error.log'}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while True:
            try:
                pymysql.connect(**self.args, connect_timeout=2).close()
                return
            except pymysql.err.OperationalError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    err = b / "error.log"
                    log = err.read_text()[-2000:] if err.exists() else ""
                    self.proc.kill()
                    pytest.fail(f"MariaDB did not start: {log}")
                time.sleep(0.2)   # polling a starting server; bounded by the deadline

    def stop(self, kill: bool = False) -> None:
        """Stop the server: a clean shutdown, or SIGKILL (a crash)."""
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        proc.kill() if kill else proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.base, ignore_errors=True)


@pytest.fixture(scope="session")
def mariadb():
    """A throwaway MariaDB on loopback (own datadir and port), stopped at the end.

    Yields a dict of pymysql connection arguments for the `lassi_test` database.
    """
    import pymysql

    server = MariaDbServer()
    server.start()
    conn = pymysql.connect(**server.args, connect_timeout=2)
    with conn.cursor() as cur:
        cur.execute("CREATE DATABASE lassi_test")
    conn.close()
    yield {**server.args, "database": "lassi_test"}
    server.remove()


def schema_row(schema, **values) -> tuple:
    """A row of `schema` (StructType) as a tuple: the named values, None elsewhere."""
    return tuple(values.get(f.name) for f in schema.fields)


def plan_nodes(df) -> list[dict]:
    """The nodes of `df`'s physical plan as Spark plans it before adaptive execution (with
    its exchanges), in pre-order: a node's first child follows it."""
    import json

    plan = df._jdf.queryExecution().executedPlan()
    if plan.getClass().getSimpleName() == "AdaptiveSparkPlanExec":
        plan = plan.initialPlan()
    return json.loads(plan.toJSON())


# --- one simulated ARCHER day shared by the test files (and the xdist workers) ----------------
ARCHER_DAY = dt.date(2017, 10, 10)


@dataclass(frozen=True)
class SharedDay:
    """A simulated day ingested with every daily stage run: read it, never write it."""

    site_name: str
    nodes: int
    date: dt.date
    raw: Path
    warehouse: Path
    ingest_stats: tuple = ()          # the ParseStats of its ingest_raw, one per source


def _shared_root(tmp_path_factory) -> Path:
    """The folder every xdist worker of this run sees (the workers' basetemps' parent)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def _build_once(root: Path, name: str, build) -> None:
    """Run build(folder) once per test run for every xdist worker: the first worker that
    gets here builds `root/name` under a file lock, the others wait for it."""
    import fcntl

    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)          # released when the file closes
        done = root / name / "done"
        if not done.exists():
            shutil.rmtree(root / name, ignore_errors=True)
            build(root / name)
            done.write_text("")


@pytest.fixture(scope="session")
def archer_day(spark, tmp_path_factory) -> SharedDay:
    """A 4-node ARCHER day (seed 3, no TOKIO sources) simulated, ingested in-process and run
    through every daily stage once per test run (`_build_once`). The clean run that the DAG
    test (on a Spark cluster), test_kill_rerun and test_job_window compare with, and whose
    ingest and LASSi tables test_node_window checks against the simulator's truth."""
    import dataclasses
    import pickle

    from lassi.ingest.runner import ingest_raw

    from lassi.core.config import load_site
    from lassi.core.warehouse import Warehouse
    from lassi.pipeline.daily import run_daily
    from lassi.sim.runner import simulate

    root = _shared_root(tmp_path_factory)
    day = SharedDay("archer", 4, ARCHER_DAY, root / "archer4" / "raw", root / "archer4" / "wh")

    def build(folder: Path) -> None:
        site = load_site(day.site_name, nodes=day.nodes)
        simulate(site, day.date, 1, 3, day.raw, tokio=False)
        wh = Warehouse(spark, str(day.warehouse))
        stats = ingest_raw(spark, wh, site, day.raw, day.date)
        (folder / "ingest.pickle").write_bytes(pickle.dumps(tuple(stats)))
        list(run_daily(wh, site, day.date))

    _build_once(root, "archer4", build)
    stats = pickle.loads((root / "archer4" / "ingest.pickle").read_bytes())
    return dataclasses.replace(day, ingest_stats=stats)


# --- a simulated TaihuLight history with full traces, shared the same way ---------------------
TAIHULIGHT_DAY = dt.date(2018, 2, 25)
# the only forwarding node of a 128-node TaihuLight at a fifth of its bandwidth, once a day
TAIHULIGHT_FAULTS = ["fwd:fwd000:0.2:03:00-05:30", "fwd:fwd000:0.2:27:00-29:00"]


@dataclass(frozen=True)
class SharedHistory:
    """Simulated days ingested (each simulated day and the next, where the last jobs end)
    with `job_profile` and `io_phase` built for every ingested date after the first: read
    it, never write it (copy the warehouse to change it)."""

    site_name: str
    nodes: int
    dates: tuple[dt.date, ...]        # every ingested date
    raw: Path
    warehouse: Path
    ingest_stats: dict                # date -> {source: ParseStats} of ingest_raw
    phase_summaries: tuple[str, ...]  # build_io_phase's summary per date after the first

    @property
    def truth(self) -> dict:
        import json

        return json.loads((self.raw / "truth.json").read_text())


@pytest.fixture(scope="session")
def taihulight_days(spark, tmp_path_factory) -> SharedHistory:
    """Two days of a 128-node TaihuLight (one forwarding node, slowed to a fifth twice:
    TAIHULIGHT_FAULTS; seed 7), every run traced: the Beacon layers, job profiles and I/O
    phases that test_io_phase, test_beacon_profile and test_beacon_ingest check against the
    simulator's truth (test_beacon_columnar parses its files), built once per test run
    (`_build_once`)."""
    import pickle

    from lassi.ingest.runner import ingest_raw

    from lassi.beacon.io_phase import build_io_phase
    from lassi.beacon.job_profile import build_job_profile
    from lassi.core.config import load_site
    from lassi.core.warehouse import Warehouse
    from lassi.sim.runner import simulate

    root = _shared_root(tmp_path_factory)
    name, days = "taihulight128", 2
    dates = tuple(TAIHULIGHT_DAY + dt.timedelta(days=k) for k in range(days + 1))
    folder = root / name

    def build(_folder: Path) -> None:
        site = load_site("taihulight", nodes=128)
        simulate(site, TAIHULIGHT_DAY, days, 7, folder / "raw", faults=TAIHULIGHT_FAULTS,
                 traced_fraction=1.0)
        wh = Warehouse(spark, str(folder / "wh"))
        stats = {d: {s.source: s for s in ingest_raw(spark, wh, site, folder / "raw", d)}
                 for d in dates}
        summaries = []
        for d in dates[1:]:
            build_job_profile(wh, site, d)
            summaries.append(build_io_phase(wh, site, d))
        (folder / "built.pickle").write_bytes(pickle.dumps((stats, summaries)))

    _build_once(root, name, build)
    stats, summaries = pickle.loads((folder / "built.pickle").read_bytes())
    return SharedHistory("taihulight", 128, dates, folder / "raw", folder / "wh", stats,
                         tuple(summaries))
