"""Spark SQL text lives in `sql/<table>.sql`; this loads it and fills ${parameters}."""

from __future__ import annotations

from pathlib import Path
from string import Template

SQL_DIR = Path(__file__).resolve().parents[1] / "sql"


def sql(name: str, **params: object) -> str:
    """The query `sql/<name>.sql` with its ${parameters} substituted (all required)."""
    text = (SQL_DIR / f"{name}.sql").read_text()
    return Template(text).substitute({k: str(v) for k, v in params.items()})
