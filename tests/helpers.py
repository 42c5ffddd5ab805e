"""Shared test helpers: batch shapes, independent NumPy references, the guide's report schema,
the example-robot-data cases and the conversions to Pinocchio's and MuJoCo's conventions.

No spatialjax code: the schema is read from docs/identification-report.md itself; the robot helpers
take a model and read only its sizes. Test modules import from here, never from each other.
"""

import contextlib
import importlib.metadata
import re
from pathlib import Path

import numpy as np
import pytest

#: Batch shapes every batched property runs over (jaxlie's habit: none, one, and a
#: mixed shape with unit axes that must broadcast).
BATCH_SHAPES = [(), (1,), (3, 1, 2, 1)]

#: The repository's root and the test fixtures (tests/fixtures), for test modules in any folder.
ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def np_skew(v):
    """``np_skew(v) @ u == np.cross(v, u)`` for ``(..., 3)`` vectors."""
    v = np.asarray(v)
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    o = np.zeros_like(x)
    return np.stack(
        [np.stack([o, -z, y], -1), np.stack([z, o, -x], -1), np.stack([-y, x, o], -1)], -2
    )


def np_quat_to_matrix(q):
    """Active rotation of a wxyz quaternion (normalised), textbook closed form."""
    q = np.asarray(q, np.float64)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = (q[..., i] for i in range(4))
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def random_rotations(rng, shape):
    """Active rotations from normalised normal quaternions (uniform on SO(3)).

    ``shape`` is an int or a tuple.
    """
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return np_quat_to_matrix(rng.normal(size=shape + (4,)))


def random_inertia_params(rng, n):
    """``(n, 10)`` physically consistent ``[m, h, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]`` about the origin.

    Mass in [0.5, 2], CoM ~0.1 from the origin, principal moments ``s_j + s_k``
    from positive second moments ``s`` (triangle inequality strict), random
    axes, moved to the frame origin by the parallel-axis theorem.
    """
    m = rng.uniform(0.5, 2.0, n)
    c = 0.1 * rng.standard_normal((n, 3))
    s = rng.uniform(0.01, 0.1, (n, 3)) * m[:, None]
    lam = s.sum(-1, keepdims=True) - s
    R = random_rotations(rng, n)
    I_c = np.einsum("nij,nj,nkj->nik", R, lam, R)
    I_o = I_c + m[:, None, None] * (np.einsum("ni,ni->n", c, c)[:, None, None] * np.eye(3))
    I_o = I_o - m[:, None, None] * np.einsum("ni,nj->nij", c, c)
    i6 = I_o[:, [0, 0, 1, 0, 1, 2], [0, 1, 1, 2, 2, 2]]
    return np.concatenate([m[:, None], m[:, None] * c, i6], axis=-1)


@contextlib.contextmanager
def raises_argument(cls, argument: str, match: str | None = None):
    """``pytest.raises(cls)`` that also requires the error's ``.argument`` to be ``argument``.

    ``cls`` is ``spatialjax.ArgumentError`` or ``spatialjax.ArgumentTypeError``; ``match`` (a
    regex searched in the message) only where the wording itself is what a test checks.
    Yields pytest's ``ExceptionInfo``.
    """
    with pytest.raises(cls, match=match) as info:
        yield info
    got = getattr(info.value, "argument", None)
    assert got == argument, f"error is about {got!r}, expected {argument!r}: {info.value}"


@contextlib.contextmanager
def raises_error(cls, match: str | None = None, **attributes):
    """``pytest.raises(cls)`` that also requires the error's attributes to equal ``attributes``.

    For the errors that say where, not only what: ``ModelFileError`` (``path``, ``line``,
    ``link``, ``field``), ``LogError`` (``column``, ``sample``), ``TransmissionError`` (``row``,
    ``column``). ``match`` only where the wording itself is what a test checks.
    Yields pytest's ``ExceptionInfo``.
    """
    with pytest.raises(cls, match=match) as info:
        yield info
    got = {k: getattr(info.value, k, None) for k in attributes}
    assert got == attributes, f"error has {got}, expected {attributes}: {info.value}"


def robots_dir() -> Path | None:
    """example-robot-data's ``robots`` folder, found through the package's metadata."""
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in dist.files or []:
        if str(f).endswith("example-robot-data/package.xml"):
            d = Path(dist.locate_file(f)).parent / "robots"
            if d.is_dir():
                return d
    return None


def report_schema_in_the_guide() -> dict[str, set[str]]:
    """``{path: keys}`` of the tables of docs/identification-report.md, one per ``##`` section."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "identification-report.md").read_text(
        encoding="utf-8"
    )
    out = {}
    for block in text.split("\n## ")[1:]:
        heading, _, body = block.partition("\n")
        paths = re.findall(r"`([^`]+)`", heading) or [""]
        keys = set(re.findall(r"^\| `(\w+)` \|", body, re.M))
        for p in paths:
            out[p] = keys
    return out


#: Keys ``spatialjax identify`` adds to the library's report.
REPORT_COMMAND_KEYS = {
    "model", "model_format", "log", "validation_logs", "locked_joints", "options", "output",
}  # fmt: skip


def _keys_at(report, path: str) -> set[str] | None:
    """The keys of the objects at ``path`` (``[]``: every list element, ``<x>``: every value)."""
    nodes = [report]
    for seg in [s for s in path.split(".") if s]:
        name, many = seg.removesuffix("[]"), seg.endswith("[]")
        if name.startswith("<"):
            nodes = [v for n in nodes for v in n.values() if v is not None]
        else:
            nodes = [n[name] for n in nodes if n.get(name) is not None]
        if many:
            nodes = [v for n in nodes for v in n]
    return set().union(*(n.keys() for n in nodes)) if nodes else None


def check_report_against_the_guide(report) -> None:
    """Every documented object of ``report`` (a typed report, or its JSON form) has exactly the
    documented keys (tests reuse it)."""
    if hasattr(report, "to_dict"):
        report = report.to_dict()
    for path, keys in report_schema_in_the_guide().items():
        actual = _keys_at(report, path)
        if actual is None or path == "output":  # absent (no repairs, no --out) or the writer's
            continue
        if path == "":
            keys = keys - REPORT_COMMAND_KEYS if not REPORT_COMMAND_KEYS & actual else keys
        assert actual == keys, (
            f"`{path}`: in the report {sorted(actual)}, documented {sorted(keys)}"
        )


def pinocchio_log(
    urdf: str,
    locked=(),
    *,
    seed: int = 0,
    rate: float = 1000.0,
    duration: float = 20.0,
    encoder_bits: int = 20,
    off: tuple[float, float] = (0.2, 0.3),
    torque_noise: float = 0.005,
    friction: tuple[float, float] = (0.01, 0.03),
    base_frequency: float = 0.1,
    harmonics: int = 5,
):
    """A joint log of a robot simulated by Pinocchio, as a controller records it.

    The truth is the URDF's links each ``off`` (a fraction, drawn in the range, of
    either sign) off: mass × (1 ± off), centre of mass moved by ``off`` × the link's
    radius of gyration (at least 2 cm) in a random direction (so a link whose
    centre of mass the URDF puts on its joint axis has it off the axis, as real links
    do), rotational inertia about it rotated by about 0.3 rad and scaled by
    (1 ± off)(1 ± off). The trajectory is a finite Fourier series per joint
    (``harmonics`` of ``base_frequency``, random phases and 1/h amplitudes) using 80 %
    of each joint's range (clipped to ±π) and of its speed limit. Torques are
    ``pin.rnea`` of the truth plus viscous and Coulomb friction (``F_v``, ``F_c``
    drawn in ``friction`` × the joint's effort limit, per rad/s for ``F_v`` over the
    speed limit) and Gaussian noise of ``torque_noise`` × the effort limit; ``q`` is
    quantised to ``2π / 2**encoder_bits``; no velocity column.

    Returns:
      ``(t, q, tau, joint_names)`` as NumPy arrays and a tuple of names, in
      Pinocchio's joint order (the model reduced by ``locked``, locked at 0).
    """
    import pinocchio as pin

    full = pin.buildModelFromUrdf(urdf)
    locked = tuple(locked)
    pm = (
        pin.buildReducedModel(full, [full.getJointId(n) for n in locked], pin.neutral(full))
        if locked
        else full
    )
    names = tuple(pm.names[i] for i in range(1, pm.njoints))
    if pm.nq != pm.nv:
        raise ValueError(f"{urdf}: joints with nq != nv are not simulated here ({names})")
    rng = np.random.default_rng(seed)
    truth = pm.copy()
    for i in range(1, pm.njoints):
        inertia = pm.inertias[i]
        m = inertia.mass
        if m <= 0:
            continue

        def factor():
            return 1 + rng.choice([-1.0, 1.0]) * rng.uniform(*off)

        f_m = factor()
        I_c = np.asarray(inertia.inertia)
        gyration = np.sqrt(np.trace(I_c) / (2 * m))
        d = rng.normal(size=3)
        d *= rng.uniform(*off) * max(gyration, 0.02) / np.linalg.norm(d)
        R = pin.exp3(rng.normal(size=3) * 0.3)
        truth.inertias[i] = pin.Inertia(m * f_m, inertia.lever + d, factor() * f_m * R @ I_c @ R.T)
    n = pm.nv
    t = np.arange(int(round(duration * rate))) / rate
    w = 2 * np.pi * base_frequency * np.arange(1, harmonics + 1)
    phase = rng.uniform(0, 2 * np.pi, (n, harmonics))
    amp = rng.normal(size=(n, harmonics)) / np.arange(1, harmonics + 1)
    arg = w[None, :, None] * t[None, None, :] + phase[:, :, None]
    shape = np.einsum("jh,jht->tj", amp, np.sin(arg))
    dshape = np.einsum("jh,jht->tj", amp * w, np.cos(arg))
    ddshape = np.einsum("jh,jht->tj", -amp * w**2, np.sin(arg))
    lo = np.maximum(pm.lowerPositionLimit, -np.pi)
    hi = np.minimum(pm.upperPositionLimit, np.pi)
    s = np.minimum(
        0.8 * (hi - lo) / 2 / np.max(np.abs(shape), axis=0),
        0.8 * pm.velocityLimit / np.max(np.abs(dshape), axis=0),
    )
    q, dq, ddq = (lo + hi) / 2 + s * shape, s * dshape, s * ddshape
    data = truth.createData()
    tau = np.array([pin.rnea(truth, data, q[k], dq[k], ddq[k]) for k in range(t.size)])
    effort = np.asarray(pm.effortLimit)
    F_v = rng.uniform(*friction, n) * effort / pm.velocityLimit
    F_c = rng.uniform(*friction, n) * effort
    tau = tau + F_v * dq + F_c * np.sign(dq) + rng.normal(size=tau.shape) * torque_noise * effort
    step = 2 * np.pi / 2**encoder_bits
    return t, np.round(q / step) * step, tau, names


# ------------------------------------------------------------------ robots (Pinocchio, MuJoCo)
#: example-robot-data's ``robots`` folder (None where the package is not installed).
ROBOTS = robots_dir()

#: Panda finger joints locked at these positions (a reduced model in both libraries).
PANDA_LOCKED = {"panda_finger_joint1": 0.01, "panda_finger_joint2": 0.03}
#: (id, URDF under ``ROBOTS``, floating base, locked joints) of the robots compared with
#: Pinocchio.
CASES = [
    ("panda", "panda_description/urdf/panda.urdf", False, PANDA_LOCKED),
    ("ur5", "ur_description/urdf/ur5_robot.urdf", False, None),
    ("double_pendulum_continuous", "double_pendulum_description/urdf/"
     "double_pendulum_continuous.urdf", False, None),
    ("solo12", "solo_description/robots/solo12.urdf", True, None),
    ("talos_reduced", "talos_data/robots/talos_reduced.urdf", True, None),
]  # fmt: skip


def pin_model(path, floating, locked):
    """Pinocchio's model of the URDF ``path`` (a free flyer if ``floating``), with the joints
    of ``locked`` (``{name: position}``) locked. Skips the test without Pinocchio."""
    import pytest

    pin = pytest.importorskip("pinocchio")
    pm = (
        pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
        if floating
        else pin.buildModelFromUrdf(path)
    )
    if locked:
        q0 = pin.neutral(pm)
        for name, value in locked.items():
            q0[pm.idx_qs[pm.getJointId(name)]] = value
        pm = pin.buildReducedModel(pm, [pm.getJointId(n) for n in locked], q0)
    return pm


def random_states(model, n, rng, dtype=np.float64):
    """``q`` in spatialjax order (angles in (-π, π), unit wxyz quaternion), ``v``, ``a``.

    A generator of three ``(n, nq)``, ``(n, nv)``, ``(n, nv)`` JAX arrays of ``dtype``.
    """
    import jax.numpy as jnp

    q = rng.uniform(-np.pi, np.pi, (n, model.nq))
    if model.floating_base:
        q[:, :3] = rng.uniform(-1, 1, (n, 3))
        quat = rng.standard_normal((n, 4))
        q[:, 3:7] = quat / np.linalg.norm(quat, axis=1, keepdims=True)
    v = rng.standard_normal((n, model.nv))
    a = rng.standard_normal((n, model.nv))
    return (jnp.asarray(x, dtype) for x in (q, v, a))


def tree_urdf(tmp_path):
    """A free-floating branching tree: revolute, prismatic and fixed joints, tilted axes."""
    links = "".join(
        f'<link name="{n}"><inertial><mass value="{1 + k}"/><origin xyz="0.1 {k / 10} 0"/>'
        f'<inertia ixx="0.1" ixy="0.01" ixz="0" iyy="0.2" iyz="0" izz="0.3"/></inertial></link>'
        for k, n in enumerate(["base", "a1", "a2", "b1", "b2"])
    )
    joints = "".join(
        f'<joint name="{j}" type="{t}"><parent link="{p}"/><child link="{c}"/>'
        f'<origin xyz="0.2 0.1 0" rpy="0.1 0.2 0.3"/><axis xyz="0 1 1"/>'
        '<limit lower="-3" upper="3" effort="1" velocity="1"/></joint>'
        for j, t, p, c in [("ja1", "revolute", "base", "a1"), ("ja2", "prismatic", "a1", "a2"),
                           ("jb1", "revolute", "base", "b1"), ("jb2", "fixed", "b1", "b2")]
    )  # fmt: skip
    path = tmp_path / "tree.urdf"
    path.write_text(f'<robot name="tree">{links}{joints}</robot>')
    return path


def swap_pin_rows(J):
    """Pinocchio ``[v; ω]`` rows -> ``[ω; v]`` (spatialjax's order)."""
    return np.concatenate([J[..., 3:, :], J[..., :3, :]], axis=-2)


def rel_error(x, ref):
    """Largest absolute difference, relative to the reference's largest entry (at least 1)."""
    return np.abs(x - ref).max() / max(1.0, np.abs(ref).max())


def quat_matrix(q):
    """Rotation matrix of the quaternion ``q`` (``[w, x, y, z]``, normalised here)."""
    w, x, y, z = q / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def qvel_to_v(model, q):
    """``T`` with ``v = T qvel`` for one state: MuJoCo's free-joint ``qvel = [ṗ (world);
    ω (body)]`` to spatialjax's ``v = [ω; Rᵀṗ]`` (block ``[[0, I], [Rᵀ, 0]]``), identity
    for the other joints."""
    T = np.eye(model.nv)
    if model.floating_base:
        R = quat_matrix(q[3:7])
        T[:6, :6] = 0.0
        T[0:3, 3:6] = np.eye(3)
        T[3:6, 0:3] = R.T
    return T


def all_equations(jaxpr):
    """Every equation of ``jaxpr`` and of the jaxprs its equations hold as parameters
    (``jit``, ``scan``, ``while``, ``cond``, custom derivatives), depth first."""
    from jax.extend import core as jcore

    for e in jaxpr.eqns:
        yield e
        for value in e.params.values():
            for sub in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(sub, jcore.ClosedJaxpr):
                    yield from all_equations(sub.jaxpr)
                elif isinstance(sub, jcore.Jaxpr):
                    yield from all_equations(sub)
