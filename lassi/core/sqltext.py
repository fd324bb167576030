"""Spark SQL text lives in `sql/` (the package `lassi.sql`); this loads it, fills ${parameters}."""

from __future__ import annotations

from importlib.resources import files
from string import Template


def sql(name: str, **params: object) -> str:
    """The query `sql/<name>.sql` with its ${parameters} substituted (all required)."""
    text = files("lassi.sql").joinpath(f"{name}.sql").read_text()
    return Template(text).substitute({k: str(v) for k, v in params.items()})


def string_literal(text: str) -> str:
    """A Spark SQL string literal of `text` (backslash escapes)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def double_literal(value: float | None) -> str:
    """A Spark SQL DOUBLE of exactly `value` (its shortest repr, cast), NULL for None."""
    return "CAST(NULL AS DOUBLE)" if value is None else f"CAST('{value!r}' AS DOUBLE)"
