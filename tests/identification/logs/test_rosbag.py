"""ROS bags read by ``load_log`` and ``spatialjax identify``/``info``.

The bags are written by ``rosbags``' own writers (ROS 2 sqlite3 and mcap, ROS 1) from logs
simulated with ``simulate_log`` (the toy arm of ``fixtures/toy_attached.urdf``); what
``load_log`` reads back is compared with the arrays written (the references), and
``spatialjax identify`` on a bag with ``spatialjax identify`` on the equivalent ``.npz``.
"""

from __future__ import annotations

import json
import re
import sys

import jax
import numpy as np
import pytest
from helpers import FIXTURES, raises_argument

import spatialjax.multibody as mb
from spatialjax import identification as ident
from spatialjax._util import x64
from spatialjax.identification import IdentifyError, LogError

rosbags = pytest.importorskip("rosbags")
from rosbags.rosbag1 import Writer as Writer1  # noqa: E402
from rosbags.rosbag2 import StoragePlugin  # noqa: E402
from rosbags.rosbag2 import Writer as Writer2  # noqa: E402
from rosbags.typesys import Stores, get_typestore  # noqa: E402

FIX = FIXTURES
TOY = FIX / "toy_attached.urdf"
LOCK = {"j3": 0.3, "j4": 0.05}
T0 = 1_700_000_000_123_456_789  # ns, a realistic ROS time
LATENCY = 250_000  # ns between a header stamp and the recording


# ----------------------------------------------------------------------------- writing
class Bag:
    """A bag being written: ROS 1 (``kind="ros1"``) or ROS 2 (``"sqlite3"``, ``"mcap"``)."""

    def __init__(self, path, kind):
        self.ros1 = kind == "ros1"
        self.ts = get_typestore(Stores.ROS1_NOETIC if self.ros1 else Stores.ROS2_HUMBLE)
        if self.ros1:
            self.writer = Writer1(path)
        else:
            plugin = StoragePlugin.MCAP if kind == "mcap" else StoragePlugin.SQLITE3
            self.writer = Writer2(path, version=9, storage_plugin=plugin)
        self.cons = {}

    def __enter__(self):
        self.writer.open()
        return self

    def __exit__(self, *exc):
        self.writer.close()

    def T(self, name):
        return self.ts.types[name]

    def header(self, stamp_ns, frame=""):
        stamp = self.T("builtin_interfaces/msg/Time")(
            sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9
        )
        H = self.T("std_msgs/msg/Header")
        return (
            H(seq=0, stamp=stamp, frame_id=frame) if self.ros1 else H(stamp=stamp, frame_id=frame)
        )

    def write(self, topic, msg, rec_ns):
        typ = msg.__msgtype__
        if topic not in self.cons:
            self.cons[topic] = self.writer.add_connection(topic, typ, typestore=self.ts)
        ser = self.ts.serialize_ros1 if self.ros1 else self.ts.serialize_cdr
        self.writer.write(self.cons[topic], rec_ns, ser(msg, typ))

    def joint_state(self, stamp_ns, names, q, dq, tau):
        f = lambda x: np.asarray(x if x is not None else [], np.float64)  # noqa: E731
        return self.T("sensor_msgs/msg/JointState")(
            header=self.header(stamp_ns), name=list(names), position=f(q), velocity=f(dq),
            effort=f(tau),
        )  # fmt: skip

    def vector(self, v):
        return self.T("geometry_msgs/msg/Vector3")(x=v[0], y=v[1], z=v[2])

    def pose(self, p, wxyz):
        w, x, y, z = wxyz
        return self.T("geometry_msgs/msg/Pose")(
            position=self.T("geometry_msgs/msg/Point")(x=p[0], y=p[1], z=p[2]),
            orientation=self.T("geometry_msgs/msg/Quaternion")(x=x, y=y, z=z, w=w),
        )


def write_joint_states(bag, log, *, groups=None, topic="/joint_states", zero_stamps=False,
                       velocity=True, extra=None):  # fmt: skip
    """The log's samples as JointState messages, one per group of joints per sample.

    ``extra``: ``{name: q column}`` of another robot's joints, published in messages of their
    own on the same topic, with positions only.
    """
    names = list(log.joint_names)
    groups = groups or [names]
    for k, tk in enumerate(log.t):
        stamp = T0 + round(float(tk) * 1e9)
        for group in groups:
            cols = [names.index(n) for n in group]
            dq = log.dq[k, cols] if velocity and log.dq is not None else None
            msg = bag.joint_state(0 if zero_stamps else stamp, group, log.q[k, cols], dq,
                                  log.tau[k, cols])  # fmt: skip
            bag.write(topic, msg, stamp + LATENCY)
        if extra:
            q = [float(x[k]) for x in extra.values()]
            msg = bag.joint_state(0 if zero_stamps else stamp, list(extra), q, None, None)
            bag.write(topic, msg, stamp + LATENCY)


def simulate(n_joints=2, duration=2.0, rate=200.0, key=0, derivatives=False):
    """A toy-arm log: j1, j2 moving (j3, j4 locked at LOCK), or all four joints moving."""
    with x64():
        locked = LOCK if n_joints == 2 else None
        model = mb.Model.from_urdf(TOY, locked_joints=locked, dtype="float64")
        k1, k2 = jax.random.split(jax.random.PRNGKey(key))
        t, q, dq, ddq = ident.excitation_trajectory(model.nv, duration=duration, rate=rate, key=k1)
        log = ident.simulate_log(model, t, q, dq, ddq, key=k2, torque_noise=0.01,
                                 include_derivatives=derivatives)  # fmt: skip
    names = tuple(model.joint_names)
    return ident.RobotLog(t=log.t, q=log.q, tau=log.tau, dq=log.dq, joint_names=names)


@pytest.fixture(scope="module")
def arm_log():
    return simulate(n_joints=4, derivatives=True)


def _bag_path(tmp_path, kind, name="run"):
    return tmp_path / (f"{name}.bag" if kind == "ros1" else name)


def _same(got, log, *, dq=True):
    np.testing.assert_allclose(got.t, log.t - log.t[0], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(got.q, log.q)
    np.testing.assert_array_equal(got.tau, log.tau)
    if dq:
        np.testing.assert_array_equal(got.dq, log.dq)
    assert got.joint_names == log.joint_names


# ----------------------------------------------------------------------------- reading
@pytest.mark.parametrize("kind", ["sqlite3", "mcap", "ros1"])
def test_bag_reads_back_the_log(kind, arm_log, tmp_path):
    path = _bag_path(tmp_path, kind)
    with Bag(path, kind) as bag:
        write_joint_states(bag, arm_log)
    got = ident.load_log(path)
    _same(got, arm_log)
    assert got.ddq is None and not got.floating_base
    assert "/joint_states: time from the header stamps" in got.notes
    assert any("t = 0 s at 1700000000.123456789 s" in n for n in got.notes)
    if kind != "ros1":  # the storage file alone is a bag too
        (storage,) = [p for p in path.iterdir() if p.suffix in (".db3", ".mcap")]
        _same(ident.load_log(storage), arm_log)


def test_split_arm_and_gripper_messages_are_merged(arm_log, tmp_path):
    path = _bag_path(tmp_path, "sqlite3")
    with Bag(path, "sqlite3") as bag:
        write_joint_states(bag, arm_log, groups=[("j1", "j2"), ("j3", "j4")])
    got = ident.load_log(path)
    _same(got, arm_log)  # the same stamps: nothing interpolated
    assert not any("interpolated" in n for n in got.notes)


def test_gripper_at_another_rate_is_interpolated_onto_the_arm(arm_log, tmp_path):
    """Gripper messages at every third arm stamp, shifted by 1 ms: linear interpolation."""
    path = _bag_path(tmp_path, "mcap")
    t, names = arm_log.t, list(arm_log.joint_names)
    with Bag(path, "mcap") as bag:
        for k, tk in enumerate(t):
            stamp = T0 + round(float(tk) * 1e9)
            bag.write("/joint_states", bag.joint_state(stamp, names[:2], arm_log.q[k, :2],
                      arm_log.dq[k, :2], arm_log.tau[k, :2]), stamp)  # fmt: skip
            if k % 3 == 0:
                s2 = stamp + 1_000_000
                bag.write("/joint_states", bag.joint_state(s2, names[2:], arm_log.q[k, 2:],
                          arm_log.dq[k, 2:], arm_log.tau[k, 2:]), s2)  # fmt: skip
    got = ident.load_log(path)
    tg = (np.arange(0, t.size, 3) * (t[1] - t[0])) + 1e-3  # the gripper's times
    inside = (t >= tg[0]) & (t <= tg[-1])
    assert got.n_samples == int(inside.sum())
    np.testing.assert_array_equal(got.q[:, :2], arm_log.q[inside, :2])
    for j in (2, 3):  # numpy's interpolation as the reference
        ref = np.interp(t[inside], tg, arm_log.q[::3, j][: tg.size])
        np.testing.assert_allclose(got.q[:, j], ref, rtol=0, atol=1e-12)
    assert any("j3, j4 published at other instants than j1: interpolated" in n for n in got.notes)


@pytest.mark.parametrize("kind", ["sqlite3", "ros1"])
def test_zero_stamps_use_the_recording_time_and_say_so(kind, arm_log, tmp_path):
    path = _bag_path(tmp_path, kind)
    with Bag(path, kind) as bag:
        write_joint_states(bag, arm_log, zero_stamps=True)
    got = ident.load_log(path)
    _same(got, arm_log)
    n = arm_log.n_samples
    assert f"/joint_states: {n} of {n} header stamps are zero; the recording times are used " \
        "instead" in got.notes  # fmt: skip


def test_a_topic_with_two_robots(arm_log, tmp_path):
    """Another robot's joints (no efforts) on the topic: read only the model's joints."""
    path = _bag_path(tmp_path, "mcap")
    other = {"other_joint1": np.sin(arm_log.t), "other_joint2": np.cos(arm_log.t)}
    with Bag(path, "mcap") as bag:
        write_joint_states(bag, arm_log, groups=[("j1", "j2"), ("j3", "j4")], extra=other)
    got = ident.load_log(path, joints=["j1", "j2", "j3", "j4", "j5"])
    _same(got, arm_log)
    assert (
        "/joint_states: joints not in the model, ignored: other_joint1, other_joint2" in got.notes
    )
    with pytest.raises(ident.LogError) as e:
        ident.load_log(path)  # every joint: other_joint1 has no effort
    assert e.value.column == "tau_other_joint1" and "joints=" in str(e.value)


def test_velocities_optional_efforts_required(arm_log, tmp_path):
    path = _bag_path(tmp_path, "sqlite3")
    with Bag(path, "sqlite3") as bag:
        write_joint_states(bag, arm_log, groups=[("j1", "j2"), ("j3", "j4")])
        # a last message without velocities: dq is not read (as an .npz without dq)
        stamp = T0 + round(float(arm_log.t[-1] + 0.005) * 1e9)
        bag.write("/joint_states", bag.joint_state(stamp, ["j3"], [0.1], None, [0.2]), stamp)
    got = ident.load_log(path, joints=["j1", "j2"])  # j1, j2 have every velocity
    assert got.joint_names == ("j1", "j2")
    np.testing.assert_array_equal(got.dq, arm_log.dq[:, :2])
    got = ident.load_log(path)
    assert got.dq is None and any("no velocity for j3: dq is not read" in n for n in got.notes)
    path2 = _bag_path(tmp_path, "ros1", "no_effort")
    with Bag(path2, "ros1") as bag:
        for k in range(3):
            stamp = T0 + k * 10**7
            bag.write("/joint_states", bag.joint_state(stamp, ["j1"], [0.1 * k], None, None), stamp)
    with pytest.raises(ident.LogError) as e:
        ident.load_log(path2)
    assert e.value.column == "tau_j1" and "no effort for joint 'j1'" in str(e.value)


def _small_bag(path, kind, topics=("/joint_states",)):
    with Bag(path, kind) as bag:
        for k in range(4):
            stamp = T0 + k * 10**7
            for tp in topics:
                bag.write(tp, bag.joint_state(stamp, ["j1"], [0.1 * k], None, [1.0]), stamp)
            w = bag.T("geometry_msgs/msg/WrenchStamped")(
                header=bag.header(stamp, "tool"),
                wrench=bag.T("geometry_msgs/msg/Wrench")(
                    force=bag.vector([0.0, 0.0, 1.0]), torque=bag.vector([0.0, 0.0, 0.0])
                ),
            )
            bag.write("/ft", w, stamp)


def test_topic_choice_and_bad_topics(tmp_path):
    path = _bag_path(tmp_path, "mcap")
    _small_bag(path, "mcap", topics=("/joint_states", "/arm/joint_states"))
    assert ident.load_log(path).q[:, 0].tolist() == [0.0, 0.1, 0.2, 0.30000000000000004]
    assert ident.load_log(path, topic="/arm/joint_states").n_samples == 4
    for topic, text in (("/nope", "no topic '/nope'"), ("/ft", "not a JointState topic: '/ft'")):
        with pytest.raises(ident.LogError) as e:
            ident.load_log(path, topic=topic)
        assert isinstance(e.value, ident.BagOptionError) and e.value.argument == "topic"
        assert text in str(e.value)
        assert "/arm/joint_states (sensor_msgs/msg/JointState)" in str(e.value)  # listed
    path2 = _bag_path(tmp_path, "sqlite3", "two")
    _small_bag(path2, "sqlite3", topics=("/a/joint_states", "/b/joint_states"))
    with pytest.raises(ident.BagOptionError) as e:
        ident.load_log(path2)
    assert e.value.argument == "topic"
    # a fixed-base bag: its WrenchStamped topic is no contact (no base pose)
    assert not ident.load_log(path2, topic="/a/joint_states").floating_base
    with pytest.raises(ident.BagOptionError) as e:
        ident.load_log(path2, topic="/a/joint_states", wrench_topics=["/ft"])
    assert e.value.argument == "wrench_topics"
    with raises_argument(IdentifyError, "topic"):
        ident.load_log(tmp_path / "log.npz", topic="/joint_states")


def test_missing_rosbags_names_the_extra(arm_log, tmp_path, monkeypatch):
    path = _bag_path(tmp_path, "mcap")
    with Bag(path, "mcap") as bag:
        write_joint_states(bag, arm_log)
    monkeypatch.setitem(sys.modules, "rosbags.highlevel", None)  # import fails
    with pytest.raises(ImportError, match=r'pip install "spatialjax\[ros\]"'):
        ident.load_log(path)


def test_not_a_bag(tmp_path):
    with pytest.raises(FileNotFoundError):
        ident.load_log(tmp_path / "nope.mcap")
    (tmp_path / "bad.bag").write_bytes(b"not a bag")
    with raises_argument(LogError, "log"):
        ident.load_log(tmp_path / "bad.bag")
    with raises_argument(LogError, "log"):
        ident.load_log(tmp_path)  # a folder without metadata.yaml


# --------------------------------------------------------------------------- floating base
def _floating_arrays(n=60, seed=0):
    """A base pose (unit quaternions through both hemispheres) and two feet's wrenches."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) * 0.005
    axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    angle = 0.4 + 2.0 * t
    quat = np.concatenate([np.cos(angle / 2)[:, None], np.sin(angle / 2)[:, None] * axis], 1)
    quat[n // 2 :] *= -1  # the same rotations from the other hemisphere
    pos = np.stack([0.1 * t, 0.05 * np.sin(t), 0.3 + 0.01 * t], axis=1)
    wrench = rng.normal(size=(n, 2, 6))  # [n; f] per foot
    q = rng.normal(size=(n, 2))
    return ident.RobotLog(
        t=t, q=q, tau=rng.normal(size=(n, 2)), joint_names=("hip", "knee"), base_position=pos,
        base_quaternion=quat, contact_frames=("lf_foot", "rf_foot"), contact_wrenches=wrench,
    )  # fmt: skip


def _write_floating(bag, log, base="odom"):
    for k, tk in enumerate(log.t):
        stamp = T0 + round(float(tk) * 1e9)
        bag.write("/joint_states", bag.joint_state(stamp, log.joint_names, log.q[k], None,
                  log.tau[k]), stamp)  # fmt: skip
        pose = bag.pose(log.base_position[k], log.base_quaternion[k])
        if base == "odom":
            Odom = bag.T("nav_msgs/msg/Odometry")
            cov = np.zeros(36)
            twist = bag.T("geometry_msgs/msg/TwistWithCovariance")(
                twist=bag.T("geometry_msgs/msg/Twist")(
                    linear=bag.vector([0, 0, 0]), angular=bag.vector([0, 0, 0])
                ),
                covariance=cov,
            )
            pwc = bag.T("geometry_msgs/msg/PoseWithCovariance")(pose=pose, covariance=cov)
            msg = Odom(header=bag.header(stamp, "odom"), child_frame_id="base_link", pose=pwc,
                       twist=twist)  # fmt: skip
            bag.write("/odom", msg, stamp)
        elif base == "pose":
            msg = bag.T("geometry_msgs/msg/PoseStamped")(
                header=bag.header(stamp, "world"), pose=pose
            )
            bag.write("/base_pose", msg, stamp)
        else:  # /tf with the base and a second transform
            TS = bag.T("geometry_msgs/msg/TransformStamped")
            Tr = bag.T("geometry_msgs/msg/Transform")
            rot = pose.orientation
            pairs = (("base_link", log.base_position[k]), ("camera", [0, 0, 1.0]))
            trs = [TS(header=bag.header(stamp, "odom"), child_frame_id=child,
                      transform=Tr(translation=bag.vector(v), rotation=rot))
                   for child, v in pairs]  # fmt: skip
            bag.write("/tf", bag.T("tf2_msgs/msg/TFMessage")(transforms=trs), stamp)
        for f, frame in enumerate(log.contact_frames):
            n, force = log.contact_wrenches[k, f, :3], log.contact_wrenches[k, f, 3:]
            msg = bag.T("geometry_msgs/msg/WrenchStamped")(
                header=bag.header(stamp, frame),
                wrench=bag.T("geometry_msgs/msg/Wrench")(force=bag.vector(force),
                                                         torque=bag.vector(n)),
            )  # fmt: skip
            bag.write(f"/{frame}/ft", msg, stamp)


@pytest.mark.parametrize(("kind", "base"), [("mcap", "odom"), ("ros1", "pose"), ("sqlite3", "tf")])
def test_floating_base_pose_and_contact_wrenches(kind, base, tmp_path):
    log = _floating_arrays()
    path = _bag_path(tmp_path, kind)
    with Bag(path, kind) as bag:
        _write_floating(bag, log, base)
    options = {"odom": {}, "pose": {"base_topic": "/base_pose"},
               "tf": {"base_topic": "/tf", "base_frame": "base_link"}}[base]  # fmt: skip
    got = ident.load_log(path, **options)
    np.testing.assert_allclose(got.t, log.t, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(got.q, log.q)
    np.testing.assert_array_equal(got.base_position, log.base_position)
    # continuous through the hemisphere change: the same rotations, signs flipped after it
    flip = np.where(np.sum(got.base_quaternion * log.base_quaternion, 1) < 0, -1.0, 1.0)
    assert (flip == -1).any()
    np.testing.assert_array_equal(got.base_quaternion * flip[:, None], log.base_quaternion)
    assert got.contact_frames == ("lf_foot", "rf_foot")
    np.testing.assert_array_equal(got.contact_wrenches, log.contact_wrenches)
    assert any(
        n.startswith("contact wrenches [torque; force] in the frames lf_foot") for n in got.notes
    )
    if base == "tf":
        with pytest.raises(ident.BagOptionError) as e:
            ident.load_log(path, base_topic="/tf")
        assert e.value.argument == "base_frame" and "base_link, camera" in str(e.value)
    if base == "odom":
        fixed = ident.load_log(path, base_topic=None)
        assert not fixed.floating_base and fixed.contact_frames is None
        with pytest.raises(ident.BagOptionError) as e:
            ident.load_log(path, base_topic="/joint_states")
        assert e.value.argument == "base_topic" and "those it has: /odom" in str(e.value)


def test_still_joints():
    log = simulate()
    q = np.concatenate([log.q, np.full((log.n_samples, 1), 0.02)], axis=1)
    tau = np.concatenate([log.tau, np.zeros((log.n_samples, 1))], axis=1)
    log = ident.RobotLog(t=log.t, q=q, tau=tau, joint_names=("j1", "j2", "finger"))
    assert ident.still_joints(log) == {"finger": 0.02}
    assert ident.still_joints(log, tolerance=10.0).keys() == {"j1", "j2", "finger"}
    with raises_argument(IdentifyError, "tolerance"):
        ident.still_joints(log, tolerance=-1.0)


# ------------------------------------------------------------------------------ commands
def _cli(capsys, argv):
    from spatialjax._cli import main

    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def _toy_bag(tmp_path, kind="sqlite3"):
    """The 2-joint toy log as a bag: the arm (j1, j2) and the gripper (j3, j4, held still at
    LOCK) published apart on /joint_states, with another robot's joints on the same topic;
    and the same log as an .npz."""
    log = simulate(n_joints=2, duration=4.0, rate=500.0)
    npz = log.save(tmp_path / "toy.npz")
    n = log.n_samples
    names = ("j1", "j2", "j3", "j4")
    q = np.concatenate([log.q, np.tile([LOCK["j3"], LOCK["j4"]], (n, 1))], axis=1)
    tau = np.concatenate([log.tau, np.tile([0.7, -0.2], (n, 1))], axis=1)
    full = ident.RobotLog(t=log.t, q=q, tau=tau, joint_names=names)
    path = _bag_path(tmp_path, kind, "toy")
    with Bag(path, kind) as bag:
        other = {"other_joint1": np.sin(log.t)}
        write_joint_states(bag, full, groups=[("j1", "j2"), ("j3", "j4")], extra=other)
    return path, npz


def test_info_lists_the_bag_against_the_model(tmp_path, capsys):
    path, npz = _toy_bag(tmp_path)
    status, out, err = _cli(capsys, ["info", path, "--model", TOY])
    assert status == 0, err
    assert "ROS 2 bag, 3.998 s, 1 topic(s)" in out
    # three messages per instant (arm, gripper, the other robot) every 2 ms
    assert re.search(
        r"/joint_states\s+sensor_msgs/msg/JointState\s+6000\s+1500.5\s+0 ms\s+2 ms", out
    )
    assert "joints on /joint_states (5): j1, j2, j3, j4, other_joint1" in out
    assert "only in the log (ignored) (1): other_joint1" in out
    assert "only in the model (locked at 0 unless --lock) (0): -" in out
    status, out, _ = _cli(capsys, ["info", npz])
    assert status == 0 and "joints (2): j1, j2" in out and " 500 " in out
    status, _, err = _cli(capsys, ["info", path, "--topic", "/nope"])
    assert status == 2 and "topic: no topic '/nope'" in err


def test_identify_refuses_bad_bag_options_before_fitting(tmp_path, capsys):
    path, npz = _toy_bag(tmp_path, "mcap")
    status, out, err = _cli(capsys, ["identify", TOY, path, "--topic", "/nope", "--no-cache"])
    assert status == 2 and "--topic: " in err and "no topic '/nope'" in err
    assert "/joint_states (sensor_msgs/msg/JointState)" in err and "[3/" not in out
    status, _, err = _cli(capsys, ["identify", TOY, npz, "--base-topic", "/odom"])
    assert status == 2 and "--base-topic: applies to a ROS bag" in err
    status, _, err = _cli(capsys, ["identify", TOY, tmp_path, "--no-cache"])
    assert status == 2 and "not a ROS 2 bag" in err


@pytest.mark.slow
def test_identify_on_the_bag_and_on_the_npz_give_the_same_report(tmp_path, capsys):
    path, npz = _toy_bag(tmp_path)
    common = ["--joint-model", "viscous", "--holdout", "0.25", "--lowpass", "40", "--decimate",
              "2", "--no-cache"]  # fmt: skip
    reports = {}
    for name, log, extra in (("bag", path, []),
                             ("npz", npz, ["--lock", "j3=0.3", "--lock", "j4=0.05"])):  # fmt: skip
        report = tmp_path / f"{name}.json"
        status, out, err = _cli(capsys, ["identify", TOY, log, *common, *extra, "--report", report])
        assert status == 0, err
        reports[name] = json.loads(report.read_text())
        if name == "bag":
            assert "note: /joint_states: joints not in the model, ignored: other_joint1" in out
            assert "note: j3 held still in the log: locked at 0.3" in out
            assert "note: /joint_states: time from the header stamps" in out
    bag, ref = reports["bag"], reports["npz"]
    assert bag["joints"] == ref["joints"] == ["j1", "j2"]
    assert bag["locked_joints"] == ref["locked_joints"] == LOCK
    for who in ("fit", "least_squares", "prior"):
        for part in ("train", "holdout"):
            assert bag["errors"][who][part]["overall"] == pytest.approx(
                ref["errors"][who][part]["overall"], rel=1e-9, abs=1e-12
            )
    got = np.array([d["fit"]["params"] for d in bag["links"]])
    want = np.array([d["fit"]["params"] for d in ref["links"]])
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)
    assert bag["gamma"] == pytest.approx(ref["gamma"], rel=1e-12)
