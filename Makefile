# Two commands from a fresh machine: `make demo` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
STAMP := $(VENV)/.installed

.PHONY: demo test test-setup bench suite-profile lint java mariadb venv clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip "setuptools>=68,<81" wheel   # tests/test_packaging.py builds the wheel offline
	$(PY) -m pip install -q -e ".[dev]"
	@touch $(STAMP)

# `make test` also needs Airflow (tests/test_airflow_dag.py runs the daily DAG)
AIRFLOW_STAMP := $(VENV)/.installed-airflow
$(AIRFLOW_STAMP): $(STAMP)
	$(PY) -m pip install -q -e ".[dev,airflow]"
	@touch $(AIRFLOW_STAMP)

venv: $(STAMP)

# tests/spark_cluster.py: the Spark worker's Python, a bare virtualenv with only pyspark's
# Python dependencies at the driver's versions (lassi reaches the executors as a wheel)
WORKER_VENV := .venv-worker
$(WORKER_VENV)/.installed: $(STAMP)
	@test -x $(WORKER_VENV)/bin/python || $(PYTHON) -m venv $(WORKER_VENV)
	$(WORKER_VENV)/bin/python -m pip install -q $$($(PY) -c "import numpy, pandas, pyarrow; \
	  print(*(f'{m.__name__}=={m.__version__}' for m in (numpy, pandas, pyarrow)))")
	@touch $@

java:
	@command -v java >/dev/null 2>&1 || { echo "installing Java 17 (apt)"; \
	  $(SUDO) apt-get update -q && $(SUDO) DEBIAN_FRONTEND=noninteractive \
	  apt-get install -y -q openjdk-17-jre-headless; }

mariadb:
	@command -v mariadbd >/dev/null 2>&1 || test -x /usr/sbin/mariadbd || { \
	  echo "installing MariaDB server (apt)"; $(SUDO) apt-get update -q && \
	  $(SUDO) DEBIAN_FRONTEND=noninteractive apt-get install -y -q mariadb-server; }

demo: java venv
	$(VENV)/bin/lassi demo --dir demo
	$(VENV)/bin/lassi demo --site taihulight --dir demo

# one pytest worker per core, at most 4 (each has its own Spark session and MariaDB);
# a test file stays on one worker (its module fixtures simulate once); the longest files
# start first (tests/conftest.py: LONGEST_FIRST)
TEST_WORKERS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); echo $$(( n < 4 ? n : 4 )))
PYTEST_ARGS := -q -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder
test: test-setup
	$(PY) -m pytest $(PYTEST_ARGS)

# What the tests need besides the venv: MariaDB, Airflow, the Spark worker's virtualenv, and
# the JVM class-data archive (optional: the tests' JVMs start faster; lassi.core.jvm_archive).
# The archive (~35 s on a clean clone) is built while MariaDB and the worker's virtualenv
# install; Airflow goes first, as it reinstalls lassi into the venv the archive's job runs from.
ARCHIVE_LOG := $(VENV)/jvm-archive.log
test-setup: java venv $(AIRFLOW_STAMP)
	@$(VENV)/bin/lassi jvm-archive --if-missing > $(ARCHIVE_LOG) 2>&1 & archive=$$!; \
	  $(MAKE) --no-print-directory -j2 mariadb $(WORKER_VENV)/.installed; rc=$$?; \
	  wait $$archive || echo "no JVM archive (the tests' JVMs start without it):"; \
	  tail -n 3 $(ARCHIVE_LOG); exit $$rc

# never a test: figures + PASS/FAIL, cache in bench/cache/ (e.g. BENCH_ARGS="--skip-small --fresh")
# dense ARCHER days (bench/run.py), Beacon trace compression (BEACON_BENCH_ARGS=--quick:
# ~70 s), TaihuLight days with full traces (bench/taihulight_day.py), ingest rates per source
# (the 4,096-node day for the Beacon layers), the driver-side sources made ~200k lines
# long (bench/scheduler_scale.py), where a layer's ingest time goes, a counter layer's
# day after its previous day with and without stored seeds (bench/daily_seeds.py), the
# server-side Beacon layers at ten times the day's servers (bench/layers_scale.py),
# Lustre job_stats with 20,000 ids per OSS (bench/jobstats_day.py; JOBSTATS_BENCH_ARGS=--hours 24)
BENCH_ARGS ?=
BEACON_BENCH_ARGS ?=
JOBSTATS_BENCH_ARGS ?=
bench: java venv
	$(PY) bench/run.py $(BENCH_ARGS)
	$(PY) bench/beacon_compress.py $(BEACON_BENCH_ARGS)
	$(PY) bench/taihulight_day.py
	$(PY) bench/ingest_rates.py
	$(PY) bench/scheduler_scale.py
	$(PY) bench/ingest_breakdown.py
	$(PY) bench/daily_seeds.py
	$(PY) bench/layers_scale.py
	$(PY) bench/jobstats_day.py $(JOBSTATS_BENCH_ARGS)

# never in CI: the suite with `make test`'s pytest arguments, with its wall time, busy CPU and steal, and
# the CPU seconds of every test file (bench/suite_profile.py; e.g. SUITE_ARGS=tests/test_x.py)
SUITE_ARGS ?=
suite-profile: test-setup
	$(PY) bench/suite_profile.py $(PYTEST_ARGS) $(SUITE_ARGS)

lint: venv
	$(VENV)/bin/ruff check .

clean:
	rm -rf demo warehouse .pytest_cache
