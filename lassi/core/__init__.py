"""Infrastructure every layer builds on: config, settings, Spark, schemas, warehouse, SQL files."""
