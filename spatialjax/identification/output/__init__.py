"""Outputs: the typed identification report and the model-file writers."""
