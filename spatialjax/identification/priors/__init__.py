"""Priors: the repair of an inconsistent inertial prior and the joint model's prior."""
