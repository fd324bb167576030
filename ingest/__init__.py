"""Raw monitoring files -> Parquet raw tables, installed as `lassi.ingest`: one parser per
format and connectors that only read their source, all giving rows + quarantine + accounting
(`contract`); one writer (`writer`); the runner (`runner`) that drives them."""
