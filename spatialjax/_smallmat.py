"""Small-matrix kernels over leading batch axes, written for XLA (3×3, 4×4, tiny SPD).

Products, cross products, ``hat``/``vee``, symmetric eigenvalues (3×3 closed
form, 4×4 cyclic Jacobi) and factorisations of tiny SPD matrices; all broadcast
leading axes. Design: docs page ``spatial.md#small-matrix-kernels``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

#: ``precision=`` of every matrix product in the package: float32 operands are multiplied
#: in float32. JAX's default lets recent NVIDIA GPUs round them to TensorFloat-32 (10
#: mantissa bits) and TPUs to bfloat16, relative errors near 1e-3 that a mass matrix's
#: condition number then multiplies (benchmarks/README.md, "Float32 products on a GPU");
#: ``tests/core/test_matmul_precision.py`` checks that no product of the package's
#: programs is left at the default.
FULL = jax.lax.Precision.HIGHEST


def matmul(A, B):
    """``A @ B`` (``jnp.matmul``) with ``precision=FULL``."""
    return jnp.matmul(A, B, precision=FULL)


def sum_terms(terms):
    """Sum of a non-empty sequence of arrays as chained adds (typed as its terms; fuses)."""
    terms = list(terms)
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    return out


def mv(A, x):
    """``A @ x`` for ``A (..., n, k)`` and ``x (..., k)`` (``k`` small: 3 or 4)."""
    return sum_terms([A[..., :, k] * x[..., k : k + 1] for k in range(A.shape[-1])])


def mtv(A, x):
    """``A.T @ x`` for ``A (..., k, n)`` and ``x (..., k)``."""
    return sum_terms([A[..., k, :] * x[..., k : k + 1] for k in range(A.shape[-2])])


def mm(A, B):
    """``A @ B`` for ``(..., n, k)`` and ``(..., k, m)`` matrices (``k`` small: 3 or 4)."""
    return sum_terms([A[..., :, k, None] * B[..., None, k, :] for k in range(A.shape[-1])])


def mtm(A, B):
    """``A.T @ B`` for ``(..., k, n)`` and ``(..., k, m)`` matrices."""
    return sum_terms([A[..., k, :, None] * B[..., k, None, :] for k in range(A.shape[-2])])


def mmt(A, B):
    """``A @ B.T`` for ``(..., n, k)`` and ``(..., m, k)`` matrices."""
    return sum_terms([A[..., :, k, None] * B[..., None, :, k] for k in range(A.shape[-1])])


def tr(A):
    """``A.T`` over the last two axes."""
    return jnp.swapaxes(A, -1, -2)


def cross(a, b):
    """``a × b`` for ``(..., 3)`` vectors (written out; broadcasts)."""
    a0, a1, a2 = a[..., 0:1], a[..., 1:2], a[..., 2:3]
    b0, b1, b2 = b[..., 0:1], b[..., 1:2], b[..., 2:3]
    return stack_last(a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0)


def stack_last(*parts):
    """``jnp.concatenate(parts, -1)`` for ``(..., 1)`` parts, with selects (fuses on XLA:CPU)."""
    k = len(parts)
    idx = np.arange(k)
    out = parts[-1]
    for i in range(k - 2, -1, -1):
        out = jnp.where(idx == i, parts[i], out)
    shape = jnp.broadcast_shapes(*(p.shape[:-1] for p in parts)) + (k,)
    return jnp.broadcast_to(out, shape)


def join_last(a, b):
    """``jnp.concatenate([a, b], -1)`` for two ``(..., k)`` arrays, with a select."""
    first = np.array([[True], [False]])
    y = jnp.where(first, a[..., None, :], b[..., None, :])
    return y.reshape(y.shape[:-2] + (2 * a.shape[-1],))


def hat(v):
    """``hat(v) @ u == cross(v, u)``: ``(..., 3)`` -> ``(..., 3, 3)`` (unchecked ``skew``)."""
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    o = jnp.zeros_like(x)
    return jnp.stack(
        [
            jnp.stack([o, -z, y], axis=-1),
            jnp.stack([z, o, -x], axis=-1),
            jnp.stack([-y, x, o], axis=-1),
        ],
        axis=-2,
    )


def vee(S):
    """Inverse of ``hat`` on the skew-symmetric part of ``S (..., 3, 3)``."""
    return 0.5 * jnp.stack(
        [S[..., 2, 1] - S[..., 1, 2], S[..., 0, 2] - S[..., 2, 0], S[..., 1, 0] - S[..., 0, 1]],
        axis=-1,
    )


def eye3(batch_shape=(), dtype=None):
    """Identity ``(*batch_shape, 3, 3)``."""
    return jnp.broadcast_to(jnp.eye(3, dtype=dtype), tuple(batch_shape) + (3, 3))


def block2x2(A, B, C, D):
    """Assemble ``[[A, B], [C, D]]`` from ``(..., n, n)`` blocks (batch axes broadcast)."""
    shape = jnp.broadcast_shapes(A.shape, B.shape, C.shape, D.shape)
    A, B, C, D = (jnp.broadcast_to(M, shape) for M in (A, B, C, D))
    top = jnp.concatenate([A, B], axis=-1)
    bottom = jnp.concatenate([C, D], axis=-1)
    return jnp.concatenate([top, bottom], axis=-2)


# ------------------------------------------------------------- symmetric eigenvalues

#: Cyclic Jacobi sweeps that reach full precision on a symmetric 4×4 matrix, by ``wide``
#: (float64) or not (checked against LAPACK on random, repeated, rank-one, clustered and
#: graded spectra: float32 4, float64 5; one sweep fewer left errors of 1e-3 and 8e-9).
_JACOBI_SWEEPS = {False: 4, True: 5}


def _jacobi_diagonal(A, sweeps):
    """Diagonal of ``A`` after ``sweeps`` cyclic Jacobi sweeps (Golub & Van Loan 8.5.2)."""
    n = A.shape[-1]
    keys = [(i, j) for i in range(n) for j in range(i, n)]

    def sweep(_, entries):
        a = dict(zip(keys, entries, strict=True))

        def get(i, j):
            return a[(min(i, j), max(i, j))]

        def put(i, j, v):
            a[(min(i, j), max(i, j))] = v

        for p in range(n):
            for q in range(p + 1, n):
                apq, app, aqq = get(p, q), get(p, p), get(q, q)
                d, b = aqq - app, 2 * apq
                den = jnp.abs(d) + jnp.sqrt(d * d + b * b)
                nz = den > 0
                t = b / jnp.where(nz, den, jnp.ones_like(den))
                t = jnp.where(d < 0, -t, t)
                c = jax.lax.rsqrt(t * t + 1)
                s = t * c
                put(p, p, app - t * apq)
                put(q, q, aqq + t * apq)
                put(p, q, jnp.zeros_like(apq))
                for r in range(n):
                    if r not in (p, q):
                        arp, arq = get(r, p), get(r, q)
                        put(r, p, c * arp - s * arq)
                        put(r, q, s * arp + c * arq)
        return tuple(a[k] for k in keys)

    entries = tuple(A[..., i, j : j + 1] for i, j in keys)
    a = dict(zip(keys, jax.lax.fori_loop(0, sweeps, sweep, entries), strict=True))
    return [a[(i, i)] for i in range(n)]


def _sort_slices(d):
    """Ascending sort of 3 or 4 ``(..., 1)`` slices with a min/max network."""

    def cx(x, y):
        return jnp.minimum(x, y), jnp.maximum(x, y)

    if len(d) == 3:
        a, b = cx(d[0], d[1])
        b, c = cx(b, d[2])
        a, b = cx(a, b)
        return [a, b, c]
    a, b = cx(d[0], d[1])
    c, e = cx(d[2], d[3])
    a, c = cx(a, c)
    b, e = cx(b, e)
    b, c = cx(b, c)
    return [a, b, c, e]


#: Newton steps on β³ − 3β = 2|r| from the cubic fit: error 1.4e-4 -> 1.7e-8 -> 3e-16 -> 0.
_CUBIC_NEWTON = {False: 2, True: 3}


def _eigvalsh3(a00, a01, a02, a11, a12, a22):
    """Ascending eigenvalues of a symmetric 3×3 in ``(..., 1)`` slices (Smith 1961, refined)."""
    q = (a00 + a11 + a22) / 3
    b = [a00 - q, a01, a02, a11 - q, a12, a22 - q]
    amax = _maxn([jnp.abs(x) for x in b])
    nz = amax > 0
    inv = 1 / jnp.where(nz, amax, jnp.ones_like(amax))
    b00, b01, b02, b11, b12, b22 = (x * inv for x in b)
    p2 = (b00 * b00 + b11 * b11 + b22 * b22 + 2 * (b01 * b01 + b02 * b02 + b12 * b12)) / 6
    p = jnp.sqrt(p2)  # in [1/√6, 1] where nz
    ps = jnp.where(nz, p, jnp.ones_like(p))
    det = (
        b00 * (b11 * b22 - b12 * b12)
        - b01 * (b01 * b22 - b12 * b02)
        + b02 * (b01 * b12 - b11 * b02)
    )
    r = jnp.clip(det / (2 * ps * ps * ps), -1, 1)
    # the eigenvalues β of B / p solve β³ − 3β = 2r; the isolated one is ±β₊ with β₊ ∈ [√3, 2]
    # the largest root for |r| (= 2 cos(acos(|r|) / 3), Smith 1961), the largest eigenvalue
    # when r ≥ 0, else minus it the smallest. Newton from a cubic fit (error < 1.4e-4) instead
    # of acos/cos (slow on XLA:CPU; benchmarks/README.md): g' = 3β² − 3 ≥ 6 there, so
    # e ← 0.9 e² per step; dβ₊/dr ≤ 1/3, so β₊ is as accurate as r.
    top = r >= 0
    ra = jnp.abs(r)
    beta = ((0.018751078265016638 * ra - 0.08126754162621223) * ra + 0.3304341581235641) * ra
    beta = beta + 1.732184213854146
    for _ in range(_CUBIC_NEWTON[bool(np.finfo(a00.dtype).eps < 1e-10)]):
        beta = beta - (beta * (beta * beta - 3) - 2 * ra) / (3 * beta * beta - 3)
    mu = jnp.where(top, ps, -ps) * beta
    # eigenvector of μ: the largest cross product of two rows of B − μ
    r0 = (b00 - mu, b01, b02)
    r1 = (b01, b11 - mu, b12)
    r2 = (b02, b12, b22 - mu)

    def row_cross(x, y):
        c = (x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0])
        return c, c[0] * c[0] + c[1] * c[1] + c[2] * c[2]

    best, best_n = row_cross(r0, r1)
    for x, y in ((r0, r2), (r1, r2)):
        c, n = row_cross(x, y)
        take = n > best_n
        best = tuple(jnp.where(take, ci, bi) for ci, bi in zip(c, best, strict=True))
        best_n = jnp.where(take, n, best_n)
    ok = best_n > 0
    vs = jax.lax.rsqrt(jnp.where(ok, best_n, jnp.ones_like(best_n)))
    v0 = jnp.where(ok, best[0] * vs, jnp.ones_like(vs))
    v1 = jnp.where(ok, best[1] * vs, jnp.zeros_like(vs))
    v2 = jnp.where(ok, best[2] * vs, jnp.zeros_like(vs))
    m2 = -0.5 * mu
    c00, c11, c22 = b00 - m2, b11 - m2, b22 - m2
    w0 = c00 * v0 + b01 * v1 + b02 * v2
    w1 = b01 * v0 + c11 * v1 + b12 * v2
    w2 = b02 * v0 + b12 * v1 + c22 * v2
    al = v0 * w0 + v1 * w1 + v2 * w2

    def pcp(cij, vi, vj, wi, wj):
        return cij - vi * wj - wi * vj + al * vi * vj

    f = (
        pcp(c00, v0, v0, w0, w0) ** 2
        + pcp(c11, v1, v1, w1, w1) ** 2
        + pcp(c22, v2, v2, w2, w2) ** 2
        + 2
        * (
            pcp(b01, v0, v1, w0, w1) ** 2
            + pcp(b02, v0, v2, w0, w2) ** 2
            + pcp(b12, v1, v2, w1, w2) ** 2
        )
    )
    half_gap = jnp.sqrt(0.5 * f)
    lo, hi = m2 - half_gap, m2 + half_gap
    l1 = jnp.where(top, lo, mu)
    l2 = jnp.where(top, hi, lo)
    l3 = jnp.where(top, mu, hi)
    # a diagonal matrix gets its sorted diagonal exactly (as LAPACK): no shift rounding at
    # zero eigenvalues of axis-aligned bodies
    diag = (a01 == 0) & (a02 == 0) & (a12 == 0)
    d1, d2, d3 = _sort_slices([a00, a11, a22])
    return [
        jnp.where(diag, d1, q + amax * l1),
        jnp.where(diag, d2, q + amax * l2),
        jnp.where(diag, d3, q + amax * l3),
    ]


def _maxn(xs):
    out = xs[0]
    for x in xs[1:]:
        out = jnp.maximum(out, x)
    return out


def _upper_to_matrix(upper, n):
    it = iter(upper)
    u = {(i, j): next(it) for i in range(n) for j in range(i, n)}
    rows = [stack_last(*[u[(min(i, j), max(i, j))] for j in range(n)]) for i in range(n)]
    return jnp.stack(rows, axis=-2)


@jax.custom_jvp
def eigvalsh_upper(*upper):
    """Ascending eigenvalues ``(..., n)`` of a symmetric matrix given by its upper triangle.

    Args:
      *upper: the ``n (n + 1) / 2`` upper-triangle entries, row-major, each ``(..., 1)``.

    Returns:
      ``(..., n)``: ``jnp.linalg.eigvalsh``'s values to ``O(eps ‖A‖)``, differentiable.
    """
    if len(upper) not in (6, 10):
        raise ValueError(
            f"eigvalsh_upper: expected 6 (3×3) or 10 (4×4) upper-triangle entries, got {len(upper)}"
        )
    n = {6: 3, 10: 4}[len(upper)]
    if n == 3:
        return stack_last(*_eigvalsh3(*upper))
    # scale by a power of two near the largest entry: exact, and d², a_pq² cannot overflow
    amax = _maxn([jnp.abs(x) for x in upper])
    lim = np.finfo(amax.dtype).maxexp - 8
    e = jnp.clip(jnp.frexp(jnp.where(amax > 0, amax, jnp.ones_like(amax)))[1], -lim, lim)
    one = jnp.ones_like(amax)
    down, up = jnp.ldexp(one, -e), jnp.ldexp(one, e - 1)
    A = _upper_to_matrix([x * down for x in upper], n)
    wide = np.finfo(A.dtype).eps < 1e-10
    d = _sort_slices(_jacobi_diagonal(A, _JACOBI_SWEEPS[wide]))
    return stack_last(*[(x * up) * 2 for x in d])


@eigvalsh_upper.defjvp
def _eigvalsh_upper_jvp(primals, tangents):
    n = {6: 3, 10: 4}[len(primals)]
    A = _upper_to_matrix(primals, n)
    dA = _upper_to_matrix(tangents, n)
    _, V = jnp.linalg.eigh(A)
    dw = jnp.sum(V * mm(dA, V), axis=-2)
    return eigvalsh_upper(*primals), dw


# ------------------------------------------------- tiny SPD factorisations

UNROLL_MAX = 4


def _entries(A):
    n = A.shape[-1]
    return n, [[A[..., i, j] for j in range(n)] for i in range(n)]


def _stack(rows):
    return jnp.stack([jnp.stack(r, axis=-1) for r in rows], axis=-2)


def modified_cholesky(A, rel_floor):
    """Lower ``L``, ``L Lᵀ`` a nearby positive definite ``A`` (pivots floored; Gill & Murray)."""
    scale = jnp.max(jnp.abs(jnp.diagonal(A, axis1=-2, axis2=-1)), axis=-1)
    floor = jnp.where(scale > 0, rel_floor * scale, 1.0)
    n = A.shape[-1]
    if n > UNROLL_MAX:
        return _cholesky_loop(A, floor)
    n, a = _entries(A)
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


def _cholesky_loop(A, floor):
    """Left-looking Cholesky over columns (one ``fori_loop``); ``A`` is ``(n, n)``."""
    n = A.shape[-1]
    idx = jnp.arange(n)

    def body(j, L):
        v = A[:, j] - matmul(L, L[j, :])  # columns ≥ j of L are still zero
        d = jnp.maximum(jnp.abs(v[j]), floor)
        ljj = jnp.sqrt(d)
        col = jnp.where(idx > j, v / ljj, jnp.where(idx == j, ljj, 0.0))
        return L.at[:, j].set(col)

    return jax.lax.fori_loop(0, n, body, jnp.zeros_like(A))


def lower_inverse(L):
    """``L⁻¹`` of a lower-triangular ``L`` with a positive diagonal (forward substitution)."""
    if L.shape[-1] > UNROLL_MAX:
        n = L.shape[-1]
        eye = jnp.eye(n, dtype=L.dtype)

        def body(i, X):  # row i of X from rows < i (rows ≥ i are still zero)
            return X.at[i, :].set((eye[i] - matmul(L[i, :], X)) / L[i, i])

        return jax.lax.fori_loop(0, n, body, jnp.zeros_like(L))
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
    if L.shape[-1] > UNROLL_MAX:
        n = L.shape[-1]

        def fwd(i, y):
            return y.at[i].set((b[i] - matmul(L[i, :], y)) / L[i, i])

        def bwd(k, x):
            i = n - 1 - k
            return x.at[i].set((y[i] - matmul(L[:, i], x)) / L[i, i])

        y = jax.lax.fori_loop(0, n, fwd, jnp.zeros_like(b))
        return jax.lax.fori_loop(0, n, bwd, jnp.zeros_like(b))
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


#: the largest ``n`` for which ``solve_spd_unrolled`` is written out entry by entry: a float64
#: ``H`` of at most 512 bytes, with which XLA:CPU runs the program's many small kernels one
#: after the other in the calling thread by rule (measured: faster than LAPACK's calls up to
#: n = 9; from n = 10 handed to other threads, 4x slower: ``benchmarks/README.md``, "Forward
#: dynamics of one state, the model as an argument, one layout of constants")
SOLVE_UNROLL_MAX = 8


def _minus(a, terms):
    """``a`` minus the sum of ``terms`` (chained subtractions; ``a`` when there are none)."""
    return a - sum_terms(terms) if terms else a


def solve_spd_unrolled(H, b):
    """``(x, ok)``: ``x`` with ``H x = b`` for one symmetric ``H (n, n)`` (its lower triangle is
    read) and ``b (n,)`` by a Cholesky factorisation written out entry by entry (``n <=
    SOLVE_UNROLL_MAX``), and ``ok`` (a boolean scalar): every pivot finite and positive (``H``
    positive definite).

    A pivot that is not positive or not finite is replaced by 1: for a finite ``H`` without a
    factor, ``x`` and its derivatives with respect to ``H`` and ``b`` stay finite (the caller
    masks ``x`` where ``ok`` is False). No LAPACK call: at this size it costs more than the
    arithmetic."""
    n = H.shape[-1]
    h = [[H[i, j] for j in range(n)] for i in range(n)]
    one = jnp.ones((), H.dtype)
    L = [[one] * n for _ in range(n)]
    ok = jnp.ones((), bool)
    y = []  # L y = b, one entry per column
    for j in range(n):
        d = _minus(h[j][j], [L[j][k] * L[j][k] for k in range(j)])
        good = (d > 0) & jnp.isfinite(d)
        ok = ok & good
        L[j][j] = jnp.sqrt(jnp.where(good, d, one))
        for i in range(j + 1, n):
            L[i][j] = _minus(h[i][j], [L[i][k] * L[j][k] for k in range(j)]) / L[j][j]
        yj = _minus(b[j], [L[j][k] * y[k] for k in range(j)]) / L[j][j]
        # column j and y_j as one array: its readers read it instead of each fusing (and
        # recomputing) the scalar graph behind it
        col = jax.lax.optimization_barrier(jnp.stack([L[i][j] for i in range(j, n)] + [yj]))
        for i in range(j, n):
            L[i][j] = col[i - j]
        y.append(col[n - j])
    x = [one] * n
    for i in reversed(range(n)):  # Lᵀ x = y
        x[i] = _minus(y[i], [L[k][i] * x[k] for k in range(i + 1, n)]) / L[i][i]
    return jnp.stack(x), ok


def ldl_pivots4(J):
    """Pivots ``d`` of ``J = L diag(d) Lᵀ`` for a symmetric 4×4 (``J ≻ 0`` iff all ``d > 0``)."""
    a = [[J[..., i, j] for j in range(4)] for i in range(4)]
    pivots = []
    for p in range(4):
        d = a[p][p]
        pivots.append(d)
        for i in range(p + 1, 4):
            li = a[i][p] / d
            for j in range(p + 1, i + 1):
                a[i][j] = a[i][j] - li * a[j][p]
    return jnp.stack(pivots, axis=-1)
