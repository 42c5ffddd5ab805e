"""The benchmarked operations: how to make their inputs and the spatialjax call timed.

Every operation takes a batch of ``n`` items, generated on the host with
NumPy (valid rotations, physically consistent inertias) so that the same
arrays feed spatialjax on the device and the NumPy / Pinocchio / jaxlie
baselines on the host. ``fn`` receives the device arrays positionally and
returns a pytree of arrays; it is what ``jax.jit`` compiles.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from spatialjax import _params
from spatialjax._transforms import Plx, Plxb


@dataclasses.dataclass(frozen=True)
class Op:
    """A batched operation under test.

    Attributes:
      name: key used on the command line (``--ops``), in the JSON and the plot.
      title: what is computed, for the table and the plot.
      make_inputs: ``(rng, n, dtype) -> tuple of host arrays`` with leading axis ``n``.
      fn: the spatialjax call, ``(*device_arrays) -> pytree``.
    """

    name: str
    title: str
    make_inputs: Callable[[np.random.Generator, int, np.dtype], tuple]
    fn: Callable


# ------------------------------------------------------------------- input generators
def random_rotations(rng: np.random.Generator, n: int) -> np.ndarray:
    """``(n, 3, 3)`` float64 rotations, uniform on SO(3) (normalised Gaussian quaternions)."""
    q = rng.standard_normal((n, 4))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = q.T
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        axis=-2,
    )


def random_inertia_params(rng: np.random.Generator, n: int) -> np.ndarray:
    """``(n, 10)`` float64 fully consistent parameters ``[m, h, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``.

    Mass in [0.5, 2], CoM within ~0.1 of the origin, principal moments about the
    CoM drawn so that the triangle inequality holds strictly, random axes; the
    inertia is then moved to the frame origin (parallel axis).
    """
    m = rng.uniform(0.5, 2.0, n)
    c = 0.1 * rng.standard_normal((n, 3))
    # principal second moments s_i > 0 give moments λ_i = s_j + s_k (triangle holds)
    s = rng.uniform(0.01, 0.1, (n, 3)) * m[:, None]
    lam = s.sum(-1, keepdims=True) - s
    R = random_rotations(rng, n)
    I_c = np.einsum("nij,nj,nkj->nik", R, lam, R)
    cc = np.einsum("ni,nj->nij", c, c)
    I_o = I_c + m[:, None, None] * (np.einsum("ni,ni->n", c, c)[:, None, None] * np.eye(3) - cc)
    return _params.pack(m, m[:, None] * c, I_o, np)


def pseudo_inertia_np(params: np.ndarray) -> np.ndarray:
    """``(n, 4, 4)`` pseudo-inertia ``[[S, h], [hᵀ, m]]`` of ``(n, 10)`` parameters (NumPy)."""
    return _params.pseudo_inertia(params, np)


def inertia_matrix_np(i6: np.ndarray) -> np.ndarray:
    """``[Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` -> symmetric ``(n, 3, 3)`` (NumPy)."""
    return _params.sym_from6(i6, np)


def _transform_inputs(rng, n, k=1):
    out = []
    for _ in range(k):
        out += [random_rotations(rng, n), rng.standard_normal((n, 3))]
    return out


def _cast(arrays, dtype):
    return tuple(np.ascontiguousarray(a, dtype=dtype) for a in arrays)


def _in_compose(rng, n, dtype):
    return _cast(_transform_inputs(rng, n, 2), dtype)


def _in_apply(rng, n, dtype):
    return _cast(_transform_inputs(rng, n) + [rng.standard_normal((n, 6))], dtype)


def _in_inertia_transform(rng, n, dtype):
    return _cast(_transform_inputs(rng, n) + [random_inertia_params(rng, n)], dtype)


def _in_sandwich(rng, n, dtype):
    E, r = _transform_inputs(rng, n)
    T = np.zeros((n, 4, 4))
    T[:, :3, :3] = E
    T[:, :3, 3] = -np.einsum("nij,nj->ni", E, r)
    T[:, 3, 3] = 1.0
    return _cast([T, pseudo_inertia_np(random_inertia_params(rng, n))], dtype)


def _in_params(rng, n, dtype):
    return _cast([random_inertia_params(rng, n)], dtype)


# ------------------------------------------------------------------------ spatialjax calls
def _plx_compose(E1, r1, E2, r2):
    return Plx(E1, r1) @ Plx(E2, r2)


def _plxb_compose(E1, r1, E2, r2):
    return Plxb(E1, r1) @ Plxb(E2, r2)


def _apply_motion(E, r, m):
    return Plx(E, r).apply_motion(m)


def _apply_force(E, r, f):
    return Plx(E, r).apply_force(f)


def _inertia_transform(E, r, params):
    from spatialjax._inertia import RigidBodyInertia

    return RigidBodyInertia(params).transform(Plx(E, r))


def _sandwich(T, J):
    from spatialjax._inertia import pseudo_inertia_sandwich

    return pseudo_inertia_sandwich(T, J)


def _consistency(params):
    from spatialjax._consistency import physical_consistency
    from spatialjax._inertia import RigidBodyInertia

    return physical_consistency(RigidBodyInertia(params))


OPS: dict[str, Op] = {
    op.name: op
    for op in [
        Op("plx_compose", "Plx @ Plx (E1 E2, E2ᵀ r1 + r2)", _in_compose, _plx_compose),
        Op("plxb_compose", "Plxb @ Plxb (E1 E2, r1 + E1 r2)", _in_compose, _plxb_compose),
        Op("apply_motion", "Plx.apply_motion(m)", _in_apply, _apply_motion),
        Op("apply_force", "Plx.apply_force(f)", _in_apply, _apply_force),
        Op(
            "inertia_transform",
            "RigidBodyInertia.transform(Plx)",
            _in_inertia_transform,
            _inertia_transform,
        ),
        Op("pseudo_inertia_sandwich", "T J Tᵀ (4x4)", _in_sandwich, _sandwich),
        Op("physical_consistency", "physical_consistency(inertia)", _in_params, _consistency),
    ]
}


def available_ops() -> dict[str, str]:
    """``name -> reason`` for operations whose spatialjax module cannot be imported."""
    missing = {}
    for op in OPS.values():
        try:
            args = op.make_inputs(np.random.default_rng(0), 2, np.float32)
            jax.eval_shape(op.fn, *args)
        except (ImportError, AttributeError) as exc:
            missing[op.name] = f"{type(exc).__name__}: {exc}"
    return missing


# ----------------------------------------------------------------- forward kinematics
def make_chain(rng: np.random.Generator, length: int, batch: int, dtype) -> tuple:
    """``(length, batch, 3, 3)`` rotations ``R_{k-1,k}`` and ``(length, batch, 3)`` offsets.

    Link ``k``'s pose in its parent, as a right-associative ``Plxb`` (brax /
    Pinocchio ``SE3`` convention); offsets ~0.1 so long chains stay bounded.
    """
    E = random_rotations(rng, length * batch).reshape(length, batch, 3, 3)
    r = 0.1 * rng.standard_normal((length, batch, 3))
    return _cast([E, r], dtype)


def fk_sequential(E, r):
    """All link poses in the base, ``T_0k = T_01 ... T_{k-1,k}``, by ``lax.scan`` (n steps)."""

    def step(carry, link):
        pose = Plxb(*carry) @ Plxb(*link)
        return (pose.E, pose.r), (pose.E, pose.r)

    first = (E[0], r[0])
    _, (Es, rs) = jax.lax.scan(step, first, (E[1:], r[1:]))
    return Plxb(_prepend(E[0], Es), _prepend(r[0], rs))


def fk_associative(E, r):
    """The same prefix products with ``jax.lax.associative_scan`` (O(log n) depth)."""
    return jax.lax.associative_scan(lambda a, b: a @ b, Plxb(E, r), axis=0)


def _prepend(first, rest):
    return jnp.concatenate([first[None], rest], axis=0)
