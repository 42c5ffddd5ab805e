"""Model-file readers (URDF, SDFormat, MJCF): conventions, errors, Pinocchio cross-checks.

Reference values come from Pinocchio (its own URDF parser, ``pin.rpy``,
``pin.Quaternion``, ``pin.AngleAxis``) or from explicit products of axis
rotations written out in the test, never from the readers under test.
"""

from __future__ import annotations

import glob
import shutil
import time

import jax.numpy as jnp
import numpy as np
import pytest
from helpers import FIXTURES, raises_argument, raises_error, robots_dir

from spatialjax import ArgumentError, ArgumentTypeError
from spatialjax.io import (
    ModelFileError,
    detect_format,
    load_inertials,
    load_sdf_added_mass,
    read_model,
)
from spatialjax.io._xml import parse_xml

pin = pytest.importorskip("pinocchio")
from pinocchio.utils import rotate  # noqa: E402  (Pinocchio's own axis rotations)

FIX = FIXTURES
DEG = np.pi / 180


def _by_name(model):
    return {link.name: link for link in model.links}


def _params_in_parent(link, placement):
    """10-vector of a link's inertial expressed in a parent frame, by the sandwich rule.

    ``placement`` is Pinocchio's ``SE3`` of the link frame in the parent frame
    (rotation R, translation p); S' = R S Rᵀ + R h pᵀ + p (R h)ᵀ + m p pᵀ,
    h' = R h + m p, I' = tr(S') 1 − S' (the pseudo-inertia congruence J' = T J Tᵀ of
    Wensing, Kim & Slotine, RA-L 2017), in NumPy.
    """
    m, c, I_c = link.mass, np.asarray(link.com), np.asarray(link.inertia_com)
    h = m * c
    S_c = 0.5 * np.trace(I_c) * np.eye(3) - I_c
    S = S_c + m * np.outer(c, c)
    R, p = placement.rotation, placement.translation
    Rh = R @ h
    S2 = R @ S @ R.T + np.outer(Rh, p) + np.outer(p, Rh) + m * np.outer(p, p)
    I2 = np.trace(S2) * np.eye(3) - S2
    return np.array([m, *(Rh + m * p), I2[0, 0], I2[0, 1], I2[1, 1], I2[0, 2], I2[1, 2], I2[2, 2]])


# ----------------------------------------------------------------------------- format


@pytest.mark.parametrize(
    "fixture, fmt", [("arm.urdf", "urdf"), ("vehicle.sdf", "sdf"), ("walker.xml", "mjcf")]
)
def test_format_chosen_by_content_not_extension(tmp_path, fixture, fmt):
    for ext in (".xml", ".urdf", ".sdf", ".txt"):
        p = tmp_path / f"model{ext}"
        shutil.copy(FIX / fixture, p)
        assert detect_format(p) == fmt
        assert read_model(p).names == read_model(FIX / fixture).names


def test_unknown_root_is_an_error(tmp_path):
    p = tmp_path / "robot.urdf"
    p.write_text("<?xml version='1.0'?>\n<launch><node/></launch>\n")
    msg = r"robot\.urdf:2: unknown model format: root element <launch>"
    with pytest.raises(ModelFileError, match=msg):
        load_inertials(p)


def test_byte_spans_recorded_by_the_parser_match_the_attribute_values():
    data = (FIX / "arm.urdf").read_bytes()
    root = parse_xml(data, "arm.urdf")
    n = 0
    for node in root.iter():
        assert data[node.start : node.start + 1 + len(node.tag)] == b"<" + node.tag.encode()
        assert data[node.end - 1 : node.end] == b">"
        for name, (s, e, n0) in node.attr_spans.items():
            assert data[s:e].decode() == node.attrib[name]
            assert data[n0 : n0 + len(name)].decode() == name
            n += 1
        if not node.self_closing and not node.children:
            s, e = node.text_span()
            assert data[s:e].decode() == node.text
    assert n > 50


# ------------------------------------------------------------------------------- URDF


def test_urdf_rpy_and_inertia_against_pinocchio_rpy():
    links = _by_name(read_model(FIX / "arm.urdf"))
    base = links["base_link"]
    R = pin.rpy.rpyToMatrix(0.3, -0.7, 1.1)
    I_file = np.array([[0.021, -0.002, 0.001], [-0.002, 0.018, 0.0015], [0.001, 0.0015, 0.012]])
    np.testing.assert_allclose(base.rotation, R, atol=1e-15)
    np.testing.assert_allclose(base.com, [0.01, -0.02, 0.1])
    np.testing.assert_allclose(base.inertia_com, R @ I_file @ R.T, atol=1e-15)
    assert base.mass == 2.5 and base.line == 5

    names, inertia = load_inertials(FIX / "arm.urdf")
    assert names == ["base_link", "link1", "sensor_link", "tool_frame", "payload", "rod"]
    assert inertia.batch_shape == (6,) and inertia.dtype == jnp.float64
    expected = pin.Inertia(2.5, np.array([0.01, -0.02, 0.1]), R @ I_file @ R.T)
    np.testing.assert_allclose(inertia.params[0], expected.toDynamicParameters(), atol=1e-15)
    # a link without <inertial> is a massless frame
    assert links["sensor_link"].status == "absent"
    np.testing.assert_array_equal(inertia.params[2], np.zeros(10))


@pytest.mark.parametrize("fixture", ["arm.urdf"])
def test_urdf_matches_pinocchio_urdf_parser(fixture):
    """Sum our per-link inertias into Pinocchio's joints (fixed links are merged there)."""
    path = str(FIX / fixture)
    model = pin.buildModelFromUrdf(path)
    ours = _by_name(read_model(path))
    acc = np.zeros((model.njoints, 10))
    for fr in model.frames:
        if fr.type == pin.FrameType.BODY:
            acc[fr.parentJoint] += _params_in_parent(ours.pop(fr.name), fr.placement)
    assert not ours
    for j in range(1, model.njoints):
        np.testing.assert_allclose(acc[j], model.inertias[j].toDynamicParameters(), atol=1e-14)


def test_load_inertials_dtype_float32_and_strict():
    _, inertia = load_inertials(FIX / "arm.urdf", dtype=jnp.float32)
    assert inertia.dtype == jnp.float32
    names, inertia = load_inertials(FIX / "bad.urdf")
    assert inertia.mass[names.index("negative_mass")] == -1.5
    with raises_error(ModelFileError, link="negative_mass", field="mass"):
        load_inertials(FIX / "bad.urdf", strict=True)
    with raises_argument(ArgumentTypeError, "dtype"):
        load_inertials(FIX / "arm.urdf", dtype=jnp.int32)


# -------------------------------------------------------------------------------- SDF


def test_sdf_poses_against_pinocchio_rotations():
    links = _by_name(read_model(FIX / "vehicle.sdf"))
    hull, fin, prop = links["hull"], links["fin"], links["propeller"]
    R = pin.rpy.rpyToMatrix(0.3, -0.7, 1.1)
    np.testing.assert_allclose(hull.rotation, R, atol=1e-15)
    I_hull = np.array([[0.8, 0.01, 0.0], [0.01, 0.9, 0.0], [0.0, 0.0, 0.5]])
    np.testing.assert_allclose(hull.inertia_com, R @ I_hull @ R.T, atol=1e-15)
    np.testing.assert_allclose(hull.com, [0.1, 0.0, -0.05])
    # degrees="true"
    R_fin = pin.rpy.rpyToMatrix(90 * DEG, 0.0, 45 * DEG)
    np.testing.assert_allclose(fin.rotation, R_fin, atol=1e-15)
    np.testing.assert_allclose(
        fin.inertia_com, R_fin @ np.diag([0.002, 0.003, 0.004]) @ R_fin.T, atol=1e-15
    )
    # rotation_format="quat_xyzw": x y z qx qy qz qw
    q = pin.Quaternion(0.9, 0.1, 0.2, 0.3)  # (w, x, y, z) constructor
    q.normalize()
    np.testing.assert_allclose(prop.rotation, q.toRotationMatrix(), atol=1e-15)
    np.testing.assert_allclose(prop.com, [0.0, 0.0, 0.3])
    # a link without <inertial> gets the SDF default
    assert links["marker"].status == "sdf-default" and links["marker"].mass == 1.0
    np.testing.assert_array_equal(links["marker"].inertia_com, np.eye(3))


def _sdf_added_mass_file_order():
    """The hull's <fluid_added_mass> in SDF's [x y z p q r] order, written out by hand."""
    A = np.zeros((6, 6))
    for (i, j), v in {
        (0, 0): 1.5, (1, 1): 6.0, (2, 2): 6.0, (3, 3): 0.02, (4, 4): 0.3, (5, 5): 0.3,
        (1, 5): 0.4, (2, 4): -0.4,
    }.items():  # fmt: skip
        A[i, j] = A[j, i] = v
    return A


def test_sdf_added_mass_reordered_to_angular_first():
    names, added, present = load_sdf_added_mass(FIX / "vehicle.sdf")
    assert names == ["hull", "fin", "propeller", "marker"]
    np.testing.assert_array_equal(present, [True, False, False, False])
    A = _sdf_added_mass_file_order()
    ours = np.asarray(added[0])
    # [ω; v]: index 0..2 angular (p q r), 3..5 linear (x y z)
    assert ours[0, 0] == 0.02 and ours[3, 3] == 1.5 and ours[4, 4] == 6.0
    assert ours[4, 2] == ours[2, 4] == 0.4  # yr: linear y with angular r (z)
    assert ours[5, 1] == ours[1, 5] == -0.4  # zq: linear z with angular q (y)
    P = np.zeros((6, 6))
    P[:3, 3:] = P[3:, :3] = np.eye(3)
    np.testing.assert_array_equal(ours, P @ A @ P)
    np.testing.assert_array_equal(np.asarray(added[1:]), 0.0)
    # the rigid part is unaffected by the added mass
    _, inertia = load_inertials(FIX / "vehicle.sdf")
    assert float(inertia.mass[0]) == 12.0


def test_sdf_added_mass_about_com_moved_exactly_to_the_link_origin():
    """``about="com"``: M_B = Xᵀ M_C X with X the 6×6 motion transform from B to C."""
    link = _by_name(read_model(FIX / "vehicle.sdf"))["hull"]
    _, added, _ = load_sdf_added_mass(FIX / "vehicle.sdf", about="com")
    R, c = pin.rpy.rpyToMatrix(0.3, -0.7, 1.1), np.array([0.1, 0.0, -0.05])
    np.testing.assert_allclose(link.rotation, R, atol=1e-15)
    # Pinocchio: placement of C in B; its inverse's action maps [v; ω] from B to C.
    X_lin_first = pin.SE3(R, c).inverse().action
    M_B_lin_first = X_lin_first.T @ _sdf_added_mass_file_order() @ X_lin_first
    P = np.zeros((6, 6))
    P[:3, 3:] = P[3:, :3] = np.eye(3)
    np.testing.assert_allclose(np.asarray(added[0]), P @ M_B_lin_first @ P, atol=1e-14)
    with raises_argument(ArgumentError, "about"):
        load_sdf_added_mass(FIX / "vehicle.sdf", about="cog")
    with pytest.raises(ModelFileError, match="expected an SDFormat file"):
        load_sdf_added_mass(FIX / "arm.urdf")


# ------------------------------------------------------------------------------- MJCF


def test_mjcf_orientations_against_independent_rotations():
    links = _by_name(read_model(FIX / "walker.xml"))
    q = pin.Quaternion(0.9, 0.1, -0.3, 0.2)
    q.normalize()
    expected = {
        "torso": (q.toRotationMatrix(), [0.05, 0.06, 0.07]),
        # default compiler: degrees, eulerseq "xyz" (intrinsic: R = Rx Ry Rz)
        "upper": (
            rotate("x", 30 * DEG) @ rotate("y", -45 * DEG) @ rotate("z", 60 * DEG),
            [0.01, 0.012, 0.008],
        ),
        "lower": (
            pin.AngleAxis(30 * DEG, np.array([1.0, 1.0, 0.0]) / np.sqrt(2)).toRotationMatrix(),
            [0.005, 0.006, 0.007],
        ),
        # xyaxes "0 1 0 -1 0 0": x -> y, y -> -x, so a quarter turn about z
        "<body 4>": (rotate("z", 90 * DEG), [0.001, 0.002, 0.0025]),
        # zaxis "0 1 1": the minimal rotation taking z to (0, 1, 1)/√2 is -45° about x
        "foot": (rotate("x", -45 * DEG), [0.001, 0.001, 0.0015]),
    }
    for name, (R, d) in expected.items():
        np.testing.assert_allclose(links[name].rotation, R, atol=1e-15, err_msg=name)
        np.testing.assert_allclose(
            links[name].inertia_com, R @ np.diag(d) @ R.T, atol=1e-15, err_msg=name
        )
    # fullinertia = M11 M22 M33 M12 M13 M23, in the body frame
    full = np.array([[0.004, 0.0005, -0.0003], [0.0005, 0.005, 0.0002], [-0.0003, 0.0002, 0.006]])
    np.testing.assert_array_equal(links["arm"].inertia_com, full)
    np.testing.assert_array_equal(links["arm"].com, [0.0, 0.1, 0.0])
    assert "head" not in links
    assert any("head" in note for note in read_model(FIX / "walker.xml").notes)


def _mjcf(body_attrs: str, compiler: str = "") -> str:
    return (
        f"<mujoco>{compiler}<worldbody><body name='b'>"
        f"<inertial pos='0 0 0' mass='1' diaginertia='0.01 0.02 0.025' {body_attrs}/>"
        "</body></worldbody></mujoco>"
    )


@pytest.mark.parametrize(
    "seq, expected",
    [
        ("xyz", lambda a, b, c: rotate("x", a) @ rotate("y", b) @ rotate("z", c)),
        ("XYZ", lambda a, b, c: rotate("z", c) @ rotate("y", b) @ rotate("x", a)),
        ("zyx", lambda a, b, c: rotate("z", a) @ rotate("y", b) @ rotate("x", c)),
        ("ZYX", lambda a, b, c: rotate("x", c) @ rotate("y", b) @ rotate("z", a)),
        ("zxz", lambda a, b, c: rotate("z", a) @ rotate("x", b) @ rotate("z", c)),
        # mixed: x about the moving frame, Y about the fixed one (pre-multiplied), z moving
        ("xYz", lambda a, b, c: rotate("y", b) @ rotate("x", a) @ rotate("z", c)),
    ],
)
def test_mjcf_eulerseq(tmp_path, seq, expected):
    a, b, c = 0.5, -0.2, 1.0
    p = tmp_path / "m.xml"
    p.write_text(_mjcf(f"euler='{a} {b} {c}'", f"<compiler angle='radian' eulerseq='{seq}'/>"))
    np.testing.assert_allclose(read_model(p).links[0].rotation, expected(a, b, c), atol=1e-15)


def test_mjcf_angle_units_and_last_compiler_wins(tmp_path):
    rad = tmp_path / "rad.xml"
    rad.write_text(_mjcf("axisangle='0 0 1 0.7'", "<compiler angle='radian'/>"))
    deg = tmp_path / "deg.xml"
    deg.write_text(_mjcf(f"axisangle='0 0 1 {0.7 / DEG!r}'"))
    both = tmp_path / "both.xml"
    both.write_text(
        _mjcf("axisangle='0 0 1 0.7'", "<compiler angle='degree'/><compiler angle='radian'/>")
    )
    R = rotate("z", 0.7)
    for p in (rad, deg, both):
        np.testing.assert_allclose(read_model(p).links[0].rotation, R, atol=1e-14)


def test_mjcf_compiler_flags_are_noted(tmp_path):
    p = tmp_path / "m.xml"
    p.write_text(_mjcf("", "<compiler balanceinertia='true' inertiafromgeom='true'/>"))
    notes = " ".join(read_model(p).notes)
    assert "balanceinertia" in notes and "inertiafromgeom" in notes


# -------------------------------------------------------------------------- malformed

_URDF_LINK = (
    "<?xml version='1.0'?>\n<robot name='r'>\n<link name='L1'>\n<inertial>\n{body}\n"
    "</inertial>\n</link>\n</robot>\n"
)
_GOOD_URDF = {
    "origin": "<origin xyz='0 0 0' rpy='0 0 0'/>",
    "mass": "<mass value='1'/>",
    "inertia": "<inertia ixx='1' ixy='0' ixz='0' iyy='1' iyz='0' izz='1'/>",
}


def _urdf(**over):
    parts = dict(_GOOD_URDF, **over)
    return _URDF_LINK.format(body="\n".join(v for v in parts.values() if v))


_SDF = (
    "<sdf version='1.9'><model name='m'><link name='L1'>\n<inertial>\n"
    "<pose{pose_attr}>{pose}</pose>\n<mass>1</mass>\n<inertia><ixx>1</ixx><ixy>0</ixy>{ixz}<iyy>1</iyy><iyz>0</iyz><izz>1</izz>"
    "</inertia>\n</inertial></link></model></sdf>"
)


def _sdf(pose="0 0 0 0 0 0", pose_attr="", ixz="<ixz>0</ixz>"):
    return _SDF.format(pose=pose, pose_attr=pose_attr, ixz=ixz)


# fmt: off
@pytest.mark.parametrize(
    "text, ext, line, link, field, problem",
    [
        (_urdf(mass=None), "urdf", 4, "L1", "inertial/mass", "no <mass>"),
        (_urdf(mass="<mass value='heavy'/>"), "urdf", 6, "L1", "inertial/mass/value", "'heavy'"),
        (_urdf(mass="<mass value='1.5kg'/>"), "urdf", 6, "L1", "inertial/mass/value", "'1.5kg'"),
        (_urdf(mass="<mass value='nan'/>"), "urdf", 6, "L1", "inertial/mass/value", "'nan'"),
        (_urdf(mass="<mass value='1e999'/>"), "urdf", 6, "L1", "inertial/mass/value", "range"),
        (_urdf(mass="<mass/>"), "urdf", 6, "L1", "inertial/mass/value", "missing"),
        (_urdf(origin="<origin xyz='0 0'/>"), "urdf", 5, "L1", "inertial/origin/xyz", "got 2"),
        (
            _urdf(inertia="<inertia ixx='1' ixy='0' ixz='0' iyy='1' izz='1'/>"),
            "urdf", 7, "L1", "inertial/inertia/iyz", "missing",
        ),
        (_urdf(inertia=None), "urdf", 4, "L1", "inertial/inertia", "no <inertia>"),
        (_sdf(ixz=""), "sdf", 5, "L1", "inertial/inertia/ixz", "no <ixz>"),
        (_sdf(pose="0 0 0 0 0"), "sdf", 3, "L1", "inertial/pose", "got 5"),
        (
            _sdf(pose_attr=" rotation_format='quat_wxyz'"),
            "sdf", 3, "L1", "inertial/pose/rotation_format", "unknown rotation_format",
        ),
        (_sdf(pose_attr=" degrees='maybe'"), "sdf", 3, "L1", "inertial/pose/degrees", "true/false"),
        (
            _sdf(pose_attr=" relative_to='other'"),
            "sdf", 3, "L1", "inertial/pose/relative_to", "not supported",
        ),
        (
            "<mujoco>\n<compiler angle='grad'/>\n</mujoco>",
            "xml", 2, None, "compiler/angle", "unknown angle unit 'grad'",
        ),
        (
            "<mujoco>\n<compiler eulerseq='xy'/>\n</mujoco>",
            "xml", 2, None, "compiler/eulerseq", "3 characters",
        ),
        (
            "<mujoco><worldbody>\n<body name='b'>\n<inertial pos='0 0 0' diaginertia='1 1 1'/>"
            "</body></worldbody></mujoco>",
            "xml", 3, "b", "inertial/mass", "missing",
        ),
        (
            "<mujoco><worldbody>\n<body name='b'>\n<inertial pos='0 0 0' mass='1'/>"
            "</body></worldbody></mujoco>",
            "xml", 3, "b", "inertial/diaginertia", "one of diaginertia or fullinertia",
        ),
        (
            "<mujoco><worldbody>\n<body name='b'>\n<inertial pos='0 0 0' mass='1' "
            "diaginertia='1 1 1' fullinertia='1 1 1 0 0 0'/></body></worldbody></mujoco>",
            "xml", 3, "b", "inertial/fullinertia", "cannot both",
        ),
        (
            "<mujoco><worldbody>\n<body name='b'>\n<inertial pos='0 0 0' mass='1' euler='1 0 0' "
            "fullinertia='1 1 1 0 0 0'/></body></worldbody></mujoco>",
            "xml", 3, "b", "inertial/euler", "cannot both",
        ),
        (
            "<mujoco><worldbody>\n<body name='b'>\n<inertial pos='0 0 0' mass='1' euler='1 0 0' "
            "quat='1 0 0 0' diaginertia='1 1 1'/></body></worldbody></mujoco>",
            "xml", 3, "b", "inertial/euler", "multiple orientation",
        ),
        (
            "<mujoco><worldbody>\n<body name='b'>\n<inertial pos='0 0 0' mass='1' quat='0 0 0 0' "
            "diaginertia='1 1 1'/></body></worldbody></mujoco>",
            "xml", 3, "b", "inertial/quat", "zero quaternion",
        ),
        ("<robot name='r'>\n<link name='a'>\n</robot>", "urdf", 3, None, None, "not well-formed"),
        # non-ASCII digits: float("٢") is 2.0, XML Schema's decimal is ASCII only
        (_urdf(mass="<mass value='\u0662'/>"), "urdf", 6, "L1", "inertial/mass/value", "'٢'"),
        (
            _urdf(inertia="<inertia ixx='\uff11' ixy='0' ixz='0' iyy='1' iyz='0' izz='1'/>"),
            "urdf", 7, "L1", "inertial/inertia/ixx", "finite decimal number",
        ),
        (_sdf(pose="0 0 \u0967 0 0 0"), "sdf", 3, "L1", "inertial/pose", "'१'"),
        # duplicate names: urdfdom and Pinocchio reject the file
        (
            "<robot name='r'>\n<link name='a'/>\n<link name='b'/>\n<link name='a'/>\n</robot>",
            "urdf", 4, None, "link/name", "duplicate link name 'a' (first defined on line 2)",
        ),
        (
            "<robot name='r'>\n<link name='a'/><link name='b'/><link name='c'/>\n"
            "<joint name='j' type='fixed'><parent link='a'/><child link='b'/></joint>\n"
            "<joint name='j' type='fixed'><parent link='b'/><child link='c'/></joint>\n</robot>",
            "urdf", 4, None, "joint/name", "duplicate joint name 'j' (first defined on line 3)",
        ),
        (
            "<sdf version='1.9'><model name='m'>\n<link name='a'/>\n<link name='a'/>\n"
            "</model></sdf>",
            "sdf", 3, None, "link/name", "duplicate link name 'a' (first defined on line 2)",
        ),
        # an internal entity that expands to markup (its bytes cannot be located for --fix)
        (
            "<?xml version='1.0'?>\n<!DOCTYPE robot [<!ENTITY L \"<link name='x'/>\">]>\n"
            "<robot name='r'>\n&L;\n</robot>",
            "urdf", 4, None, None, "expansion of an XML entity",
        ),
    ],
)
# fmt: on
def test_malformed_files_name_file_line_link_and_field(
    tmp_path, text, ext, line, link, field, problem
):
    p = tmp_path / f"model.{ext}"
    p.write_text(text, encoding="utf-8")
    with pytest.raises(ModelFileError) as info:
        load_inertials(p)
    err = info.value
    assert (err.path, err.line, err.link, err.field) == (str(p), line, link, field)
    assert problem in err.problem
    msg = str(err)
    assert msg.startswith(f"{p}:{line}: ")
    if link is not None:
        assert f"link '{link}'" in msg
    if field is not None:
        assert f"field '{field}'" in msg


def test_missing_file_is_a_model_file_error(tmp_path):
    with pytest.raises(ModelFileError, match="cannot read file"):
        load_inertials(tmp_path / "nope.urdf")


# --------------------------------------------------------------------- example-robot-data


@pytest.mark.skipif(robots_dir() is None, reason="example-robot-data is not installed")
def test_example_robot_data_urdfs_match_pinocchio():
    """Every URDF in example-robot-data reads without error and agrees with Pinocchio."""
    files = sorted(glob.glob(str(robots_dir() / "**" / "*.urdf"), recursive=True))
    assert len(files) > 20
    t0 = time.perf_counter()
    n_links = n_compared = 0
    for path in files:
        ours = _by_name(read_model(path))
        n_links += len(ours)
        try:
            model = pin.buildModelFromUrdf(path)
        except (RuntimeError, ValueError):  # urdfdom rejects e.g. a <robot> without a name
            assert not ours, path
            continue
        acc = np.zeros((model.njoints, 10))
        for fr in model.frames:
            if fr.type == pin.FrameType.BODY:
                acc[fr.parentJoint] += _params_in_parent(ours[fr.name], fr.placement)
        for j in range(1, model.njoints):
            ref = model.inertias[j].toDynamicParameters()
            np.testing.assert_allclose(
                acc[j], ref, rtol=1e-12, atol=1e-12 * np.abs(ref).max(),
                err_msg=f"{path}: joint {model.names[j]}",
            )
            n_compared += 1
    print(f"\nexample-robot-data: {len(files)} URDF files, {n_links} links read, "
          f"{n_compared} joint inertias equal to Pinocchio's, {time.perf_counter() - t0:.1f} s")
    assert n_links > 1000


def test_io_package_only_re_exports_its_public_names():
    import spatialjax.io as io

    assert {n for n in dir(io) if not n.startswith("_")} == set(io.__all__)
    # the readers live in io's private modules; the linter's names (what `spatialjax check`
    # runs) in their own private package, re-exported here
    linter = {"check_file", "classify", "Verdict"}
    for name in io.__all__:
        if name != "VERDICTS":
            home = "spatialjax._lint." if name in linter else "spatialjax.io._"
            assert getattr(io, name).__module__.startswith(home), name
