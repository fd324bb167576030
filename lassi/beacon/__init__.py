"""Beacon stages: trace merge, job profiles, I/O phases, component anomalies, interference,
system views and alerts."""
