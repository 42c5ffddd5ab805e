"""Experiment design: excitation trajectories, their optimisation, and simulated logs."""
