"""SIOX stages: the causal I/O path of a job (issue #14)."""
