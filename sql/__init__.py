"""Spark SQL text of the stages, reports and tools, installed as the package `lassi.sql`
(read with `lassi.core.sqltext.sql`)."""
