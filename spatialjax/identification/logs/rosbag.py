r"""ROS bags as robot logs: ``sensor_msgs/JointState`` (and a base pose, contact wrenches) to a
[`RobotLog`][spatialjax.identification.RobotLog], and an inventory of what a log holds.

Read with ``rosbags`` (``pip install "spatialjax[ros]"``, imported when a bag is read);
ROS quaternions ``xyzw`` become ``wxyz``; wrenches ``[n; f]`` in the message's frame.
Topics, time lines and interpolation: docs page ``identification-methods.md#ros-bags``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import IdentifyError
from .robot_log import FLOATING_KEYS, LogError, RobotLog, continuous_quaternions

__all__ = [
    "BAG_SUFFIXES",
    "BagOptionError",
    "LogInventory",
    "TopicSummary",
    "describe_log",
    "is_bag",
    "read_bag",
    "still_joints",
]

#: File suffixes read as bags (besides a folder with ``metadata.yaml``).
BAG_SUFFIXES = (".bag", ".mcap", ".db3")
JOINT_STATE = "sensor_msgs/msg/JointState"
ODOMETRY = "nav_msgs/msg/Odometry"
POSE_STAMPED = "geometry_msgs/msg/PoseStamped"
TF_MESSAGE = "tf2_msgs/msg/TFMessage"
WRENCH_STAMPED = "geometry_msgs/msg/WrenchStamped"
BASE_TYPES = (ODOMETRY, POSE_STAMPED, TF_MESSAGE)
DEFAULT_JOINT_TOPIC = "/joint_states"
#: A joint whose logged position spans at most this (rad or m) is held still (a gripper).
STILL_RANGE = 1e-4
_NS = 1_000_000_000
EXTRA = 'pip install "spatialjax[ros]"'


class BagOptionError(LogError):
    """A bag-reading option that does not suit the bag (a ``LogError``).

    Attributes:
      argument: the option: ``"topic"``, ``"base_topic"``, ``"base_frame"``,
        ``"wrench_topics"`` or ``"joints"``.
      detail: the message without the bag's path and the option.
    """

    def __init__(self, source, argument: str, message: str):
        super().__init__(source, None, message)
        self.argument = argument
        self.args = (f"{self.source}: {argument}: {message}",)


def is_bag(path) -> bool:
    """Whether ``path`` names a ROS bag: a ``.bag``/``.mcap``/``.db3`` file or a ROS 2 folder."""
    p = Path(path)
    return p.suffix.lower() in BAG_SUFFIXES or (p.is_dir() and (p / "metadata.yaml").is_file())


def _rosbags():
    """``(AnyReader, ros2 typestore)``, or an ImportError naming the extra."""
    try:
        from rosbags.highlevel import AnyReader
        from rosbags.typesys import Stores, get_typestore
    except ImportError:
        raise ImportError(
            f"path: reading ROS bags needs the rosbags package: {EXTRA} (or pip install rosbags)"
        ) from None
    return AnyReader, get_typestore(Stores.ROS2_HUMBLE)


def _open(path: Path):
    """An opened ``AnyReader`` on the bag (the caller closes it)."""
    AnyReader, store = _rosbags()
    if not path.exists():
        raise FileNotFoundError(f"path: no such file or folder {str(path)!r}")
    if path.is_dir() and not (path / "metadata.yaml").is_file():
        raise LogError(path, None, "a folder without metadata.yaml is not a ROS 2 bag")
    try:
        reader = AnyReader([path], default_typestore=store)
        reader.open()
    except Exception as e:  # rosbags' reader errors share no base class
        raise LogError(path, None, f"not a readable ROS bag ({type(e).__name__}: {e})") from None
    return reader


def _topics_of(reader, types) -> list[str]:
    return sorted(name for name, info in reader.topics.items() if info.msgtype in types)


def _topics_text(reader) -> str:
    return ", ".join(f"{n} ({i.msgtype})" for n, i in sorted(reader.topics.items())) or "none"


def _joint_topic(reader, path, topic) -> str:
    """The JointState topic: ``topic``, the only one, or ``/joint_states``."""
    found = _topics_of(reader, (JOINT_STATE,))
    if topic is not None:
        if topic not in found:
            what = "no topic" if topic not in reader.topics else "not a JointState topic:"
            raise BagOptionError(
                path, "topic", f"{what} {topic!r}; the bag's topics: {_topics_text(reader)}"
            )
        return topic
    if len(found) == 1:
        return found[0]
    if DEFAULT_JOINT_TOPIC in found:
        return DEFAULT_JOINT_TOPIC
    what = "no sensor_msgs/JointState topic" if not found else "several JointState topics"
    raise BagOptionError(
        path, "topic", f"{what}; choose one (the bag's topics: {_topics_text(reader)})"
    )


def _stamp_ns(stamp) -> int:
    return int(stamp.sec) * _NS + int(stamp.nanosec)


def _times(stamps, recorded, topic, notes) -> np.ndarray:
    """Header stamps (ns), or the recording times where one stamp is zero (noted)."""
    stamps = np.asarray(stamps, np.int64)
    zero = int(np.count_nonzero(stamps == 0))
    if zero:
        notes.append(
            f"{topic}: {zero} of {stamps.size} header stamps are zero; the recording times "
            "are used instead"
        )
        return np.asarray(recorded, np.int64)
    notes.append(f"{topic}: time from the header stamps")
    return stamps


def _read_messages(reader, topic, pick):
    """``(header stamps, recording times, pick(msg))`` of a topic's messages, recording order."""
    cons = [c for c in reader.connections if c.topic == topic]
    stamps, recorded, items = [], [], []
    for con, rec, raw in reader.messages(connections=cons):
        try:
            msg = reader.deserialize(raw, con.msgtype)
        except Exception as e:  # rosbags' errors share no base class
            raise LogError(
                reader.paths[0],
                None,
                f"{topic}: a message cannot be read ({type(e).__name__}: {e})",
            ) from None
        for stamp, item in pick(msg):
            stamps.append(stamp)
            recorded.append(rec)
            items.append(item)
    return stamps, recorded, items


def _joint_messages(reader, path, topic):
    """Per message ``(names, position, velocity, effort)``, checked for matching lengths."""

    def pick(msg):
        names = [str(n) for n in msg.name]
        fields = [
            np.asarray(getattr(msg, k), np.float64) for k in ("position", "velocity", "effort")
        ]
        yield _stamp_ns(msg.header.stamp), (names, *fields)

    stamps, recorded, items = _read_messages(reader, topic, pick)
    if not items:
        raise LogError(path, None, f"{topic}: no messages")
    for k, (names, pos, vel, eff) in enumerate(items):
        if len(set(names)) != len(names):
            raise LogError(path, "joint_names", f"{topic} message {k} names a joint twice", k)
        for what, x, optional in (("position", pos, False), ("velocity", vel, True),
                                  ("effort", eff, True)):  # fmt: skip
            if x.size != len(names) and not (optional and x.size == 0):
                raise LogError(
                    path, what, f"{topic} message {k}: {x.size} values for {len(names)} joints", k
                )
    return stamps, recorded, items


@dataclasses.dataclass
class _Joint:
    """One joint's samples on the topic: message indices and values (NaN where absent)."""

    index: list
    pos: list
    vel: list
    eff: list
    has_vel: list


def _per_joint(items) -> dict[str, _Joint]:
    """``{joint: _Joint}`` in order of first appearance."""
    out: dict[str, _Joint] = {}
    nan = float("nan")
    for k, (names, pos, vel, eff) in enumerate(items):
        for i, nm in enumerate(names):
            j = out.setdefault(nm, _Joint([], [], [], [], []))
            j.index.append(k)
            j.pos.append(pos[i])
            j.vel.append(vel[i] if vel.size else nan)
            j.eff.append(eff[i] if eff.size else nan)
            j.has_vel.append(bool(vel.size))
    return out


def _missing_effort(items, path, topic, nm) -> None:
    """A LogError naming ``tau_<joint>`` when a message carries the joint without effort."""
    for k, (names, _, _, eff) in enumerate(items):
        if nm in names and eff.size == 0:
            raise LogError(
                path,
                f"tau_{nm}",
                f"{topic} message {k} has no effort for joint {nm!r} (JointState.effort empty); "
                "the joint torques are required (read only the joints you identify: joints=...)",
                k,
            )


def _select(per: dict, joints, path, topic, notes) -> list[str]:
    """The joints read: all on the topic, or those of ``joints`` it has (the others noted)."""
    if joints is None:
        return list(per)
    if isinstance(joints, str):
        raise BagOptionError(path, "joints", f"expected a sequence of names, got {joints!r}")
    wanted = set(joints)
    names = [nm for nm in per if nm in wanted]
    if not names:
        raise BagOptionError(
            path, "joints", f"none of {', '.join(map(repr, joints))} is on {topic} (its joints: "
            f"{', '.join(per)})",
        )  # fmt: skip
    other = [nm for nm in per if nm not in wanted]
    if other:
        notes.append(f"{topic}: joints not in the model, ignored: {', '.join(other)}")
    return names


def _interp(src_ns, values, dst_ns) -> np.ndarray:
    """``values (M, ...)`` at times ``src_ns`` linearly at ``dst_ns`` (int64 ns; exact at nodes)."""
    x = (np.asarray(dst_ns) - dst_ns[0]).astype(np.float64)
    xp = (np.asarray(src_ns) - dst_ns[0]).astype(np.float64)
    flat = np.asarray(values, np.float64).reshape(len(xp), -1)
    out = np.stack([np.interp(x, xp, flat[:, c]) for c in range(flat.shape[1])], axis=1)
    same = np.searchsorted(xp, x)
    hit = (same < len(xp)) & (xp[np.minimum(same, len(xp) - 1)] == x)
    out[hit] = flat[same[hit]]
    return out.reshape((len(x),) + np.shape(values)[1:])


def _sorted_series(times, path, what):
    """The order that sorts ``times``; a LogError for two samples at one time."""
    order = np.argsort(times, kind="stable")
    st = times[order]
    dup = np.flatnonzero(np.diff(st) == 0)
    if dup.size:
        raise LogError(
            path, "t", f"{what}: two samples at the same time {int(st[dup[0]])} ns", int(dup[0])
        )
    return order


def _joint_arrays(reader, path, topic, joints, notes):
    """``(t_ns, names, q, tau, dq or None)`` on the merged time line of the joint topic."""
    stamps, recorded, items = _joint_messages(reader, path, topic)
    times = _times(stamps, recorded, topic, notes)
    per = _per_joint(items)
    names = _select(per, joints, path, topic, notes)
    series = {}
    for nm in names:
        j = per[nm]
        eff = np.asarray(j.eff)
        if np.isnan(eff).any():
            _missing_effort(items, path, topic, nm)
        tj = times[np.asarray(j.index)]
        o = _sorted_series(tj, path, f"{topic}, joint {nm!r}")
        series[nm] = (tj[o], np.stack([np.asarray(x)[o] for x in (j.pos, j.vel, eff)], axis=1))
    ref = max(names, key=lambda nm: len(series[nm][0]))  # the first of the most published
    line = series[ref][0]
    keep = np.ones(line.shape, bool)
    moved = [nm for nm in names if not np.array_equal(series[nm][0], line)]
    for nm in moved:
        tj = series[nm][0]
        keep &= (line >= tj[0]) & (line <= tj[-1])
    if moved:
        notes.append(
            f"{topic}: {', '.join(moved)} published at other instants than {ref}: interpolated "
            f"onto {ref}'s {line.size} samples" + _cut_text(keep)
        )
    line = line[keep]
    cols = [_interp(series[nm][0], series[nm][1], line) if nm in moved
            else series[nm][1][keep] for nm in names]  # fmt: skip
    block = np.stack(cols, axis=1)  # (N, n, [q, dq, tau])
    dq = block[:, :, 1]
    vel_missing = [nm for nm in names if not all(per[nm].has_vel)]
    if vel_missing:
        notes.append(
            f"{topic}: no velocity for {', '.join(vel_missing)}: dq is not read (prepare_log "
            "differentiates q)"
        )
        dq = None
    return line, names, block[:, :, 0], block[:, :, 2], dq


def _cut_text(keep) -> str:
    cut = int(np.count_nonzero(~keep))
    return f", {cut} samples outside their span left out" if cut else ""


def _base_topic(reader, path, base_topic):
    """The base-pose topic: ``base_topic``, the only Odometry one (``"auto"``), or None."""
    if base_topic is None:
        return None
    candidates = _topics_of(reader, BASE_TYPES)
    if base_topic == "auto":
        odom = _topics_of(reader, (ODOMETRY,))
        if len(odom) > 1:
            raise BagOptionError(
                path, "base_topic", f"several nav_msgs/Odometry topics ({', '.join(odom)}); "
                "choose one, or None for a fixed-base log",
            )  # fmt: skip
        return odom[0] if odom else None
    if base_topic not in candidates:
        raise BagOptionError(
            path, "base_topic", f"{base_topic!r} is no Odometry, PoseStamped or TFMessage topic "
            f"of the bag (those it has: {', '.join(candidates) or 'none'})",
        )  # fmt: skip
    return base_topic


def _vec(v) -> list[float]:
    return [float(v.x), float(v.y), float(v.z)]


def _wxyz(o) -> list[float]:
    """A ``geometry_msgs/Quaternion`` (fields x, y, z, w) as ``[w, x, y, z]``."""
    return [float(o.w), float(o.x), float(o.y), float(o.z)]


def _tf_pick(msg):
    for tr in msg.transforms:
        pose = _vec(tr.transform.translation) + _wxyz(tr.transform.rotation)
        yield _stamp_ns(tr.header.stamp), (str(tr.header.frame_id), str(tr.child_frame_id), pose)


def _pose_pick(msg):
    pose = msg.pose.pose if hasattr(msg, "child_frame_id") else msg.pose  # Odometry: pose.pose
    child = str(getattr(msg, "child_frame_id", "")) or "the pose"
    yield _stamp_ns(msg.header.stamp), (str(msg.header.frame_id), child, _vec(pose.position)
                                        + _wxyz(pose.orientation))  # fmt: skip


def _base_pose(reader, path, topic, base_frame, notes):
    """``(times ns, (M, 7) [p; w x y z])`` of the base pose on ``topic``."""
    msgtype = reader.topics[topic].msgtype
    is_tf = msgtype == TF_MESSAGE
    if base_frame is not None and not is_tf:
        raise BagOptionError(
            path, "base_frame", f"applies to a tf2_msgs/TFMessage base topic; {topic} is {msgtype}"
        )
    stamps, recorded, items = _read_messages(reader, topic, _tf_pick if is_tf else _pose_pick)
    if is_tf:
        children = sorted({child for _, child, _ in items})
        if base_frame is None and len(children) != 1:
            raise BagOptionError(
                path, "base_frame", f"{topic} has transforms to {', '.join(children) or 'none'}; "
                "choose the base's child frame",
            )  # fmt: skip
        frame = children[0] if base_frame is None else base_frame
        if frame not in children:
            raise BagOptionError(
                path, "base_frame", f"no transform to {frame!r} on {topic} (child frames: "
                f"{', '.join(children)})",
            )  # fmt: skip
        pick = [i for i, it in enumerate(items) if it[1] == frame]
        stamps, recorded, items = ([x[i] for i in pick] for x in (stamps, recorded, items))
    if not items:
        raise LogError(path, "base_position", f"{topic}: no messages")
    times = _times(stamps, recorded, topic, notes)
    o = _sorted_series(times, path, f"{topic} (base pose)")
    pose = np.asarray([it[2] for it in items], np.float64)[o]
    notes.append(f"base pose: {topic} ({msgtype}, {items[0][1]} in {items[0][0] or 'the world'})")
    return times[o], pose


def _wrench_topics(reader, path, wrench_topics, has_base) -> list[str]:
    found = _topics_of(reader, (WRENCH_STAMPED,))
    if isinstance(wrench_topics, str) and wrench_topics == "auto":
        return found if has_base else list[str]()
    if isinstance(wrench_topics, str):
        raise BagOptionError(
            path, "wrench_topics", f"expected 'auto' or a sequence of topics, got {wrench_topics!r}"
        )
    topics: list[str] = [str(tp) for tp in wrench_topics or ()]
    if topics and not has_base:
        raise BagOptionError(
            path, "wrench_topics", "contact wrenches belong to a floating-base log, and the bag "
            "gives no base pose (choose base_topic)",
        )  # fmt: skip
    for tp in topics:
        if tp not in found:
            raise BagOptionError(
                path, "wrench_topics", f"{tp!r} is no geometry_msgs/WrenchStamped topic of the "
                f"bag (those it has: {', '.join(found) or 'none'})",
            )  # fmt: skip
    return topics


def _wrench_pick(msg):
    w = msg.wrench
    yield _stamp_ns(msg.header.stamp), (str(msg.header.frame_id), _vec(w.torque) + _vec(w.force))


def _wrenches(reader, path, topics, notes):
    """``(frames, [(times ns, (M, 6) [n; f])])``, one contact frame per topic."""
    frames, series = [], []
    for tp in topics:
        stamps, recorded, items = _read_messages(reader, tp, _wrench_pick)
        ids = sorted({f for f, _ in items})
        if len(ids) != 1 or not ids[0]:
            raise LogError(
                path, "contact_frames", f"{tp}: the messages' header.frame_id names the contact "
                f"frame and must be one non-empty name, got {ids}",
            )  # fmt: skip
        if ids[0] in frames:
            raise LogError(path, "contact_frames", f"{tp}: frame {ids[0]!r} has two topics")
        times = _times(stamps, recorded, tp, notes)
        o = _sorted_series(times, path, f"{tp} (wrench)")
        frames.append(ids[0])
        series.append((times[o], np.asarray([w for _, w in items], np.float64)[o]))
    if frames:
        notes.append(
            "contact wrenches [torque; force] in the frames "
            + ", ".join(f"{f} ({tp})" for f, tp in zip(frames, topics, strict=True))
        )
    return frames, series


def read_bag(
    path,
    *,
    topic: str | None = None,
    joints: Sequence[str] | None = None,
    base_topic: str | None = "auto",
    base_frame: str | None = None,
    wrench_topics: str | Sequence[str] | None = "auto",
):
    """A bag's arrays for [load_log][spatialjax.identification.load_log] (which checks them).

    ``(t, {"q", "tau", "dq", "ddq"}, joint_names, floating fields, notes)``, ``t`` in s from the
    first joint sample.
    """
    path = Path(path)
    reader = _open(path)
    notes: list[str] = []
    try:
        jt = _joint_topic(reader, path, topic)
        line, names, q, tau, dq = _joint_arrays(reader, path, jt, joints, notes)
        btopic = _base_topic(reader, path, base_topic)
        if btopic is None and base_frame is not None:
            raise BagOptionError(path, "base_frame", "applies to a tf2_msgs/TFMessage base_topic")
        base = _base_pose(reader, path, btopic, base_frame, notes) if btopic else None
        wtopics = _wrench_topics(reader, path, wrench_topics, base is not None)
        frames, wseries = _wrenches(reader, path, wtopics, notes)
    finally:
        reader.close()
    keep = np.ones(line.shape, bool)
    for times, _ in ([base] if base else []) + wseries:
        keep &= (line >= times[0]) & (line <= times[-1])
    if not keep.all():
        notes.append(
            "joint samples outside the span of the base pose or the wrenches" + _cut_text(keep)
        )
    if np.count_nonzero(keep) < 2:
        raise LogError(path, "t", "the joint states, the base pose and the wrenches share fewer "
                       "than 2 instants")  # fmt: skip
    line, q, tau = line[keep], q[keep], tau[keep]
    dq = None if dq is None else dq[keep]
    floating: dict = dict.fromkeys(FLOATING_KEYS)
    if base is not None:
        pose = base[1].copy()
        pose[:, 3:] = continuous_quaternions(pose[:, 3:])
        pose = _interp(base[0], pose, line)
        floating["base_position"], floating["base_quaternion"] = pose[:, :3], pose[:, 3:]
        floating["contact_frames"] = tuple(frames)
        if frames:
            floating["contact_wrenches"] = np.stack([_interp(ts, w, line) for ts, w in wseries], 1)
    t = (line - line[0]).astype(np.float64) / 1e9
    notes.append(f"t = 0 s at {line[0] // _NS}.{line[0] % _NS:09d} s (ROS time)")
    arrays = {"q": q, "tau": tau, "dq": dq, "ddq": None}
    return t, arrays, tuple(names), floating, tuple(notes)


def still_joints(log: RobotLog, tolerance: float = STILL_RANGE) -> dict[str, float]:
    """The joints a log holds still (a gripper): ``{name: median position}`` (rad or m).

    Still: positions spanning at most ``tolerance``. Lock them with
    ``match_joints(log, model, lock=still_joints(log))``.

    Args:
      log: a [RobotLog][spatialjax.identification.RobotLog] with joint names.
      tolerance: the largest span of a still joint, rad or m (default ``1e-4``).

    Returns:
      ``{joint: value}`` in the log's column order (empty when every joint moves).

    Raises:
      ValueError: a log without joint names, or a negative ``tolerance``.

    Examples:
      >>> import numpy as np
      >>> from spatialjax.identification import RobotLog
      >>> t = np.linspace(0.0, 1.0, 5)
      >>> q = np.stack([np.sin(t), np.full(5, 0.02)], axis=1)
      >>> still_joints(RobotLog(t=t, q=q, tau=np.zeros((5, 2)), joint_names=("j1", "finger")))
      {'finger': 0.02}
    """
    if log.joint_names is None:
        raise IdentifyError("log", "needs joint_names to name its still joints")
    if not tolerance >= 0:
        raise IdentifyError("tolerance", f"expected a span >= 0 (rad or m), got {tolerance!r}")
    span = np.ptp(log.q, axis=0)
    return {nm: float(np.median(log.q[:, j])) for j, nm in enumerate(log.joint_names)
            if span[j] <= tolerance}  # fmt: skip


@dataclasses.dataclass(frozen=True)
class TopicSummary:
    """One topic of a bag (or a ``.npz``/``.csv`` log's rows) by its recording times.

    Attributes:
      name: the topic (``"samples"`` for a ``.npz``/``.csv`` log).
      msgtype: its message type (``sensor_msgs/msg/JointState``, ...; the
        file format for a ``.npz``/``.csv`` log).
      count: the number of messages.
      rate: mean rate in Hz, ``(count − 1) / span`` (NaN under 2 messages or a zero span).
      median_gap: the median interval between consecutive messages, s (NaN under 2).
      max_gap: the longest such interval, s (NaN under 2).
    """

    name: str
    msgtype: str
    count: int
    rate: float
    median_gap: float
    max_gap: float

    @classmethod
    def from_times(cls, name: str, msgtype: str, times_s) -> TopicSummary:
        """The summary of messages at ``times_s`` (s, any order)."""
        t = np.sort(np.asarray(times_s, np.float64))
        nan = float("nan")
        if t.size < 2:
            return cls(name, msgtype, int(t.size), nan, nan, nan)
        d = np.diff(t)
        span = float(t[-1] - t[0])
        rate = (t.size - 1) / span if span > 0 else nan
        return cls(name, msgtype, int(t.size), rate, float(np.median(d)), float(d.max()))


@dataclasses.dataclass(frozen=True)
class LogInventory:
    """What a log holds, before one fits it (see
    [describe_log][spatialjax.identification.describe_log]).

    Attributes:
      source: the path.
      kind: ``"ROS 1 bag"``, ``"ROS 2 bag"``, ``".npz log"`` or ``".csv log"``.
      duration: s, from the first to the last message (sample).
      topics: one [TopicSummary][spatialjax.identification.TopicSummary] per topic, by name.
      joint_topic: the JointState topic a bag's joints are read from (None
        when there is none, or for a ``.npz``/``.csv`` log).
      joint_names: the joints on it in order of first appearance (a
        ``.npz``/``.csv`` log's columns; empty when unnamed).
    """

    source: str
    kind: str
    duration: float
    topics: tuple[TopicSummary, ...]
    joint_topic: str | None
    joint_names: tuple[str, ...]

    def lines(self, model_joints: Sequence[str] | None = None) -> list[str]:
        """The inventory as text lines (with ``model_joints``, the joints against the model's)."""
        out = [f"{self.source}: {self.kind}, {self.duration:.6g} s, {len(self.topics)} topic(s)"]
        width = max([len(tp.name) for tp in self.topics] + [5])
        twidth = max([len(tp.msgtype) for tp in self.topics] + [4])
        out.append(f"  {'topic':<{width}}  {'type':<{twidth}}  messages   rate Hz  median gap   "
                   "max gap")  # fmt: skip
        for tp in self.topics:
            out.append(
                f"  {tp.name:<{width}}  {tp.msgtype:<{twidth}}  {tp.count:>8}  "
                f"{(f'{tp.rate:.5g}' if np.isfinite(tp.rate) else '-'):>8}  "
                f"{_seconds(tp.median_gap):>10}  {_seconds(tp.max_gap):>8}"
            )
        where = f" on {self.joint_topic}" if self.joint_topic else ""
        out.append(f"joints{where} ({len(self.joint_names)}): {', '.join(self.joint_names) or '-'}")
        if model_joints is not None:
            log, model = set(self.joint_names), list(model_joints)
            both = [j for j in model if j in log]
            only_log = [j for j in self.joint_names if j not in set(model)]
            only_model = [j for j in model if j not in log]
            groups = (
                ("in the log and the model", both),
                ("only in the log (ignored)", only_log),
                ("only in the model (locked at 0 unless --lock)", only_model),
            )
            for what, names in groups:
                out.append(f"  {what} ({len(names)}): {', '.join(names) or '-'}")
        return out


def _seconds(x: float) -> str:
    if not np.isfinite(x):
        return "-"
    return f"{x * 1e3:.4g} ms" if x < 1 else f"{x:.4g} s"


def describe_log(path, *, topic: str | None = None) -> LogInventory:
    """What a robot log holds: a bag's topics with message counts, rates and gaps, and its joints.

    A bag is not converted; ``.npz``/``.csv`` logs are read by
    [load_log][spatialjax.identification.load_log].

    Args:
      path: a ROS bag (``.bag``, ``.mcap``, ``.db3``, a folder with
        ``metadata.yaml``) or a ``.npz``/``.csv`` log.
      topic: a bag's JointState topic (default: as ``load_log`` finds it).

    Returns:
      [LogInventory][spatialjax.identification.LogInventory]; ``.lines(model_joints)``
      prints it (what ``spatialjax info LOG --model MODEL`` shows).

    Raises:
      FileNotFoundError, LogError, ImportError: as ``load_log``; a bag
        without a JointState topic is described (``joint_topic`` None) unless
        ``topic`` is given.

    Examples:
      >>> import numpy as np, tempfile, os
      >>> from spatialjax.identification import RobotLog
      >>> t = np.arange(5) * 0.01
      >>> log = RobotLog(t=t, q=np.zeros((5, 1)), tau=np.zeros((5, 1)), joint_names=("j1",))
      >>> path = log.save(os.path.join(tempfile.mkdtemp(), "log.npz"))
      >>> inv = describe_log(path)
      >>> inv.joint_names, inv.topics[0].count, round(inv.topics[0].rate, 6)
      (('j1',), 5, 100.0)
    """
    from .robot_log import load_log

    path = Path(path)
    if not is_bag(path):
        log = load_log(path)
        kind = f"{path.suffix.lower()} log"
        samples = TopicSummary.from_times("samples", path.suffix.lower()[1:], log.t)
        cols = tuple(log.joint_names or ())
        return LogInventory(str(path), kind, float(log.t[-1] - log.t[0]), (samples,), None, cols)
    reader = _open(path)
    try:
        times: dict[str, list[int]] = {name: [] for name in reader.topics}
        for con, rec, _ in reader.messages():
            times[con.topic].append(rec)
        topics = tuple(
            TopicSummary.from_times(name, info.msgtype or "?", np.asarray(times[name]) / 1e9)
            for name, info in sorted(reader.topics.items())
        )
        jt = None
        if topic is not None or _topics_of(reader, (JOINT_STATE,)):
            try:
                jt = _joint_topic(reader, path, topic)
            except BagOptionError:
                if topic is not None:
                    raise
        names: dict[str, None] = {}
        if jt is not None:
            for _, _, items in [_read_messages(reader, jt, lambda m: [(0, list(m.name))])]:
                for item in items:
                    names.update(dict.fromkeys(str(n) for n in item))
        kind = "ROS 2 bag" if reader.is2 else "ROS 1 bag"
        every = [x for v in times.values() for x in v]
        duration = (max(every) - min(every)) / 1e9 if every else 0.0
    finally:
        reader.close()
    return LogInventory(str(path), kind, float(duration), topics, jt, tuple(names))
