"""SIOX stages: the site's I/O path model (io_path), the components' knowledge base
(component_baseline); the causal I/O path of a job is being built (issue #14)."""
