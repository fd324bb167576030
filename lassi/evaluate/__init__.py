"""Scores of the analyses against the simulator's truth (`lassi evaluate`)."""
