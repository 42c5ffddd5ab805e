"""Written-out Cholesky factorisation, triangular inverse and solve for tiny SPD matrices.

Inside ``fit``'s loops every body has a 10×10 Hessian and a 4×4
pseudo-inertia. LAPACK calls on such matrices cost microseconds each *per
body* on CPU (one custom call per matrix), while these unrolled element-wise
versions fuse into a few XLA loops over the whole batch: measured 10–100×
faster for 100 bodies (``benchmarks/bench_identification.py``). Sizes are
static Python ints, so the loops below unroll at trace time.
"""

from __future__ import annotations

import jax.numpy as jnp


def _entries(A):
    n = A.shape[-1]
    return n, [[A[..., i, j] for j in range(n)] for i in range(n)]


def _stack(rows):
    return jnp.stack([jnp.stack(r, axis=-1) for r in rows], axis=-2)


def modified_cholesky(A, rel_floor):
    """Lower ``L`` with ``L Lᵀ = A`` where ``A`` is safely positive definite.

    Each pivot ``d`` is replaced by ``max(|d|, rel_floor · max_i |A_ii|)`` (a
    simple modified Cholesky in the spirit of Gill & Murray): for an
    indefinite or singular ``A`` the result factors a nearby positive
    definite matrix, which is what a preconditioner or a Newton step needs.
    """
    n, a = _entries(A)
    scale = jnp.max(jnp.abs(jnp.diagonal(A, axis1=-2, axis2=-1)), axis=-1)
    floor = jnp.where(scale > 0, rel_floor * scale, 1.0)
    zero = jnp.zeros_like(a[0][0])
    L = [[zero] * n for _ in range(n)]
    for j in range(n):
        d = a[j][j] - sum((L[j][k] * L[j][k] for k in range(j)), zero)
        d = jnp.maximum(jnp.abs(d), floor)
        ljj = jnp.sqrt(d)
        L[j][j] = ljj
        for i in range(j + 1, n):
            s = a[i][j] - sum((L[i][k] * L[j][k] for k in range(j)), zero)
            L[i][j] = s / ljj
    return _stack(L)


def lower_inverse(L):
    """``L⁻¹`` of a lower-triangular ``L`` with a positive diagonal (forward substitution)."""
    n, l = _entries(L)
    zero = jnp.zeros_like(l[0][0])
    X = [[zero] * n for _ in range(n)]
    for j in range(n):
        X[j][j] = 1.0 / l[j][j]
        for i in range(j + 1, n):
            s = sum((l[i][k] * X[k][j] for k in range(j, i)), zero)
            X[i][j] = -s / l[i][i]
    return _stack(X)


def cho_solve(L, b):
    """``x`` with ``L Lᵀ x = b`` for lower ``L`` and ``b (..., n)``."""
    n, l = _entries(L)
    bs = [b[..., i] for i in range(n)]
    y = []
    for i in range(n):
        s = bs[i] - sum((l[i][k] * y[k] for k in range(i)), jnp.zeros_like(bs[i]))
        y.append(s / l[i][i])
    x = [None] * n
    for i in reversed(range(n)):
        s = y[i] - sum((l[k][i] * x[k] for k in range(i + 1, n)), jnp.zeros_like(bs[i]))
        x[i] = s / l[i][i]
    return jnp.stack(x, axis=-1)
