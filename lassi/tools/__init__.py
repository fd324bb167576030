"""Tools over the warehouse, each a CLI verb and a library function: bad-OST detection,
scoreboards, UMAMI diagrams, correlations and the LMT archive."""
