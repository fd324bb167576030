"""The session factory's settings (conf/spark-defaults.yaml) and the live session."""

from __future__ import annotations


def test_sessions_keep_their_generated_classes(spark):
    """A session keeps 2,000 generated classes (Spark's default 100 made a long session
    compile its stages' ~160 classes again every round); the tests' shared sessions keep
    more (conftest.SMALL_DATA_SQL). A static setting: fixed when the session starts."""
    from lassi.core.spark import _settings

    assert _settings(None, False)["spark.sql.codegen.cache.maxEntries"] == "2000"
    assert _settings(None, True)["spark.sql.codegen.cache.maxEntries"] == "2000"
    assert int(spark.conf.get("spark.sql.codegen.cache.maxEntries")) >= 2000
    assert not spark.conf.isModifiable("spark.sql.codegen.cache.maxEntries")
    assert spark.conf.get("spark.sql.session.timeZone") == "UTC"
