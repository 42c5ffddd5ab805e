"""frame_jacobian, center_of_mass and center_of_mass_jacobian; Model frames.

References: Pinocchio's ``getFrameJacobian`` (WORLD, LOCAL, LOCAL_WORLD_ALIGNED),
``centerOfMass`` and ``jacobianCenterOfMass`` on example-robot-data robots loaded by
both libraries from the same URDF; MuJoCo's ``site_xpos``/``site_xmat`` and
``mj_jacSite``/``mj_jacBody`` for MJCF frames and sites; closed forms for a planar
chain; forward-mode derivatives of the frame positions for the toy fixtures.
Pinocchio orders Jacobian rows ``[v; ω]`` and a free flyer's columns ``[v; ω]``:
``swap_pin_rows`` swaps the row blocks and ``model.v_permutation()`` the columns.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import (
    BATCH_SHAPES,
    CASES,
    FIXTURES,
    ROBOTS,
    pin_model,
    raises_argument,
    random_states,
    swap_pin_rows,
)

import spatialjax.multibody as mb
from spatialjax import ArgumentError, ArgumentTypeError

FIX = FIXTURES
REFS = ("world", "local", "local_world_aligned")
FAST = ("panda", "ur5", "solo12")
PARAMS = [pytest.param(c, id=c[0], marks=() if c[0] in FAST else pytest.mark.slow) for c in CASES]


@functools.partial(jax.jit, static_argnames="frames")
def _all_jacobians(model, q, frames):
    """Every frame's three Jacobians, the CoM and its Jacobian, in one program."""
    J = jnp.stack(
        [jnp.stack([mb.frame_jacobian(model, q, f, r) for r in REFS], -3) for f in frames], -4
    )
    return J, mb.center_of_mass(model, q), mb.center_of_mass_jacobian(model, q)


# ------------------------------------------------------------------ Pinocchio
@pytest.mark.parametrize("case", PARAMS)
def test_frame_and_com_jacobians_match_pinocchio(case):
    pin = pytest.importorskip("pinocchio")
    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    name, rel, floating, locked = case
    path = str(ROBOTS / rel)
    model = mb.Model.from_urdf(path, floating_base=floating, locked_joints=locked, dtype="float64")
    pm = pin_model(path, floating, locked)
    pd = pm.createData()
    q, _, _ = random_states(model, 3, np.random.default_rng(7))
    frames = model.frame_names  # every link, merged ones (Panda's fingers, hand...) included
    J, com, Jc = (np.asarray(x) for x in _all_jacobians(model, q, frames))
    assert J.shape == (3, len(frames), 3, 6, model.nv) and Jc.shape == (3, 3, model.nv)
    perm = model.v_permutation()
    qp = np.asarray(model.q_to_pinocchio(q))
    kinds = (pin.WORLD, pin.LOCAL, pin.LOCAL_WORLD_ALIGNED)
    for k in range(3):
        pin.computeJointJacobians(pm, pd, qp[k])
        pin.updateFramePlacements(pm, pd)
        for f, fname in enumerate(frames):
            fid = pm.getFrameId(fname)
            assert fid < pm.nframes, fname
            for r, kind in enumerate(kinds):
                ref = swap_pin_rows(pin.getFrameJacobian(pm, pd, fid, kind))[:, perm]
                np.testing.assert_allclose(
                    J[k, f, r], ref, rtol=0, atol=1e-12, err_msg=f"{name} {fname} {REFS[r]}"
                )
        c_ref = pin.centerOfMass(pm, pd, qp[k])
        np.testing.assert_allclose(com[k], c_ref, rtol=0, atol=1e-12)
        Jc_ref = pin.jacobianCenterOfMass(pm, pd, qp[k])[:, perm]
        np.testing.assert_allclose(Jc[k], Jc_ref, rtol=0, atol=1e-12)


def test_float32_matches_float64_on_a_floating_robot():
    if ROBOTS is None:
        pytest.skip("example-robot-data is not installed")
    path = str(ROBOTS / "solo_description/robots/solo12.urdf")
    m64 = mb.Model.from_urdf(path, floating_base=True, dtype="float64")
    m32 = m64.astype("float32")
    q, _, _ = random_states(m64, 4, np.random.default_rng(1))
    frames = ("FL_FOOT", "HR_LOWER_LEG", "base_link")
    J64, c64, Jc64 = _all_jacobians(m64, q, frames)
    J32, c32, Jc32 = _all_jacobians(m32, q.astype(jnp.float32), frames)
    assert J32.dtype == c32.dtype == Jc32.dtype == jnp.float32
    for a, b in ((J32, J64), (c32, c64), (Jc32, Jc64)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=0, atol=2e-5)


# ------------------------------------------------------------------ closed forms
def test_planar_chain_closed_form():
    """Two revolute-z rods of 1 m along x at q = (θ1, θ2); link frames on the joints."""
    m = mb.chain_model(2, length=1.0, mass=1.0, dtype="float64")
    t1, t2 = 0.4, -1.1
    q = jnp.array([t1, t2])
    o1 = np.array([np.cos(t1), np.sin(t1), 0.0])  # joint 2 (link1's origin)
    ez = np.array([0.0, 0.0, 1.0])
    # world: column j = [z; o_j × z] (velocity of the body point at the world origin)
    Jw = np.asarray(mb.frame_jacobian(m, q, "link1"))
    np.testing.assert_allclose(Jw[:, 0], np.r_[ez, 0, 0, 0], atol=1e-15)
    np.testing.assert_allclose(Jw[:, 1], np.r_[ez, np.cross(o1, ez)], atol=1e-15)
    # local world aligned at link1's origin: joint 0 moves it by z × o1, joint 1 not at all
    Jl = np.asarray(mb.frame_jacobian(m, q, "link1", "local_world_aligned"))
    np.testing.assert_allclose(Jl[:, 0], np.r_[ez, np.cross(ez, o1)], atol=1e-15)
    np.testing.assert_allclose(Jl[:, 1], np.r_[ez, 0, 0, 0], atol=1e-15)
    # local: link1's axes are rotated by θ1 + θ2 about z; the origin velocity z × o1 is
    # (−sin θ1, cos θ1, 0) in the world, in link1's axes (sin θ2, cos θ2, 0)
    Jb = np.asarray(mb.frame_jacobian(m, q, 1, "local"))
    np.testing.assert_allclose(Jb[:, 0], np.r_[ez, np.sin(t2), np.cos(t2), 0], atol=1e-15)
    # link0 does not move with joint 1
    np.testing.assert_array_equal(np.asarray(mb.frame_jacobian(m, q, "link0"))[:, 1], 0.0)
    # CoM: rod centres at (cos θ1, sin θ1)/2 and o1 + (cos(θ1+θ2), sin(θ1+θ2))/2
    c2 = o1 + 0.5 * np.array([np.cos(t1 + t2), np.sin(t1 + t2), 0.0])
    c = 0.5 * (0.5 * o1 + c2)
    np.testing.assert_allclose(np.asarray(mb.center_of_mass(m, q)), c, atol=1e-15)
    Jc = np.asarray(mb.center_of_mass_jacobian(m, q))
    np.testing.assert_allclose(Jc[:, 0], np.cross(ez, c), atol=1e-15)
    np.testing.assert_allclose(Jc[:, 1], 0.5 * np.cross(ez, c2 - o1), atol=1e-15)


# ------------------------------------------------------------- toy fixtures
def _frame_origin(model, q, frame):
    body, X = model.frame(frame)
    poses = mb.forward_kinematics(model, q).poses
    return poses.E[..., body, :, :] @ X.r + poses.r[..., body, :]


@pytest.mark.parametrize("fmt", ["urdf", "mjcf", "sdf"])
def test_fixed_base_jacobians_are_derivatives_of_the_frame_poses(fmt):
    """LOCAL_WORLD_ALIGNED linear rows = d(frame origin)/dq; angular rows from dR/dq Rᵀ."""
    load = {"urdf": mb.Model.from_urdf, "mjcf": mb.Model.from_mjcf, "sdf": mb.Model.from_sdf}
    ext = {"urdf": "urdf", "mjcf": "xml", "sdf": "sdf"}[fmt]
    m = load[fmt](FIX / f"branch.{ext}", dtype="float64")
    q = jnp.asarray(np.random.default_rng(2).uniform(-1, 1, m.nq))
    for frame in ("l1", "l2", "tool", "l3", "l4"):
        J = np.asarray(mb.frame_jacobian(m, q, frame, "local_world_aligned"))
        dp = np.asarray(jax.jacfwd(lambda q, f=frame: _frame_origin(m, q, f))(q))
        np.testing.assert_allclose(J[3:], dp, rtol=0, atol=1e-13, err_msg=frame)
        body, X = m.frame(frame)
        R = lambda q, b=body, E=X.E: mb.forward_kinematics(m, q).poses.E[b] @ E  # noqa: E731
        dR = np.asarray(jax.jacfwd(R)(q))  # (3, 3, nq)
        W = np.einsum("ikn,jk->ijn", dR, np.asarray(R(q)))  # skew(ω_n) for unit q̇_n
        np.testing.assert_allclose(J[:3], np.stack([W[2, 1], W[0, 2], W[1, 0]]), atol=1e-13)


def test_three_formats_give_the_same_jacobians():
    ms = [
        mb.Model.from_urdf(FIX / "branch.urdf", dtype="float64"),
        mb.Model.from_mjcf(FIX / "branch.xml", dtype="float64"),
        mb.Model.from_sdf(FIX / "branch.sdf", dtype="float64"),
    ]
    q = jnp.asarray(np.random.default_rng(4).uniform(-1, 1, (2, ms[0].nq)))
    for ref in REFS:
        Js = [np.asarray(mb.frame_jacobian(m, q, "l4", ref)) for m in ms]
        for J in Js[1:]:
            np.testing.assert_allclose(J, Js[0], rtol=0, atol=1e-13)
    cs = [np.asarray(mb.center_of_mass_jacobian(m, q)) for m in ms]
    for c in cs[1:]:
        np.testing.assert_allclose(c, cs[0], rtol=0, atol=1e-13)


def test_world_frame_has_a_zero_jacobian():
    m = mb.Model.from_urdf(FIX / "branch.urdf", dtype="float64")
    assert m.frame("base")[0] == -1
    for ref in REFS:
        J = mb.frame_jacobian(m, jnp.zeros((2, m.nq)), "base", ref)
        assert J.shape == (2, 6, m.nv)
        np.testing.assert_array_equal(np.asarray(J), 0.0)


# ------------------------------------------------------------------ MuJoCo sites
_SITES_XML = """
<mujoco model="sites">
  <compiler angle="radian"/>
  <worldbody>
    <site name="world_site" pos="0.1 0.2 0.3" euler="0.1 0.2 0.3"/>
    <body name="a" pos="0 0 0.5" euler="0.2 0 0.4">
      <joint name="ja" axis="0 1 0" pos="0.05 0 0.1"/>
      <inertial pos="0.1 0 0" mass="1" diaginertia="0.01 0.02 0.03"/>
      <site name="sa" pos="0.3 0.1 0" quat="0.9 0.1 0.3 -0.2"/>
      <site pos="0.1 0.1 0.1"/>
      <body name="welded" pos="0.4 0 0" euler="0 0.3 0">
        <inertial pos="0 0 0.1" mass="0.5" diaginertia="0.01 0.01 0.01"/>
        <site name="sw" type="capsule" size="0.01" fromto="0 0 0 0.1 0.2 0.3"/>
        <body name="b" pos="0.2 0 0" axisangle="1 1 0 0.5">
          <joint name="jb" type="slide" axis="1 0 1"/>
          <inertial pos="0 0.1 0" mass="0.7" diaginertia="0.01 0.02 0.02"/>
          <site name="sb" pos="0 0 0.2" xyaxes="0 1 0 -1 0 0.2"/>
          <body name="c" pos="0 0.3 0">
            <joint name="jc" axis="1 0 0" pos="0 0 -0.1"/>
            <inertial pos="0 0 -0.2" mass="0.4" diaginertia="0.01 0.01 0.005"/>
            <site name="sc" pos="0 0 -0.3" zaxis="1 1 0"/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def test_mjcf_sites_and_body_frames_match_mujoco(tmp_path):
    mujoco = pytest.importorskip("mujoco")
    path = tmp_path / "sites.xml"
    path.write_text(_SITES_XML)
    mj = mujoco.MjModel.from_xml_path(str(path))
    d = mujoco.MjData(mj)
    models = [mb.Model.from_mjcf(path, dtype="float64"), mb.from_mujoco(mj, dtype="float64")]
    names = ("world_site", "sa", "sw", "sb", "sc")
    for m in models:
        assert set(names) <= set(m.frame_names) and m.nbodies == 3
        assert m.frame("sw")[0] == 0 and m.frame("world_site")[0] == -1
    rng = np.random.default_rng(5)
    jacp, jacr = np.zeros((3, mj.nv)), np.zeros((3, mj.nv))
    for _ in range(3):
        d.qpos[:] = rng.uniform(-1, 1, mj.nq)
        mujoco.mj_kinematics(mj, d)
        mujoco.mj_comPos(mj, d)
        for m in models:
            q = jnp.asarray(d.qpos.copy())
            fp = mb.frame_poses(m, mb.forward_kinematics(m, q).poses)
            for kind, items in (("site", names), ("body", ("a", "welded", "b", "c"))):
                for n in items:
                    obj = mj.site(n) if kind == "site" else mj.body(n)
                    i = obj.id
                    xpos = d.site_xpos[i] if kind == "site" else d.xpos[i]
                    xmat = (d.site_xmat[i] if kind == "site" else d.xmat[i]).reshape(3, 3)
                    f = m.frame_index(n)
                    np.testing.assert_allclose(np.asarray(fp.r[f]), xpos, atol=1e-12)
                    np.testing.assert_allclose(np.asarray(fp.E[f]), xmat, atol=1e-12)
                    if kind == "site":
                        mujoco.mj_jacSite(mj, d, jacp, jacr, i)
                    else:
                        mujoco.mj_jacBody(mj, d, jacp, jacr, i)
                    J = np.asarray(mb.frame_jacobian(m, q, n, "local_world_aligned"))
                    np.testing.assert_allclose(J, np.r_[jacr, jacp], atol=1e-12, err_msg=n)


# ------------------------------------------------------------------ batching, transforms
@pytest.mark.parametrize("shape", BATCH_SHAPES)
def test_batch_shapes_and_vmap(shape):
    m = mb.Model.from_urdf(FIX / "branch.urdf", floating_base=True, dtype="float64")
    n = int(np.prod(shape))
    q, _, _ = random_states(m, n, np.random.default_rng(6))
    q = q.reshape(shape + (m.nq,))
    J = mb.frame_jacobian(m, q, "tool", "local")
    c = mb.center_of_mass(m, q)
    Jc = mb.center_of_mass_jacobian(m, q)
    assert J.shape == shape + (6, m.nv) and c.shape == shape + (3,)
    assert Jc.shape == shape + (3, m.nv)
    flat = q.reshape(-1, m.nq)
    Jv, Jcv = jax.vmap(
        lambda x: (mb.frame_jacobian(m, x, "tool", "local"), mb.center_of_mass_jacobian(m, x))
    )(flat)
    np.testing.assert_allclose(np.asarray(J).reshape(Jv.shape), np.asarray(Jv), atol=1e-14)
    np.testing.assert_allclose(np.asarray(Jc).reshape(Jcv.shape), np.asarray(Jcv), atol=1e-14)


def test_com_jacobian_is_the_derivative_of_the_com_and_gradients_are_finite():
    m = mb.Model.from_urdf(FIX / "branch.urdf", dtype="float64")
    q = jnp.asarray(np.random.default_rng(8).uniform(-1, 1, m.nq))
    np.testing.assert_allclose(
        np.asarray(jax.jacfwd(lambda x: mb.center_of_mass(m, x))(q)),
        np.asarray(mb.center_of_mass_jacobian(m, q)),
        atol=1e-13,
    )
    # gradients through q and the inertias (at q = 0 too) against central differences
    from jax.test_util import check_grads

    f = lambda x: jnp.sum(mb.frame_jacobian(m, x, "l4", "local") ** 2)  # noqa: E731
    check_grads(f, (q,), order=1, modes=("rev",))
    check_grads(f, (jnp.zeros_like(q),), order=1, modes=("rev",))

    def g(params):
        mm = dataclasses.replace(m, inertia=type(m.inertia)(params))
        return jnp.sum(mb.center_of_mass_jacobian(mm, q) ** 2)

    check_grads(g, (m.inertia.params,), order=1, modes=("rev",))


# ------------------------------------------------------------------ frames, bad input
def test_model_frames_of_merged_links():
    m = mb.Model.from_urdf(FIX / "branch.urdf", dtype="float64")
    body, X = m.frame("tool")  # welded into l2 by a fixed joint
    assert body == m.body_index("l2") and X.E.shape == (3, 3) and X.r.shape == (3,)
    assert m.frame_names[m.frame_index("tool")] == "tool"


def test_bad_inputs():
    m = mb.Model.from_urdf(FIX / "branch.urdf", dtype="float64")
    q = jnp.zeros(m.nq)
    with raises_argument(
        ArgumentError, "frame", match=r"no frame or body named 'tol'.*closest: 'tool'"
    ):
        mb.frame_jacobian(m, q, "tol")
    with raises_argument(ArgumentError, "frame"):
        m.frame("l9")
    with raises_argument(ArgumentError, "reference"):
        mb.frame_jacobian(m, q, "l1", reference="body")
    with raises_argument(ArgumentError, "frame"):
        mb.frame_jacobian(m, q, 7)
    with raises_argument(ArgumentTypeError, "frame"):
        mb.frame_jacobian(m, q, 1.0)
    with raises_argument(ArgumentError, "q"):
        mb.frame_jacobian(m, jnp.zeros(3), "l1")
    with raises_argument(ArgumentError, "q"):
        mb.center_of_mass(m, jnp.zeros(5))
    with raises_argument(ArgumentTypeError, "q"):
        mb.center_of_mass_jacobian(m, jnp.zeros(m.nq, jnp.float32))
    zero = mb.chain_model(2, mass=0.0, dtype="float64")
    with raises_argument(ArgumentError, "model", match=r"total mass 0.0"):
        mb.center_of_mass(zero, jnp.zeros(2))
    with raises_argument(ArgumentError, "model"):
        mb.center_of_mass_jacobian(zero, jnp.zeros(2))
    # under a trace: a documented NaN instead of the error
    assert np.isnan(np.asarray(jax.jit(mb.center_of_mass)(zero, jnp.zeros(2)))).all()


def test_ambiguous_frame_name(tmp_path):
    path = tmp_path / "dup.xml"
    path.write_text(
        '<mujoco><worldbody><body name="a"><joint/><inertial pos="0 0 0" mass="1" '
        'diaginertia="1 1 1"/><site name="a" pos="1 0 0"/></body></worldbody></mujoco>'
    )
    m = mb.Model.from_mjcf(path)
    with raises_argument(ArgumentError, "frame"):
        mb.frame_jacobian(m, jnp.zeros(1), "a")


def test_inside_jit_with_a_closed_over_model():
    """The eager mass check reads the model's values with NumPy, not with traced slicing."""
    m = mb.chain_model(2, dtype="float64")
    c = jax.jit(lambda q: mb.center_of_mass(m, q) + mb.center_of_mass_jacobian(m, q)[:, 0])
    np.testing.assert_allclose(np.asarray(c(jnp.zeros(2))), [1.0, 1.0, 0.0], atol=1e-15)


def test_sdf_frame_elements_are_frames():
    """branch.sdf's ``elbow`` frame (attached to l1) sits where l2's link frame is at q = 0."""
    m = mb.Model.from_sdf(FIX / "branch.sdf", dtype="float64")
    assert m.frame("elbow")[0] == m.body_index("l1")
    q = jnp.asarray(np.random.default_rng(3).uniform(-1, 1, (2, m.nq)))
    fp = mb.frame_poses(m, mb.forward_kinematics(m, q.at[:, 1].set(0.0)).poses)
    e, l2 = m.frame_index("elbow"), m.frame_index("l2")
    np.testing.assert_allclose(np.asarray(fp.E[:, e]), np.asarray(fp.E[:, l2]), atol=1e-14)
    np.testing.assert_allclose(np.asarray(fp.r[:, e]), np.asarray(fp.r[:, l2]), atol=1e-14)
    # j2 moves l2, not the elbow frame: the elbow's Jacobian has no j2 column
    J = np.asarray(mb.frame_jacobian(m, q, "elbow", "local"))
    np.testing.assert_array_equal(J[..., 1], 0.0)
    assert np.abs(np.asarray(mb.frame_jacobian(m, q, "l2", "local"))[..., 1]).max() > 0.1
