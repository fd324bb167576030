"""Temp views live only inside the stage that registers them (lassi.core.views)."""

from __future__ import annotations

from lassi.core.views import scoped, temp_views


class _Wh:
    session_started = True

    def __init__(self, spark):
        self.spark = spark


@scoped
def _inner(wh) -> list[str]:
    wh.spark.range(2).createOrReplaceTempView("inner_v")
    return temp_views(wh.spark)


@scoped
def _outer(wh) -> tuple[list[str], list[str]]:
    seen_at_start = temp_views(wh.spark)
    wh.spark.range(1).createOrReplaceTempView("outer_v")
    inside = _inner(wh)
    return seen_at_start, sorted(inside + temp_views(wh.spark))


def test_a_stage_sees_no_earlier_view_and_leaves_none(spark):
    spark.range(3).createOrReplaceTempView("stale_from_before")
    seen_at_start, during = _outer(_Wh(spark))
    assert seen_at_start == []                     # the stale view cannot feed the stage
    assert {"outer_v", "inner_v"} <= set(during)   # a nested call shares the outer scope
    assert temp_views(spark) == []                 # nothing outlives the stage


def test_views_are_dropped_when_the_stage_fails(spark):
    @scoped
    def failing(wh):
        wh.spark.range(1).createOrReplaceTempView("half_done")
        raise ValueError("boom")

    try:
        failing(_Wh(spark))
    except ValueError:
        pass
    assert "half_done" not in temp_views(spark)


class _Deferred:
    """A warehouse whose Spark session starts at the first use of `spark`."""

    def __init__(self, spark):
        self._spark, self.session_started = spark, False

    @property
    def spark(self):
        self.session_started = True
        return self._spark


def test_a_stage_that_starts_a_deferred_session_keeps_its_scope(spark):
    """A stage that begins before its warehouse has a session starts none for its scope; the
    views it registers once it starts one live until it ends, through a nested stage (which
    then has a session), and none outlives it."""
    for name in temp_views(spark):
        spark.catalog.dropTempView(name)
    wh = _Deferred(spark)

    @scoped
    def stage(w):
        before = w.session_started
        w.spark.range(1).createOrReplaceTempView("deferred_v")
        return before, _inner(w)

    before, during = stage(wh)
    assert before is False
    assert {"deferred_v", "inner_v"} <= set(during)
    assert temp_views(spark) == []
