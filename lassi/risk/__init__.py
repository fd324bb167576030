"""LASSi (risk) stages: node_window, app_hour, fs_hour and slowdown from Lustre statistics
and scheduler records."""
