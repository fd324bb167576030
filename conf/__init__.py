"""Site and default configuration, installed as the package `lassi.conf`
(read with `lassi.core.config`)."""
