"""The JVM class-data archive: where it lives, when sessions use it, `--if-missing`."""

from pathlib import Path

from lassi.cli.main import main
from lassi.core import jvm_archive


def test_off_and_explicit_paths(monkeypatch, tmp_path):
    monkeypatch.setenv("LASSI_JVM_ARCHIVE", "off")
    assert jvm_archive.archive_path() is None and jvm_archive.java_options() == ""
    f = tmp_path / "a.jsa"
    monkeypatch.setenv("LASSI_JVM_ARCHIVE", str(f))
    assert jvm_archive.archive_path() == f
    assert jvm_archive.java_options() == ""          # no file yet: nothing to share
    f.write_bytes(b"x")
    assert jvm_archive.java_options() == (f"-XX:SharedArchiveFile={f} "   # no comma:
                                          "-Xlog:cds=off -Xlog:cds+dynamic=off")  # see config


def test_default_path_names_java_and_pyspark(monkeypatch, tmp_path):
    import pyspark

    monkeypatch.delenv("LASSI_JVM_ARCHIVE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    p = jvm_archive.archive_path()
    assert p.parent == tmp_path / "lassi" and p.name.startswith(f"spark-{pyspark.__version__}-")
    fake = tmp_path / "jdk" / "bin"
    fake.mkdir(parents=True)
    (fake / "java").write_text("#!/bin/sh\n")
    monkeypatch.setenv("JAVA_HOME", str(fake.parent))
    assert jvm_archive.archive_path() != p            # another Java, another archive


def test_if_missing_keeps_an_existing_archive(monkeypatch, tmp_path, capsys):
    f = tmp_path / "a.jsa"
    f.write_bytes(b"built before")
    assert main(["jvm-archive", "--if-missing", "--out", str(f)]) == 0
    assert f"{f} (exists)" in capsys.readouterr().out and f.read_bytes() == b"built before"


def test_the_tests_session_uses_the_archive_when_built(spark):
    """`make test` builds the archive first; the shared session's JVM then maps it."""
    path = jvm_archive.archive_path()
    args = list(spark.sparkContext._jvm.java.lang.management.ManagementFactory
                .getRuntimeMXBean().getInputArguments())
    want = f"-XX:SharedArchiveFile={path}"
    assert (want in args) == (path is not None and Path(path).is_file())
