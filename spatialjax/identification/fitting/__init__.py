"""The fit engines: single-body and whole-robot solvers, their results and identifiability."""
