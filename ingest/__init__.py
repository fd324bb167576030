"""Raw monitoring files -> Parquet raw tables, installed as `lassi.ingest`: one parser per
format (rows + quarantine), connectors that only read their source, one writer (`runner`)."""
