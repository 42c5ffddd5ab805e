"""Every matrix product of the package's float32 programs asks for float32 arithmetic.

JAX's default precision lets recent NVIDIA GPUs round float32 operands to
TensorFloat-32 (10 mantissa bits) and TPUs to bfloat16; on an H200 that left float32
forward dynamics 10⁴ times further from float64 than on the CPU
(``benchmarks/README.md``, "Float32 products on a GPU"). The CPU ignores the setting,
so the check is on the programs themselves: every ``dot_general`` in the jaxpr of each
public call below, its derivatives and the sub-programs it calls (``jit``, ``scan``,
``cond``, custom derivatives) carries ``Precision.HIGHEST`` (``smallmat.FULL``).
"""

from __future__ import annotations

import functools
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import all_equations, random_states

import spatialjax as sj
import spatialjax.multibody as mb
from spatialjax import interop
from spatialjax.identification import (
    body_regressor,
    fit,
    fit_torques,
    identifiability,
    least_squares_torques,
    perturb_inertia,
)

F32 = jnp.float32
FULL = (jax.lax.Precision.HIGHEST, jax.lax.Precision.HIGHEST)


def default_precision_products(jaxpr) -> list[str]:
    """``"file:line"`` of each ``dot_general`` in ``jaxpr`` (recursively) below HIGHEST."""
    found = []
    for e in all_equations(jaxpr):
        if e.primitive.name == "dot_general" and e.params.get("precision") != FULL:
            tb = e.source_info.traceback
            frames = [] if tb is None else [f for f in tb.frames if "spatialjax" in f.file_name]
            found.append(f"{frames[0].file_name}:{frames[0].line_num}" if frames else "?")
    return found


def test_the_check_sees_a_default_product_and_one_at_full_precision():
    a = jnp.ones((3, 3), F32)
    plain = jax.make_jaxpr(jax.jit(lambda x: jnp.sin(x @ x)))(a).jaxpr
    full = jax.make_jaxpr(lambda x: jnp.matmul(x, x, precision="highest"))(a).jaxpr
    assert len(default_precision_products(plain)) == 1
    assert default_precision_products(full) == []


def _states(m, batch):
    """float32 ``q``, ``v`` of shape ``batch + (n,)`` (``batch`` is ``()`` or ``(k,)``)."""
    q, v, _ = random_states(m, batch[0] if batch else 1, np.random.default_rng(0), F32)
    return (q, v) if batch else (q[0], v[0])


def _multibody_cases():
    models = {
        "floating chain": mb.chain_model(4, floating_base=True, dtype="float32"),
        "16-link chain": mb.chain_model(16, dtype="float32"),
    }
    for name, m in models.items():
        for batch in ((), (5,)):
            yield from _model_cases(m, f"{name}, batch {batch}", *_states(m, batch))
    m = mb.chain_model(3, dtype="float32")
    q, v = _states(m, (6,))
    tau = jnp.zeros((10, m.nv), F32)
    yield "rollout", lambda q, v, tau: mb.rollout(m, q[0], v[0], tau, 0.01).q, (q, v, tau)
    yield "integrate", lambda q, v: mb.integrate(m, q, v, 0.01), (q, v)
    # a differential pair: one motor drives joints 1 and 2 (joint-space rows of motor columns)
    pair = mb.Transmission(("m1", "m2"), m.joint_names[1:], [[1.0, 0.0], [1.0, 1.0]])
    jm = mb.JointModel(("armature", "viscous", "coulomb"), transmission=pair)
    phi = jnp.ones((jm.n_columns(m),), F32)
    yield "JointModel.torque, coupled", lambda v: jm.torque(m, v, v, phi), (v,)


def _model_cases(m, tag, q, v):
    """The multibody calls on model ``m`` (closed over by each case's function)."""
    frame = m.body_names[-1]
    fd = functools.partial(mb.forward_dynamics, m)
    yield f"forward_kinematics {tag}", lambda q: mb.forward_kinematics(m, q).poses.r, (q,)
    yield f"rnea {tag}", lambda q, v: mb.rnea(m, q, v, v), (q, v)
    yield f"mass_matrix {tag}", lambda q: mb.mass_matrix(m, q), (q,)
    for method in ("aba", "crba", "auto"):
        f = functools.partial(lambda q, v, method: fd(q, v, v, method=method), method=method)
        yield f"forward_dynamics {method} {tag}", f, (q, v)
    yield f"grad forward_dynamics {tag}", jax.grad(lambda q, v: fd(q, v, v).sum()), (q, v)
    yield f"grad rnea {tag}", jax.grad(lambda q, v: mb.rnea(m, q, v, v).sum()), (q, v)
    yield f"coriolis_matrix {tag}", lambda q, v: mb.coriolis_matrix(m, q, v), (q, v)
    yield f"nonlinear_effects {tag}", lambda q, v: mb.nonlinear_effects(m, q, v), (q, v)
    yield f"gravity_torques {tag}", lambda q: mb.gravity_torques(m, q), (q,)
    yield f"center_of_mass_jacobian {tag}", lambda q: mb.center_of_mass_jacobian(m, q), (q,)
    for ref in ("world", "local", "local_world_aligned"):
        f = functools.partial(lambda q, ref: mb.frame_jacobian(m, q, frame, reference=ref), ref=ref)
        yield f"frame_jacobian {ref} {tag}", f, (q,)
    poses = lambda q: mb.frame_poses(m, mb.forward_kinematics(m, q).poses).r  # noqa: E731
    yield f"frame_poses {tag}", poses, (q,)
    yield (
        f"joint_torque_regressor {tag}",
        lambda q, v: mb.joint_torque_regressor(m, q, v, v),
        (q, v),
    )


def _spatial_cases():
    rng = np.random.default_rng(1)
    R = jnp.asarray(np.linalg.qr(rng.standard_normal((5, 3, 3)))[0], F32)
    t = jnp.asarray(rng.standard_normal((5, 3)), F32)
    w = jnp.asarray(rng.standard_normal((5, 6)), F32)
    M6 = jnp.asarray(rng.standard_normal((5, 6, 6)), F32)
    I_c = jnp.eye(3, dtype=F32) * jnp.arange(1, 6, dtype=F32)[:, None, None]
    body = sj.RigidBodyInertia.from_mass_com_inertia(jnp.full((5,), 2.0, F32), 0.1 * t, I_c)
    p, J = body.params, body.pseudo_inertia()
    T4 = jnp.broadcast_to(jnp.eye(4, dtype=F32), (5, 4, 4))
    quat = jnp.asarray([[1.0, 0.0, 0.0, 0.0]] * 5, F32)
    I = sj.RigidBodyInertia  # noqa: E741

    def brax(q, pos, i_c):  # a brax ``Inertia`` as far as from_brax_inertia reads one
        it = types.SimpleNamespace(transform=types.SimpleNamespace(rot=q, pos=pos), i=i_c)
        it.mass = jnp.ones(q.shape[:-1], F32)
        return interop.from_brax_inertia(it).params

    def summed(f):
        return jax.grad(lambda x: f(x).sum())

    yield "Plx compose", lambda R, t: (sj.Plx(R, t) @ sj.Plx(R, t)).r, (R, t)
    yield "Plx apply_force", lambda R, t, w: sj.Plx(R, t).apply_force(w), (R, t, w)
    moved = lambda M, R, t: sj.transform_spatial_matrix(M, sj.Plx(R, t))  # noqa: E731
    yield "transform_spatial_matrix", moved, (M6, R, t)
    yield (
        "RigidBodyInertia.transform",
        lambda p, R, t: I(p).transform(sj.Plx(R, t)).params,
        (p, R, t),
    )
    yield "pseudo_inertia_sandwich", sj.pseudo_inertia_sandwich, (T4, J)
    yield "grad log_det_divergence", summed(lambda J: sj.log_det_divergence(J, 1.1 * J)), (J,)
    yield "grad geodesic_distance", summed(lambda J: sj.geodesic_distance(J, 1.1 * J)), (J,)
    yield "grad nearest_consistent", summed(lambda p: sj.nearest_consistent(I(p)).params), (p,)
    yield "grad so3_log", summed(sj.so3_log), (R,)
    yield "perturb_inertia", lambda p: perturb_inertia(I(p), 0.1, jax.random.key(0)).params, (p,)
    yield "from_brax_inertia", brax, (quat, t, I_c)

    def gazebo(R, t, I_c):
        return interop.gazebo_link_spatial_inertia(1.0 + 0 * t[:, 0], sj.Plxb(R, t), I_c)

    yield "gazebo_link_spatial_inertia", gazebo, (R, t, I_c)


def _identification_cases():
    rng = np.random.default_rng(2)
    v = jnp.asarray(rng.standard_normal((32, 6)), F32)
    a = jnp.asarray(rng.standard_normal((32, 6)), F32)
    Y = body_regressor(v, a)
    f = jnp.asarray(rng.standard_normal((32, 6)), F32)
    yield "fit", lambda Y, f: fit(Y, f).inertia.params, (Y, f)
    m = mb.chain_model(2, dtype="float32")
    q, dq = _states(m, (40,))
    Yj = mb.joint_torque_regressor(m, q, dq, dq)
    tau = mb.rnea(m, q, dq, dq)
    yield "least_squares_torques", lambda Y, tau: least_squares_torques(Y, tau)[0], (Yj, tau)
    fit_t = lambda Y, tau: fit_torques(Y, tau, prior=m.inertia).inertia.params  # noqa: E731
    yield "fit_torques", fit_t, (Yj, tau)
    yield "identifiability", lambda Y: identifiability(Y).rank, (Yj,)


def _demo_cases():
    from spatialjax._cli.demo_payload import excitation

    def motion():  # `spatialjax demo payload --float32`: the wrist's twists and gravity
        return excitation(np.random.default_rng(0), 2, 20, F32)

    yield "demo payload excitation", motion, ()


CASES = [*_multibody_cases(), *_spatial_cases(), *_identification_cases(), *_demo_cases()]


@pytest.mark.parametrize(("name", "fn", "args"), CASES, ids=[c[0] for c in CASES])
def test_products_are_at_full_precision(name, fn, args):
    jaxpr = jax.make_jaxpr(fn)(*args).jaxpr
    assert default_precision_products(jaxpr) == []
