"""Baselines measured in the same run as spatialjax: NumPy, Pinocchio loops, jaxlie.

Each baseline computes the *same* quantity as the spatialjax operation of the
same name (checked in ``tests/test_bench_smoke.py`` through the
``canonical_*`` converters), written the way a user of that library would:

* **NumPy**, vectorised over the batch with ``@`` (``matmul``) on stacked
  3×3 / 4×4 matrices (``np.einsum`` into a preallocated output for the
  ``apply_*`` operations, the faster of the two there), ``np.cross`` and
  ``np.linalg.eigvalsh``; float32 stays float32.
* **Pinocchio** (``pin``), a Python loop over ``pin.SE3`` / ``pin.Motion`` /
  ``pin.Force`` / ``pin.Inertia`` objects built beforehand (building them is
  not timed). Always float64. ``pseudo_inertia_sandwich`` has no Pinocchio
  call; its loop is ``T @ J @ T.T`` on per-item NumPy 4×4 arrays, and
  ``physical_consistency`` calls ``np.linalg.eigvalsh`` on ``pin.Inertia``'s
  CoM inertia and pseudo-inertia matrix per item.
* **jaxlie**, jitted on the same device, on its own ``SE3`` parameterisation
  (``wxyz_xyz``, 7 numbers; converting to it is not timed). Compose is
  ``SE3 @ SE3``; a motion or force transform is ``T.inverse().adjoint() @ m``
  / ``T.adjoint().T @ f`` (jaxlie orders twists ``[v; ω]``).

Pinocchio, jaxlie and their conversions are imported lazily: they are
benchmark extras, not dependencies of spatialjax.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np

from .ops import inertia_matrix_np, pseudo_inertia_np


def _T(A):
    return np.swapaxes(A, -1, -2)


def _mv(A, x):
    return (A @ x[..., None])[..., 0]


# ------------------------------------------------------------------------------- NumPy
def _np_plx_compose(E1, r1, E2, r2):
    return E1 @ E2, _mv(_T(E2), r1) + r2


def _np_plxb_compose(E1, r1, E2, r2):
    return E1 @ E2, r1 + _mv(E1, r2)


# apply_*: einsum into the two halves of a preallocated output; 1.3-1.5x faster than
# matmul + concatenate on the project's CPU (3e5 items, float32 and float64)
def _np_apply_motion(E, r, m):
    w, v = m[..., :3], m[..., 3:]
    out = np.empty(m.shape, m.dtype)
    np.einsum("...ij,...j->...i", E, w, out=out[..., :3])
    np.einsum("...ij,...j->...i", E, v - np.cross(r, w), out=out[..., 3:])
    return (out,)


def _np_apply_force(E, r, f):
    n, fl = f[..., :3], f[..., 3:]
    out = np.empty(f.shape, f.dtype)
    np.einsum("...ij,...j->...i", E, n - np.cross(r, fl), out=out[..., :3])
    np.einsum("...ij,...j->...i", E, fl, out=out[..., 3:])
    return (out,)


def _np_inertia_transform(E, r, params):
    # The timed NumPy peer: written as a NumPy user would, independent of spatialjax on purpose.
    m, h = params[..., 0], params[..., 1:4]
    I = inertia_matrix_np(params[..., 4:])
    S = 0.5 * np.trace(I, axis1=-2, axis2=-1)[..., None, None] * np.eye(3, dtype=I.dtype) - I
    t = -_mv(E, r)
    Rh = _mv(E, h)
    mt = m[..., None] * t
    S_B = E @ S @ _T(E) + Rh[..., :, None] * t[..., None, :]
    S_B = S_B + t[..., :, None] * Rh[..., None, :] + mt[..., :, None] * t[..., None, :]
    I_B = np.trace(S_B, axis1=-2, axis2=-1)[..., None, None] * np.eye(3, dtype=I.dtype) - S_B
    i6 = I_B[..., [0, 0, 1, 0, 1, 2], [0, 1, 1, 2, 2, 2]]
    return (np.concatenate([m[..., None], Rh + mt, i6], axis=-1),)


def _np_sandwich(T, J):
    return (T @ J @ _T(T),)


def _np_consistency(params):
    m, h = params[..., 0], params[..., 1:4]
    c = h / m[..., None]
    I_o = inertia_matrix_np(params[..., 4:])
    cx = np.zeros(I_o.shape, I_o.dtype)
    cx[..., 0, 1], cx[..., 0, 2], cx[..., 1, 2] = -c[..., 2], c[..., 1], -c[..., 0]
    cx = cx - _T(cx)
    lam = np.linalg.eigvalsh(I_o + m[..., None, None] * (cx @ cx))
    mu = np.linalg.eigvalsh(pseudo_inertia_np(params).astype(params.dtype))
    tri = lam[..., 0] + lam[..., 1] - lam[..., 2]
    return m > 0, lam[..., 0] >= 0, tri >= 0, lam[..., 0], tri, mu[..., 0]


NUMPY: dict[str, Callable] = {
    "plx_compose": _np_plx_compose,
    "plxb_compose": _np_plxb_compose,
    "apply_motion": _np_apply_motion,
    "apply_force": _np_apply_force,
    "inertia_transform": _np_inertia_transform,
    "pseudo_inertia_sandwich": _np_sandwich,
    "physical_consistency": _np_consistency,
}


def canonical(name: str, out) -> tuple:
    """spatialjax's output of ``name`` as the tuple of NumPy arrays the baselines return."""
    if name in ("plx_compose", "plxb_compose"):
        return np.asarray(out.E), np.asarray(out.r)
    if name == "inertia_transform":
        return (np.asarray(out.params),)
    if name == "physical_consistency":
        fields = (
            "mass_positive",
            "inertia_psd",
            "triangle_inequality",
            "min_eig_inertia_com",
            "triangle_margin",
            "min_eig_pseudo_inertia",
        )
        return tuple(np.asarray(getattr(out, f)) for f in fields)
    return (np.asarray(out),)


def numpy_fk(E, r):
    """Sequential FK over axis 0: a Python loop over links, vectorised over the batch."""
    Es, rs = [E[0]], [r[0]]
    for k in range(1, len(E)):
        rs.append(rs[-1] + _mv(Es[-1], r[k]))
        Es.append(Es[-1] @ E[k])
    return np.stack(Es), np.stack(rs)


# --------------------------------------------------------------------------- Pinocchio
PIN_LABELS = {
    "plx_compose": "pin.SE3 * pin.SE3",
    "plxb_compose": "pin.SE3 * pin.SE3",
    "apply_motion": "pin.SE3.actInv(pin.Motion)",
    "apply_force": "pin.SE3.actInv(pin.Force)",
    "inertia_transform": "pin.SE3.actInv(pin.Inertia)",
    "pseudo_inertia_sandwich": "Python loop of NumPy 4x4 T @ J @ T.T (no pin call)",
    "physical_consistency": "pin.Inertia + np.linalg.eigvalsh per item",
}


def _se3_list(pin, R, p):
    return [
        pin.SE3(np.ascontiguousarray(Ri), np.ascontiguousarray(pi))
        for Ri, pi in zip(R, p, strict=True)
    ]


def pin_setup(name: str, arrays: tuple) -> tuple[Callable, tuple]:
    """``(loop, args)``: the per-item Pinocchio loop for ``name`` on float64 host ``arrays``.

    Objects are built here, outside the timed ``loop(*args)``, which returns
    the list of per-item results (see :func:`pin_canonical`).
    """
    import pinocchio as pin

    a = [np.asarray(x, np.float64) for x in arrays]
    if name == "plx_compose":
        # Plx(E, r) is the pose SE3(Eᵀ, r) of B in A; X1 @ X2 is the pose M2 * M1.
        M1, M2 = _se3_list(pin, _T(a[0]), a[1]), _se3_list(pin, _T(a[2]), a[3])
        return (lambda A, B: [b * x for x, b in zip(A, B, strict=True)]), (M1, M2)
    if name == "plxb_compose":
        M1, M2 = _se3_list(pin, a[0], a[1]), _se3_list(pin, a[2], a[3])
        return (lambda A, B: [x * b for x, b in zip(A, B, strict=True)]), (M1, M2)
    if name in ("apply_motion", "apply_force"):
        Ms = _se3_list(pin, _T(a[0]), a[1])
        cls = pin.Motion if name == "apply_motion" else pin.Force
        # pin orders [linear; angular]
        vs = [cls(np.ascontiguousarray(x[3:]), np.ascontiguousarray(x[:3])) for x in a[2]]
        return (lambda Ms, vs: [M.actInv(v) for M, v in zip(Ms, vs, strict=True)]), (Ms, vs)
    if name == "inertia_transform":
        Ms = _se3_list(pin, _T(a[0]), a[1])
        Is = [pin.Inertia.FromDynamicParameters(np.ascontiguousarray(p)) for p in a[2]]
        return (lambda Ms, Is: [M.actInv(I) for M, I in zip(Ms, Is, strict=True)]), (Ms, Is)
    if name == "pseudo_inertia_sandwich":
        Ts, Js = list(a[0]), list(a[1])
        return (lambda Ts, Js: [T @ J @ T.T for T, J in zip(Ts, Js, strict=True)]), (Ts, Js)
    if name == "physical_consistency":
        Is = [pin.Inertia.FromDynamicParameters(np.ascontiguousarray(p)) for p in a[0]]
        return _pin_consistency_loop, (Is,)
    raise KeyError(name)


def _pin_consistency_loop(Is):
    out = []
    eigvalsh = np.linalg.eigvalsh
    for I in Is:
        lam = eigvalsh(I.inertia)
        mu = eigvalsh(I.toPseudoInertia().toMatrix())
        tri = lam[0] + lam[1] - lam[2]
        out.append((I.mass > 0, lam[0] >= 0, tri >= 0, lam[0], tri, mu[0]))
    return out


def pin_canonical(name: str, results: list) -> tuple:
    """The per-item Pinocchio results of :func:`pin_setup` as the NumPy baseline's tuple."""
    if name in ("plx_compose", "plxb_compose"):
        R = np.stack([M.rotation for M in results])
        E = _T(R) if name == "plx_compose" else R
        return E, np.stack([M.translation for M in results])
    if name in ("apply_motion", "apply_force"):
        return (np.stack([np.concatenate([v.angular, v.linear]) for v in results]),)
    if name == "inertia_transform":
        return (np.stack([I.toDynamicParameters() for I in results]),)
    if name == "pseudo_inertia_sandwich":
        return (np.stack(results),)
    return tuple(np.asarray(col) for col in zip(*results, strict=True))


def pin_fk_setup(E, r) -> tuple[Callable, tuple]:
    """Pinocchio FK loop ``oMi = oMi * M`` over each chain of ``(length, batch)`` Plxb links."""
    import pinocchio as pin

    E, r = np.asarray(E, np.float64), np.asarray(r, np.float64)
    chains = [_se3_list(pin, E[:, b], r[:, b]) for b in range(E.shape[1])]

    def loop(chains):
        out = []
        for links in chains:
            poses = [links[0]]
            for M in links[1:]:
                poses.append(poses[-1] * M)
            out.append(poses)
        return out

    return loop, (chains,)


# ------------------------------------------------------------------------------ jaxlie
JAXLIE_LABELS = {
    "plx_compose": "jaxlie SE3 @ SE3",
    "plxb_compose": "jaxlie SE3 @ SE3",
    "apply_motion": "jaxlie T.inverse().adjoint() @ twist",
    "apply_force": "jaxlie T.adjoint().T @ wrench",
}


def _to_jaxlie(E, r):
    import jaxlie

    return jaxlie.SE3.from_rotation_and_translation(jaxlie.SO3.from_matrix(E), r).wxyz_xyz


def _swap(x):
    return jnp.concatenate([x[..., 3:], x[..., :3]], axis=-1)


def _jl_compose(a, b):
    import jaxlie

    return (jaxlie.SE3(a) @ jaxlie.SE3(b)).wxyz_xyz


def _jl_apply_motion(a, m):
    import jaxlie

    return (jaxlie.SE3(a).inverse().adjoint() @ m[..., None])[..., 0]


def _jl_apply_force(a, f):
    import jaxlie

    return (jnp.swapaxes(jaxlie.SE3(a).adjoint(), -1, -2) @ f[..., None])[..., 0]


def jaxlie_setup(name: str, arrays: tuple, device) -> tuple[Callable, tuple] | None:
    """``(fn, device_args)`` for jaxlie's version of ``name``, or ``None`` if it has none.

    The conversion of the inputs to jaxlie's ``wxyz_xyz`` (and ``[v; ω]``
    ordering) runs here, outside the timing.
    """
    if name not in JAXLIE_LABELS:
        return None
    a = [jax.device_put(x, device) for x in arrays]
    to_jl = jax.jit(_to_jaxlie)
    if name == "plxb_compose":
        return _jl_compose, (to_jl(a[0], a[1]), to_jl(a[2], a[3]))
    if name == "plx_compose":
        # Plx(E, r) is the pose (Eᵀ, r); X1 @ X2 is the pose product P2 @ P1
        return _jl_compose, (to_jl(_swapT(a[2]), a[3]), to_jl(_swapT(a[0]), a[1]))
    pose = to_jl(_swapT(a[0]), a[1])
    fn = _jl_apply_motion if name == "apply_motion" else _jl_apply_force
    return fn, (pose, jax.jit(_swap)(a[2]))


def _swapT(E):
    return jnp.swapaxes(E, -1, -2)


def jaxlie_canonical(name: str, out) -> tuple:
    """jaxlie's output as the NumPy baseline's tuple (rotation matrix, ``[ω; v]`` order)."""
    import jaxlie

    if name in ("plx_compose", "plxb_compose"):
        T = jaxlie.SE3(out)
        R = np.asarray(T.rotation().as_matrix())
        E = _T(R) if name == "plx_compose" else R
        return E, np.asarray(T.translation())
    return (np.asarray(_swap(out)),)
