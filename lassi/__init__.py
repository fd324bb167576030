"""lassi: offline analytics for the I/O of supercomputers (LASSi + Beacon + TOKIO + SIOX)."""

__version__ = "0.1.0"
