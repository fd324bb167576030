"""Site simulator: a workload model with contention and faults, raw writers, ground truth."""
