"""Spark SQL text lives in `sql/` (the package `lassi.sql`); this loads it, fills ${parameters}."""

from __future__ import annotations

from importlib.resources import files
from string import Template


def sql(name: str, **params: object) -> str:
    """The query `sql/<name>.sql` with its ${parameters} substituted (all required)."""
    text = files("lassi.sql").joinpath(f"{name}.sql").read_text()
    return Template(text).substitute({k: str(v) for k, v in params.items()})
