"""Problems and jitted ``fit`` entry points shared by test_fit.py and test_identification.py.

Compiling ``fit`` dominates the identification tests, so every fit there uses
the shapes below (3 bodies x 24 samples, float64 unless a test is about
float32) and one of a few call structures, each compiled once per process:

* eager ``fit(Y, f, ...)``, one program per solver: ``fit`` broadcasts
  ``weights``, ``prior`` and ``gamma`` to the batch and passes "not given" as
  a traced flag, so calls with or without weights, prior or ``gamma`` (scalar
  or batched) all share it;
* :data:`fit_vmapped` (``jit`` of ``vmap`` of ``fit``), defined once here so
  that both test modules hit the same compiled program.
"""

import jax
import jax.numpy as jnp
import numpy as np

import spatialjax as sj
from spatialjax.identification import body_regressor, fit

N_BODIES, N_SAMPLES = 3, 24
# wrist F/T sensor noise used by the noisy problems: (n_x, n_y, n_z) N·m, (f_x, f_y, f_z) N
SIGMA = np.array([0.02, 0.02, 0.03, 1.2, 1.2, 0.5])


def trajectory():
    """Persistently exciting: each axis at its own frequency (``a = dv/dt``)."""
    t = np.arange(N_SAMPLES)[:, None] * 0.12
    freq = 1.0 + 0.41 * np.arange(6)
    phase = np.arange(6) * np.pi / 3
    return jnp.asarray(np.sin(freq * t + phase)), jnp.asarray(freq * np.cos(freq * t + phase))


def random_bodies(rng, dtype=jnp.float64):
    """``N_BODIES`` consistent bodies, each 10 random point masses in a 1 m box."""
    m = rng.uniform(0.05, 0.5, size=(N_BODIES, 10))
    p = rng.uniform(-0.5, 0.5, size=(N_BODIES, 10, 3))
    return sj.RigidBodyInertia.from_point_masses(jnp.asarray(m, dtype), jnp.asarray(p, dtype))


def regressor_of(v, a, dtype=jnp.float64):
    """``(N_BODIES, N_SAMPLES, 6, 10)``: the same trajectory for every body."""
    return jnp.broadcast_to(body_regressor(v, a).astype(dtype), (N_BODIES, N_SAMPLES, 6, 10))


def problem(rng, noise, dtype=jnp.float64):
    """``truth, Y, f, w``: random bodies on :func:`trajectory`, noise ``noise · SIGMA``."""
    truth = random_bodies(rng, dtype)
    Y = regressor_of(*trajectory(), dtype)
    f = jnp.einsum("nsij,nj->nsi", Y, truth.params)
    f = f + jnp.asarray(noise * rng.normal(size=f.shape) * SIGMA, dtype)
    return truth, Y, f, jnp.asarray(1.0 / SIGMA**2, dtype)


def box_prior(mass, dtype=jnp.float64):
    """Uniform 1 m cubes of the given masses (consistent priors)."""
    return sj.box(jnp.asarray(mass, dtype), jnp.ones((3,), dtype))


def _one(Y, f, w, prior, gamma):
    """``Y (N, 6, 10)`` broadcast against the inner batch of ``f``, ``w``, ``prior``, ``gamma``."""
    return fit(Y, f, weights=w, prior=sj.RigidBodyInertia(prior), gamma=gamma)


_fit_vmapped = jax.jit(jax.vmap(_one))


def fit_vmapped(Y, f, w, prior, gamma):
    """``jit`` of a ``vmap`` of fit: each outer body's regressor against an inner batch.

    One compiled program for every call with the same shapes (inputs are made
    float64 and strongly typed first: a weakly typed array, e.g. from
    ``jnp.full(shape, 0.05)``, would key a separate program).
    """
    args = (Y, f, w, prior, gamma)
    return _fit_vmapped(*(jnp.asarray(x).astype(jnp.float64) for x in args))
