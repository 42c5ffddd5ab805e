"""Robot logs: reading, resampling, filtering and its choice, position and channel checks."""
