"""Explain views: the intermediate matrices of every measure (one module per measure)."""
