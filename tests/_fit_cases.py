"""Problems and jitted ``fit`` entry points shared by test_fit.py and test_identification.py.

Compiling ``fit`` dominates the identification tests, so every fit there uses
the shapes below (3 bodies x 24 samples, float64 unless a test is about
float32) and one of a few call structures, each compiled once per process:

* eager ``fit(Y, f, ...)``, one program per solver setting: ``fit`` broadcasts
  ``weights``, ``prior`` and ``gamma`` to the batch and passes "not given" as
  a traced flag, so calls with or without weights, prior or ``gamma`` (scalar
  or batched) all share it;
* :func:`fit_vmapped_grad` (``jit`` of ``value_and_grad`` of a ``vmap`` of
  ``fit``), defined once here: the vmap, jit-status and gradient tests all
  run this one compiled program (a separate ``vmap`` program and an eager
  ``grad`` would each compile ``fit`` again).
"""

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

import spatialjax as sj
from spatialjax.identification import FitResult, body_regressor, fit

N_BODIES, N_SAMPLES = 3, 24
# wrist F/T sensor noise used by the noisy problems: (n_x, n_y, n_z) N·m, (f_x, f_y, f_z) N
SIGMA = np.array([0.02, 0.02, 0.03, 1.2, 1.2, 0.5])


def trajectory():
    """Persistently exciting: each axis at its own frequency (``a = dv/dt``)."""
    t = np.arange(N_SAMPLES)[:, None] * 0.12
    freq = 1.0 + 0.41 * np.arange(6)
    phase = np.arange(6) * np.pi / 3
    return jnp.asarray(np.sin(freq * t + phase)), jnp.asarray(freq * np.cos(freq * t + phase))


def _random_points(rng):
    """``N_BODIES`` x 10 random point masses in a 1 m box (NumPy, float64)."""
    return rng.uniform(0.05, 0.5, size=(N_BODIES, 10)), rng.uniform(-0.5, 0.5, (N_BODIES, 10, 3))


# The problems are built by jitted programs (one per dtype): eagerly, their few dozen
# operations would each compile a program of their own in every test process.
@functools.partial(jax.jit, static_argnames="dtype")
def _regressor(v, a, dtype):
    return jnp.broadcast_to(body_regressor(v, a).astype(dtype), (N_BODIES, N_SAMPLES, 6, 10))


@functools.partial(jax.jit, static_argnames="dtype")
def _synthesise(m, p, v, a, noise, dtype):
    truth = sj.RigidBodyInertia.from_point_masses(m.astype(dtype), p.astype(dtype))
    Y = _regressor(v, a, dtype)
    f = jnp.einsum("nsij,nj->nsi", Y, truth.params) + noise.astype(dtype)
    return truth, Y, f


def regressor_of(v, a, dtype=jnp.float64):
    """``(N_BODIES, N_SAMPLES, 6, 10)``: one trajectory ``v, a (N_SAMPLES, 6)`` for every body."""
    return _regressor(jnp.asarray(v, jnp.float64), jnp.asarray(a, jnp.float64), jnp.dtype(dtype))


def problem(rng, noise, dtype=jnp.float64):
    """``truth, Y, f, w``: random bodies on :func:`trajectory`, noise ``noise · SIGMA``.

    ``truth``: ``N_BODIES`` consistent bodies, each 10 random point masses in a 1 m box.
    """
    m, p = _random_points(rng)
    e = noise * rng.normal(size=(N_BODIES, N_SAMPLES, 6)) * SIGMA
    truth, Y, f = _synthesise(m, p, *trajectory(), e, jnp.dtype(dtype))
    return truth, Y, f, jnp.asarray(1.0 / SIGMA**2, dtype)


def box_prior(mass, dtype=jnp.float64):
    """Uniform 1 m cubes of the given masses (consistent priors)."""
    return sj.box(jnp.asarray(mass, dtype), jnp.ones((3,), dtype))


def _one(Y, f, w, prior, gamma):
    """``Y (N, 6, 10)`` broadcast against the inner batch of ``f``, ``w``, ``prior``, ``gamma``."""
    return fit(Y, f, weights=w, prior=sj.RigidBodyInertia(prior), gamma=gamma)


def probe(params):
    """Σ mass (best determined) + Σ (rotational inertia)² (least determined) over all bodies."""
    return jnp.sum(params[..., 0]) + jnp.sum(params[..., 4:] ** 2)


class VmappedFit(NamedTuple):
    """:func:`fit_vmapped_grad`'s output: the fit, :func:`probe` of it and its gradients."""

    result: FitResult
    probe: jax.Array
    grad_f: jax.Array
    grad_prior: jax.Array
    grad_gamma: jax.Array


def _fit_and_grad(Y, f, w, prior, gamma):
    def value(f, prior, gamma):
        res = jax.vmap(_one)(Y, f, w, prior, gamma)
        return probe(res.inertia.params), res

    (p, res), grads = jax.value_and_grad(value, argnums=(0, 1, 2), has_aux=True)(f, prior, gamma)
    return VmappedFit(res, p, *grads)


_fit_vmapped_grad = jax.jit(_fit_and_grad)


def fit_vmapped_grad(Y, f, w, prior, gamma) -> VmappedFit:
    """``jit`` of ``value_and_grad`` of a ``vmap`` of fit, one program for every use.

    Each outer body's regressor ``Y (B, N, 6, 10)`` against an inner batch:
    ``f (B, C, N, 6)``, ``w (B, C, N, 6)``, ``prior (B, C, 10)`` (parameters),
    ``gamma (B, C)``. Returns the fit of batch ``(B, C)``, :func:`probe` of
    its parameters and the gradients of that with respect to ``f``, ``prior``
    and ``gamma`` (reverse mode through ``fit``'s implicit-function
    derivative). One compiled program for every call with the same shapes
    (inputs are made float64 and strongly typed first: a weakly typed array,
    e.g. from ``jnp.full(shape, 0.05)``, would key a separate program).
    """
    args = (Y, f, w, prior, gamma)
    return _fit_vmapped_grad(*(jnp.asarray(x).astype(jnp.float64) for x in args))


def fit_vmapped(Y, f, w, prior, gamma) -> FitResult:
    """The fit of :func:`fit_vmapped_grad` alone (same compiled program)."""
    return fit_vmapped_grad(Y, f, w, prior, gamma).result
