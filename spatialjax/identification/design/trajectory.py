"""Excitation trajectories for robot identification: finite Fourier series (Swevers et al. 1997).

Samples are rows and joints columns; ``a``, ``b`` are velocity amplitudes (rad/s or m/s).
Derivation: docs page ``identification-methods.md#fourier-series``.
"""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from ..._checks import as_float_array, same_dtype
from ..errors import IdentifyError

__all__ = ["excitation_trajectory", "fourier_trajectory"]


def fourier_trajectory(a, b, q0, base_frequency, t):
    """Positions, velocities and accelerations of a finite Fourier series (exact derivatives).

    ``q = q0 + Σ_l (a_l sin(ω_f l t) − b_l cos(ω_f l t)) / (ω_f l)`` per joint,
    ``ω_f = 2π · base_frequency`` (Swevers et al. 1997, eq. 9).

    Args:
      a: ``(..., n_joints, H)`` sine coefficients (velocity amplitudes, rad/s
        or m/s) of harmonics ``l = 1 … H``.
      b: ``(..., n_joints, H)`` cosine coefficients, same units.
      q0: ``(..., n_joints)`` offset (rad or m).
      base_frequency: ``(...)`` base frequency ``f_f`` in Hz (> 0).
      t: ``(..., N)`` sample times in s.

    Returns:
      ``(q, dq, ddq)``, each ``(..., N, n_joints)``: rows are samples, columns joints.

    Raises:
      ValueError: ``a`` and ``b`` differ in shape, ``q0``'s last axis is not
        ``n_joints``, the batch shapes do not broadcast, or ``base_frequency``
        (a Python number) is not positive.
      TypeError: integer arrays, or mixed float32/float64 arrays.

    Examples:
      >>> import jax.numpy as jnp
      >>> a = jnp.array([[1.0]]); b = jnp.zeros((1, 1)); t = jnp.array([0.0, 0.25])
      >>> q, dq, ddq = fourier_trajectory(a, b, jnp.zeros(1), 1.0, t)
      >>> [round(float(x), 6) for x in (q[1, 0], dq[0, 0], ddq[1, 0])]  # 1/(2π), 1, −2π
      [0.159155, 1.0, -6.283185]
    """
    a = as_float_array(a, "a")
    b = as_float_array(b, "b")
    q0 = as_float_array(q0, "q0")
    t = as_float_array(t, "t")
    f = as_float_array(base_frequency, "base_frequency")
    same_dtype(a=a, b=b, q0=q0, t=t, base_frequency=f)
    if a.ndim < 2:
        raise IdentifyError("a", f"expected shape (..., n_joints, H), got shape {tuple(a.shape)}")
    if a.shape[-2:] != b.shape[-2:]:
        raise IdentifyError(
            "b",
            f"expected the shape of a's last two axes {tuple(a.shape[-2:])} "
            f"(n_joints, H), got shape {tuple(b.shape)}",
        )
    n, H = a.shape[-2:]
    if q0.ndim < 1 or q0.shape[-1] != n:
        raise IdentifyError(
            "q0", f"expected shape (..., {n}) (n_joints), got shape {tuple(q0.shape)}"
        )
    if t.ndim < 1:
        raise IdentifyError("t", f"expected shape (..., N), got shape {tuple(t.shape)}")
    if isinstance(base_frequency, (int, float)) and not base_frequency > 0:
        raise IdentifyError(
            "base_frequency", f"expected a positive frequency in Hz, got {base_frequency}"
        )
    try:
        batch = np.broadcast_shapes(
            a.shape[:-2], b.shape[:-2], q0.shape[:-1], t.shape[:-1], f.shape
        )
    except ValueError:
        raise ValueError(
            "batch shapes do not broadcast: a "
            f"{tuple(a.shape[:-2])}, b {tuple(b.shape[:-2])}, q0 {tuple(q0.shape[:-1])}, "
            f"t {tuple(t.shape[:-1])}, base_frequency {tuple(f.shape)}"
        ) from None
    del batch  # checked only: the arithmetic below broadcasts the same way
    return _fourier(a, b, q0, f, t)


@jax.jit
def _fourier(a, b, q0, f, t):
    """``fourier_trajectory`` of checked arrays (one compiled program)."""
    dtype, H = a.dtype, a.shape[-1]
    l = jnp.arange(1, H + 1, dtype=dtype)  # noqa: E741  (the harmonic index of the paper)
    w = 2.0 * jnp.pi * f[..., None, None] * l  # (..., 1, H): ω_f l
    phase = t[..., :, None, None] * w[..., None, :, :]  # (..., N, 1, H)
    s, c = jnp.sin(phase), jnp.cos(phase)
    A = a[..., None, :, :]  # (..., 1, n, H)
    B = b[..., None, :, :]
    W = w[..., None, :, :]
    q = q0[..., None, :] + jnp.sum((A * s - B * c) / W, axis=-1)
    dq = jnp.sum(A * c + B * s, axis=-1)
    ddq = jnp.sum(W * (B * c - A * s), axis=-1)
    return q, dq, ddq


def _limits(x, name, n, dtype, pair):
    if x is None:
        return None
    arr = np.asarray(x, np.float64)
    want = (n, 2) if pair else (n,)
    if arr.ndim == (1 if pair else 0):
        arr = np.broadcast_to(arr, want)
    if arr.shape != want:
        raise IdentifyError(
            name,
            f"expected shape {want} ({'lower, upper per joint' if pair else 'per joint'}"
            f"{'' if pair else ' or one number'}), got shape {arr.shape}",
        )
    if not np.all(np.isfinite(arr)):
        raise IdentifyError(name, f"expected finite limits, got {arr.tolist()}")
    if pair and not np.all(arr[:, 1] > arr[:, 0]):
        bad = int(np.argmax(~(arr[:, 1] > arr[:, 0])))
        raise IdentifyError(name, f"joint {bad} has lower {arr[bad, 0]} >= upper {arr[bad, 1]}")
    if not pair and not np.all(arr > 0):
        raise IdentifyError(name, f"expected positive limits, got {arr.tolist()}")
    return jnp.asarray(arr, dtype)


def excitation_trajectory(
    n_joints: int,
    *,
    duration: float,
    key,
    rate: float = 1000.0,
    harmonics: int = 5,
    base_frequency: float = 0.1,
    amplitude: float = 0.5,
    q_limits=None,
    dq_limits=None,
    ddq_limits=None,
    margin: float = 0.9,
    q0=None,
    dtype=None,
):
    """A random finite-Fourier-series excitation that stays inside joint limits.

    Coefficients ``a, b ~ N(0, amplitude² / H)``, then each joint scaled by one
    factor in ``(0, 1]`` so that every returned sample keeps ``margin`` of the
    position, velocity and acceleration limits. For optimised coefficients see
    [`design_excitation`][spatialjax.identification.design_excitation].

    Args:
      n_joints: number of joints.
      duration: length in s (``N = round(duration · rate)`` samples at
        ``t = k / rate``, ``k = 0 … N−1``).
      key: a JAX PRNG key, or a batch of keys of shape ``(...)``: one
        trajectory per key.
      rate: sampling rate in Hz.
      harmonics: ``H``, the number of harmonics.
      base_frequency: ``f_f`` in Hz.
      amplitude: velocity scale in rad/s (m/s) before limiting.
      q_limits: ``(n_joints, 2)`` lower and upper position limits, or None.
      dq_limits: ``(n_joints,)`` (or one number) speed limits, or None.
      ddq_limits: ``(n_joints,)`` (or one number) acceleration limits, or None.
      margin: fraction of each limit that may be used, in ``(0, 1]``.
      q0: ``(n_joints,)`` offset; default the centre of ``q_limits`` (or 0).
      dtype: float dtype (default JAX's default float).

    Returns:
      ``(t, q, dq, ddq)``: ``t (N,)``, and ``q, dq, ddq`` of shape
      ``(..., N, n_joints)`` (exact derivatives of ``q``).

    Raises:
      ValueError: non-positive ``duration``, ``rate``, ``base_frequency``,
        ``amplitude`` or ``harmonics``; ``margin`` outside ``(0, 1]``; limits
        of the wrong shape, not finite, or with ``lower ≥ upper``; ``q0``
        outside ``q_limits``.
    """
    if not (isinstance(n_joints, (int, np.integer)) and n_joints >= 1):
        raise IdentifyError("n_joints", f"expected a positive integer, got {n_joints!r}")
    if not (isinstance(harmonics, (int, np.integer)) and harmonics >= 1):
        raise IdentifyError("harmonics", f"expected a positive integer, got {harmonics!r}")
    for name, value in (
        ("duration", duration),
        ("rate", rate),
        ("base_frequency", base_frequency),
        ("amplitude", amplitude),
    ):
        if not (
            isinstance(value, (int, float, np.floating)) and math.isfinite(value) and value > 0
        ):
            raise IdentifyError(name, f"expected a positive finite number, got {value!r}")
    if not 0 < margin <= 1:
        raise IdentifyError("margin", f"expected a fraction in (0, 1], got {margin!r}")
    if harmonics * base_frequency >= rate / 2:
        raise ValueError(
            f"harmonics * base_frequency = {harmonics * base_frequency:g} Hz: expected below the "
            f"Nyquist frequency rate / 2 = {rate / 2:g} Hz"
        )
    N = int(round(duration * rate))
    if N < 2:
        raise ValueError(f"duration * rate: expected at least 2 samples, got {N}")
    dtype = np.dtype(dtype) if dtype is not None else jnp.zeros(()).dtype
    n = int(n_joints)
    qlim = _limits(q_limits, "q_limits", n, dtype, pair=True)
    dqlim = _limits(dq_limits, "dq_limits", n, dtype, pair=False)
    ddqlim = _limits(ddq_limits, "ddq_limits", n, dtype, pair=False)
    if q0 is None:
        center = jnp.zeros(n, dtype) if qlim is None else 0.5 * (qlim[:, 0] + qlim[:, 1])
    else:
        center = jnp.asarray(np.asarray(q0, np.float64).reshape(-1), dtype)
        if center.shape != (n,):
            raise IdentifyError("q0", f"expected shape ({n},), got shape {np.shape(q0)}")
        if qlim is not None and not bool(jnp.all((center > qlim[:, 0]) & (center < qlim[:, 1]))):
            raise IdentifyError("q0", f"expected inside q_limits, got {np.asarray(q0).tolist()}")
    t = jnp.arange(N, dtype=dtype) / jnp.asarray(rate, dtype)

    key = jnp.asarray(key) if not isinstance(key, jax.Array) else key
    if not jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        key = jax.random.wrap_key_data(key)
    batch = key.shape
    sigma = jnp.asarray(float(amplitude) / math.sqrt(harmonics), dtype)
    q, dq, ddq = _random_series(
        key.reshape(-1), t, center, qlim, dqlim, ddqlim, sigma,
        jnp.asarray(base_frequency, dtype), jnp.asarray(margin, dtype), harmonics,
    )  # fmt: skip
    shape = lambda x: x.reshape(batch + x.shape[1:])  # noqa: E731
    return t, shape(q), shape(dq), shape(ddq)


@functools.partial(jax.jit, static_argnums=9)
def _random_series(keys, t, center, qlim, dqlim, ddqlim, sigma, f, margin, harmonics):
    """Random coefficients per key, scaled into the limits (None limits: no constraint)."""
    n = center.shape[0]
    dtype = t.dtype

    def one(k):
        ka, kb = jax.random.split(k)
        a = sigma * jax.random.normal(ka, (n, harmonics), dtype)
        b = sigma * jax.random.normal(kb, (n, harmonics), dtype)
        q, dq, ddq = fourier_trajectory(a, b, center, f, t)
        dev = q - center  # the Fourier sum; scaling it by s scales dq and ddq by s too
        scale = jnp.ones(n, dtype)
        if qlim is not None:
            # the offset may sit off-centre (q0 given): the room on each side counts
            up = jnp.max(jnp.maximum(dev, 0.0), axis=0)
            dn = jnp.max(jnp.maximum(-dev, 0.0), axis=0)
            tiny = jnp.finfo(dtype).tiny
            scale = jnp.minimum(scale, margin * (qlim[:, 1] - center) / jnp.maximum(up, tiny))
            scale = jnp.minimum(scale, margin * (center - qlim[:, 0]) / jnp.maximum(dn, tiny))
        if dqlim is not None:
            scale = jnp.minimum(scale, margin * dqlim / jnp.max(jnp.abs(dq), axis=0))
        if ddqlim is not None:
            scale = jnp.minimum(scale, margin * ddqlim / jnp.max(jnp.abs(ddq), axis=0))
        return center + scale * dev, scale * dq, scale * ddq

    return jax.vmap(one)(keys)
