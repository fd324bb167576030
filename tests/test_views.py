"""Temp views live only inside the stage that registers them (lassi.core.views)."""

from __future__ import annotations

from lassi.core.views import scoped, temp_views


class _Wh:
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
