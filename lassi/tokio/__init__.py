"""TOKIO stages: per-job metrics from every connector (job_metrics)."""
