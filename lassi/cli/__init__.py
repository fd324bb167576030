"""The one command line, `lassi`: one module per verb group."""
