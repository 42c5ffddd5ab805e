"""Eager input checks shared by ``fit`` and ``fit_torques`` (concrete arrays only).

Under ``jit`` the same problems are reported per body in ``status``
([`FitStatus`][spatialjax.identification.FitStatus]) instead of raised.
"""

from __future__ import annotations

import numpy as np

from .._checks import as_float_array, broadcast_batch, is_concrete, same_dtype


def first_bad(mask) -> tuple[int, ...]:
    """Index of the first true entry of a boolean mask with at least one (``()`` for 0-d)."""
    return tuple(int(i) for i in np.argwhere(np.atleast_1d(mask))[0])[: np.ndim(mask)]


def check_gamma(gamma, Y, batch, batch_name: str):
    """``γ`` as an array of ``Y``'s dtype and the batch broadcast with its shape.

    A Python number takes ``Y``'s dtype; an array must have it already. Raises
    ``ValueError`` naming ``gamma`` for a concrete ``γ`` that is not finite and ``≥ 0``.
    """
    if isinstance(gamma, (int, float)) and not isinstance(gamma, bool):
        gamma = np.asarray(float(gamma), Y.dtype)
    gamma = as_float_array(gamma, "gamma")
    same_dtype(Y=Y, gamma=gamma)
    gamma = gamma.astype(Y.dtype)
    batch = broadcast_batch(batch_name, batch, "gamma", gamma.shape)
    if is_concrete(gamma):
        g = np.asarray(gamma)
        if np.any(~(np.isfinite(g) & (g >= 0))):
            raise ValueError(f"gamma: expected a finite γ ≥ 0, got {g}")
    return gamma, batch
