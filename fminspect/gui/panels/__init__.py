"""The inspector's panels (one per module)."""
