"""pysodmetrics 1.6.2 as a test oracle, run in its own virtual environment."""
