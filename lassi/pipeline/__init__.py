"""The daily pipeline: which stages run, in which order, for one date."""
