"""The daily report: one HTML page with PNG figures per site and period.

Submodules: `data` (Spark queries -> small pandas frames), `figures` (matplotlib, Agg),
`html` (the page), one section module per family (`beacon`, `anomaly`, `tokio`) and
`daily` (puts them together, atomically: `lassi.report.daily.write_daily_report`).
"""
