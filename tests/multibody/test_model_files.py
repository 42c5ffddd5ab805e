"""Model.from_mjcf and Model.from_sdf: the same robot in three formats, and against Pinocchio.

tests/fixtures/branch.{urdf,xml,sdf} describe one branching robot (revolute, continuous,
prismatic joints with rotated origins, a welded tool body carrying a further joint, off-axis
inertias; the SDF places links through ``relative_to`` chains, a ``<frame>`` and an axis
``expressed_in`` another link). ``Model.from_urdf`` is checked against Pinocchio in
test_multibody.py, so agreement of the three loaders to 1e-12 checks the MJCF and SDF frame
conventions. The MJCF loader is also checked against Pinocchio's own MJCF parser
(``pin.buildModelFromMJCF``). One jitted function per model.
"""

from __future__ import annotations

import dataclasses
import re

import jax
import numpy as np
import pytest
from helpers import FIXTURES, raises_argument, raises_error

import spatialjax.multibody as mb
from spatialjax import ArgumentError, Plxb
from spatialjax.io import ModelFileError

FIX = FIXTURES
TOL = 1e-12


@jax.jit
def _jitted(model, q, v, a):
    fk = mb.forward_kinematics(model, q)
    return mb.rnea(model, q, v, a), mb.mass_matrix(model, q), fk.poses


def _everything(model, q, v, a):
    """rnea, mass matrix, body poses (one compile per tree shape) and link-frame poses.

    Names are static fields, so the jitted call gets a copy without them (and with
    ``continuous`` read as ``revolute``, the same dynamics in this ``q``) to share one
    compile between the loaders; frames are composed here in NumPy.
    """
    canon = dataclasses.replace(
        model,
        name="",
        joint_types=tuple("revolute" if t == "continuous" else t for t in model.joint_types),
        joint_names=(),
        body_names=(),
        frame_names=(),
        frame_bodies=(),
        frame_placements=Plxb(model.frame_placements.E[:0], model.frame_placements.r[:0]),
    )
    tau, M, poses = _jitted(canon, q, v, a)
    E, r = np.asarray(poses.E), np.asarray(poses.r)
    FE, Fr = np.asarray(model.frame_placements.E), np.asarray(model.frame_placements.r)
    frames = {}
    for i, (name, b) in enumerate(zip(model.frame_names, model.frame_bodies, strict=True)):
        if b < 0:
            frames[name] = (np.broadcast_to(FE[i], E[..., 0, :, :].shape), Fr[i])
        else:
            Eb, rb = E[..., b, :, :], r[..., b, :]
            frames[name] = (Eb @ FE[i], rb + np.einsum("...ij,j->...i", Eb, Fr[i]))
    return tau, M, poses, frames


def _states(model, n=4, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(n, model.nq))
    if model.floating_base:
        q[:, 3:7] /= np.linalg.norm(q[:, 3:7], axis=-1, keepdims=True)
    v, a = rng.normal(size=(2, n, model.nv))
    return q, v, a


def _assert_same_dynamics(ref, other, floating=False):
    assert other.parents == ref.parents and other.joint_names == ref.joint_names
    assert other.body_names == ref.body_names
    q, v, a = _states(ref)
    r_ref = _everything(ref, q, v, a)
    r_oth = _everything(other, q, v, a)
    for x, y in zip(r_ref[:2], r_oth[:2], strict=True):
        np.testing.assert_allclose(np.asarray(y), np.asarray(x), rtol=0, atol=TOL)
    for field in ("E", "r"):  # body poses
        x, y = getattr(r_ref[2], field), getattr(r_oth[2], field)
        np.testing.assert_allclose(np.asarray(y), np.asarray(x), rtol=0, atol=TOL)
    f_ref, f_oth = r_ref[3], r_oth[3]
    # branch.sdf's <frame name="elbow"> has no URDF counterpart (test_jacobians checks it)
    assert set(f_oth) - set(f_ref) <= {"elbow"}
    common = [n for n in f_oth if n in f_ref]
    assert len(common) >= len(f_ref) - 1
    for n in common:  # every link frame, welded ones included
        for x, y in zip(f_ref[n], f_oth[n], strict=True):
            np.testing.assert_allclose(y, x, rtol=0, atol=TOL, err_msg=n)


@pytest.mark.parametrize("fmt", ["mjcf", "sdf"])
def test_three_formats_agree(fmt):
    ref = mb.Model.from_urdf(FIX / "branch.urdf", dtype="float64")
    if fmt == "mjcf":
        other = mb.Model.from_mjcf(FIX / "branch.xml", dtype="float64")
        assert other.joint_types == ref.joint_types
    else:
        other = mb.Model.from_sdf(FIX / "branch.sdf", dtype="float64")
        # j2 is "continuous" in the SDF (same dynamics, unbounded angle)
        assert other.joint_types == ("revolute", "continuous", "revolute", "prismatic")
    assert ref.joint_names == ("j1", "j2", "j4", "j3")
    assert ref.frame_bodies[ref.frame_names.index("tool")] == 1  # welded into l2
    _assert_same_dynamics(ref, other)


def test_locked_joints_and_floating_base_agree_with_urdf():
    locked = {"j2": 0.7, "j3": -0.05}
    ref = mb.Model.from_urdf(FIX / "branch.urdf", locked_joints=locked, dtype="float64")
    mj = mb.Model.from_mjcf(FIX / "branch.xml", locked_joints=locked, dtype="float64")
    sdf = mb.Model.from_sdf(FIX / "branch.sdf", locked_joints=locked, dtype="float64")
    assert ref.joint_names == ("j1", "j4")
    for other in (mj, sdf):
        _assert_same_dynamics(ref, other)
    ref_f = mb.Model.from_urdf(FIX / "branch.urdf", floating_base=True, dtype="float64")
    sdf_f = mb.Model.from_sdf(FIX / "branch.sdf", floating_base=True, dtype="float64")
    _assert_same_dynamics(ref_f, sdf_f)


def test_sdf_attached_to_world_uses_the_model_frame(tmp_path):
    """j1's parent is ``world``: the model frame is the world (no base link)."""
    text = (FIX / "branch.sdf").read_text()
    start, end = text.index('<link name="base">'), text.index("</link>") + len("</link>")
    text = text[:start] + text[end:]
    text = text.replace("<parent>base</parent>", "<parent>world</parent>")
    text = text.replace('relative_to="base"', 'relative_to="__model__"')
    p = tmp_path / "world.sdf"
    p.write_text(text)
    ref = mb.Model.from_urdf(FIX / "branch.urdf", dtype="float64")
    _assert_same_dynamics(ref, mb.Model.from_sdf(p, dtype="float64"))
    with raises_argument(ArgumentError, "floating_base"):
        mb.Model.from_sdf(p, floating_base=True)


# ------------------------------------------------------------------- Pinocchio's MJCF parser
pin = pytest.importorskip("pinocchio")


def _euler_fixed_to_moving(text):
    """Rewrite eulerseq="XYZ" (fixed axes) as the same rotations with "zyx" (moving axes).

    Pinocchio 3/4's MJCF parser ignores the case of ``eulerseq`` (it composes every sequence
    about moving axes), while MuJoCo's documentation gives upper case the fixed-axes meaning;
    ``Rz(c) Ry(b) Rx(a)`` is "XYZ" with angles (a, b, c) and "zyx" with (c, b, a) for both.
    """
    text = text.replace('eulerseq="XYZ"', 'eulerseq="zyx"')
    return re.sub(r'euler="(\S+) (\S+) (\S+)"', lambda m: f'euler="{m[3]} {m[2]} {m[1]}"', text)


_OFFSET_MJCF = """<mujoco model="offset">
  <compiler angle="radian"/>
  <worldbody>
    <body name="a" pos="0.1 0.2 0.3" quat="0.9 0.1 -0.2 0.3">
      <joint name="ja" type="hinge" pos="0.05 -0.1 0.2" axis="1 2 3"/>
      <inertial pos="0.1 0 0.05" quat="0.7 0.2 0.1 -0.3" mass="1.2" diaginertia="0.01 0.02 0.025"/>
      <body name="b" pos="0 0.3 0" euler="0.2 0.1 -0.4">
        <joint name="jb" type="slide" pos="0.3 0 0.1" axis="0 1 0"/>
        <inertial pos="0 0.1 0" mass="0.7" fullinertia="0.004 0.005 0.006 0.0005 -0.0003 0.0002"/>
        <body name="c" pos="0.1 0 0.2">
          <joint name="jc" pos="0 0 -0.1" axis="0 1 0"/>
          <inertial pos="0 0 0.1" mass="0.5" diaginertia="0.002 0.002 0.001"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def _walker_for_pinocchio(text):
    """tests/fixtures/walker.xml (free joint, welded bodies, every orientation form) with
    the two features Pinocchio reads differently: the head's geom-only inertia (MuJoCo and
    Pinocchio infer it from the sphere, Model.from_mjcf leaves it massless) and the
    un-normalised ``axisangle`` axis (MuJoCo normalises it, Pinocchio does not)."""
    text = text.replace('<geom type="sphere" size="0.1"/>', "")
    return text.replace(
        'axisangle="1 1 0 30"', 'axisangle="0.7071067811865476 0.7071067811865476 0 30"'
    )


@pytest.mark.parametrize("case", ["branch", "offset_joints", "walker"])
def test_mjcf_matches_pinocchio(case, tmp_path):
    if case == "branch":
        text = _euler_fixed_to_moving((FIX / "branch.xml").read_text())
    elif case == "walker":
        text = _walker_for_pinocchio((FIX / "walker.xml").read_text())
    else:
        text = _OFFSET_MJCF
    path = tmp_path / f"{case}.xml"
    path.write_text(text)
    model = mb.Model.from_mjcf(path, dtype="float64")
    if case == "branch":  # the lower-case spelling reads as the same model
        _assert_same_dynamics(mb.Model.from_mjcf(FIX / "branch.xml", dtype="float64"), model)
    pm = pin.buildModelFromMJCF(str(path))
    pd = pm.createData()
    assert pm.njoints == model.nbodies + 1
    assert [pm.names[i + 1] for i in range(model.nbodies)] == [
        n if t != "free_flyer" else pm.names[1]
        for n, t in zip(model.joint_names, model.joint_types, strict=True)
    ]
    assert list(pm.parents)[1:] == [p + 1 for p in model.parents]
    # NumPy copies first: indexing device arrays entry by entry compiles a slice per shape
    XE, Xr = np.asarray(model.placements.E), np.asarray(model.placements.r)
    params = np.asarray(model.inertia.params)
    for i in range(model.nbodies):
        X = pm.jointPlacements[i + 1]
        np.testing.assert_allclose(XE[i], X.rotation, atol=TOL)
        np.testing.assert_allclose(Xr[i], X.translation, atol=TOL)
        np.testing.assert_allclose(params[i], pm.inertias[i + 1].toDynamicParameters(), atol=TOL)
    q, v, a = _states(model, seed=1)
    tau, M, poses, _ = _everything(model, q, v, a)
    tau, M, PE, Pr = (np.asarray(x) for x in (tau, M, poses.E, poses.r))
    p = model.v_permutation()
    pm.gravity.linear[:] = [0.0, 0.0, -9.81]
    qp_all = np.asarray(model.q_to_pinocchio(q))  # the batch at once
    for k in range(q.shape[0]):
        qp = qp_all[k]
        vp, ap = v[k][p], a[k][p]
        np.testing.assert_allclose(tau[k][p], pin.rnea(pm, pd, qp, vp, ap), atol=1e-10)
        Mp = pin.crba(pm, pd, qp)
        Mp = np.triu(Mp) + np.triu(Mp, 1).T
        np.testing.assert_allclose(M[k][p][:, p], Mp, atol=1e-10)
        pin.forwardKinematics(pm, pd, qp)
        for i in range(model.nbodies):
            np.testing.assert_allclose(PE[k, i], pd.oMi[i + 1].rotation, atol=TOL)
            np.testing.assert_allclose(Pr[k, i], pd.oMi[i + 1].translation, atol=TOL)


# ---------------------------------------------------------------------------------- bad input
_MJ_HEAD = '<mujoco model="m">\n<worldbody>\n<body name="a">\n'


def _mj(tmp_path, body, name="m.xml"):
    p = tmp_path / name
    p.write_text(_MJ_HEAD + body + "\n</body>\n</worldbody>\n</mujoco>\n")
    return p


def test_mjcf_bad_input(tmp_path):
    p = _mj(tmp_path, '<joint name="shoulder" type="ball"/>')
    with raises_error(ModelFileError, line=4, link="a", field="joint[shoulder]/type"):
        mb.Model.from_mjcf(p)
    p = _mj(tmp_path, '<joint name="j" type="twist"/>')
    with raises_error(ModelFileError, line=4, link="a", field="joint[j]/type"):
        mb.Model.from_mjcf(p)
    p = _mj(tmp_path, '<joint name="j1"/>\n<joint name="j2" type="slide"/>')
    with raises_error(
        ModelFileError,
        match=r"m\.xml:5: .*body 'a' has 2 joints \('j1' \(line 4\), 'j2'",
        line=5,
        link="a",
        field="joint[j2]",
    ):
        mb.Model.from_mjcf(p)
    p = _mj(tmp_path, '<joint name="j1"/>\n<body name="b"><freejoint name="f"/></body>')
    with raises_error(ModelFileError, line=5, link="b", field="joint[f]/type"):
        mb.Model.from_mjcf(p)
    p = _mj(tmp_path, '<joint name="j1" axis="0 0 0"/>')
    with raises_error(ModelFileError, line=4, link="a", field="joint[j1]/axis"):
        mb.Model.from_mjcf(p)
    p = _mj(tmp_path, '<joint name="j1" class="nope"/>')
    with raises_error(ModelFileError, line=4, link="a", field="joint[j1]/class"):
        mb.Model.from_mjcf(p)
    p = _mj(tmp_path, '<joint name="j1"/>')
    with raises_argument(ArgumentError, "locked_joints"):
        mb.Model.from_mjcf(p, locked_joints={"nope": 0.0})
    with pytest.raises(ModelFileError, match=r"no movable joint"):
        mb.Model.from_mjcf(p, locked_joints={"j1": 0.3})
    p = _mj(tmp_path, '<joint name="j1"/>\n<include file="arm.xml"/>')
    with raises_error(ModelFileError, line=5, field="include"):
        mb.Model.from_mjcf(p)
    bad = tmp_path / "u.urdf"
    bad.write_text('<robot name="r"><link name="a"/></robot>')
    with pytest.raises(ModelFileError, match=r"expected an MJCF file \(root element <mujoco>\)"):
        mb.Model.from_mjcf(bad)
    # two bodies of one name (MuJoCo rejects the file; the tree would be ambiguous)
    p = _mj(tmp_path, '<joint name="j1"/>\n<body name="a"><joint name="j2"/></body>')
    with raises_error(ModelFileError, line=5, link="a"):
        mb.Model.from_mjcf(p)


_SDF_LINKS = '<sdf version="1.9"><model name="m">\n<link name="a"/>\n<link name="b"/>\n'


def _sdf(tmp_path, body):
    p = tmp_path / "m.sdf"
    p.write_text(_SDF_LINKS + body + "\n</model></sdf>\n")
    return p


def _sj(name, jtype, parent="a", child="b", extra=""):
    return (f'<joint name="{name}" type="{jtype}">{extra}<parent>{parent}</parent>'
            f"<child>{child}</child></joint>")  # fmt: skip


def test_sdf_bad_input(tmp_path):
    p = _sdf(tmp_path, "")
    with raises_error(
        ModelFileError, match=r"m\.sdf:1: 2 roots \('a' \(line 2\), 'b' \(line 3\)\)", line=1
    ):
        mb.Model.from_sdf(p)
    p = _sdf(tmp_path, _sj("j", "ball"))
    with raises_error(ModelFileError, line=4, field="joint[j]/type"):
        mb.Model.from_sdf(p)
    p = _sdf(tmp_path, _sj("j", "hinge"))
    with raises_error(ModelFileError, line=4, field="joint[j]/type"):
        mb.Model.from_sdf(p)
    p = _sdf(tmp_path, _sj("j", "revolute", extra='<pose relative_to="nowhere"/>'))
    with raises_error(ModelFileError, line=4, field="joint[j]/pose/relative_to"):
        mb.Model.from_sdf(p)
    p = _sdf(tmp_path, _sj("j", "revolute", extra='<pose relative_to="f"/>')
             + '<frame name="f"><pose relative_to="j"/></frame>')  # fmt: skip
    with raises_error(ModelFileError, field="frame[f]/pose/relative_to"):
        mb.Model.from_sdf(p)
    p = _sdf(tmp_path, _sj("j", "revolute", child="c"))
    with raises_error(ModelFileError, field="joint[j]/child"):
        mb.Model.from_sdf(p)
    p = _sdf(tmp_path, _sj("j", "revolute"))
    with raises_argument(ArgumentError, "locked_joints"):
        mb.Model.from_sdf(p, locked_joints={"x": 0.0})
    with raises_argument(ArgumentError, "model_name"):
        mb.Model.from_sdf(p, model_name="x")
    m = mb.Model.from_sdf(p, model_name="m")
    assert m.joint_names == ("j",) and m.frame_bodies == (-1, 0)


@pytest.mark.parametrize(
    "load, path",
    [
        (lambda p: mb.Model.from_urdf(p, locked_joints={"j2": 0.2}), FIX / "branch.urdf"),
        (lambda p: mb.Model.from_sdf(p, floating_base=True), FIX / "branch.sdf"),
        (mb.Model.from_mjcf, FIX / "branch.xml"),
        (mb.Model.from_mjcf, FIX / "walker.xml"),
    ],
)
def test_each_loader_parses_its_file_once(load, path, monkeypatch):
    """Inertials and tree come from one parse (one expat parser per Model.from_* call)."""
    import xml.parsers.expat

    made = []
    create = xml.parsers.expat.ParserCreate

    def counting(*args, **kwargs):
        made.append(1)
        return create(*args, **kwargs)

    monkeypatch.setattr(xml.parsers.expat, "ParserCreate", counting)
    model = load(path)
    assert len(made) == 1
    assert model.nbodies > 0


def test_urdf_root_link_named_world_takes_a_floating_base(tmp_path):
    """A URDF link called "world" is a link (UR, xArm descriptions), not SDF's world frame."""
    p = tmp_path / "w.urdf"
    p.write_text(
        '<robot name="r"><link name="world"/>\n<link name="a"><inertial><mass value="2"/>'
        '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>\n'
        '<joint name="j" type="revolute"><parent link="world"/><child link="a"/>'
        '<origin xyz="0 0 1"/></joint></robot>'
    )
    model = mb.Model.from_urdf(p, floating_base=True, dtype="float64")
    assert model.joint_types == ("free_flyer", "revolute")
    assert model.body_names == ("world", "a")
    assert float(model.inertia.params[1, 0]) == 2.0
