"""Shared test helpers: batch shapes, independent NumPy references, the guide's report schema.

No spatialjax code: the schema is read from docs/identification.md itself.
"""

import importlib.metadata
import re
from pathlib import Path

import numpy as np

#: Batch shapes every batched property runs over (jaxlie's habit: none, one, and a
#: mixed shape with unit axes that must broadcast).
BATCH_SHAPES = [(), (1,), (3, 1, 2, 1)]


def np_skew(v):
    """``np_skew(v) @ u == np.cross(v, u)`` for ``(..., 3)`` vectors."""
    v = np.asarray(v)
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    o = np.zeros_like(x)
    return np.stack(
        [np.stack([o, -z, y], -1), np.stack([z, o, -x], -1), np.stack([-y, x, o], -1)], -2
    )


def random_rotations(rng, shape):
    """Active rotations from normalised normal quaternions (uniform on SO(3)).

    ``shape`` is an int or a tuple.
    """
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    q = rng.normal(size=shape + (4,))
    q /= np.linalg.norm(q, axis=-1, keepdims=True)
    w, x, y, z = (q[..., i] for i in range(4))
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


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
    """``{path: keys}`` of the tables under "The report's schema" in docs/identification.md."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "identification.md").read_text(
        encoding="utf-8"
    )
    section = text.split("### The report's schema", 1)[1].split("\n## ", 1)[0]
    out = {}
    for block in section.split("\n#### ")[1:]:
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
    """Every documented object of ``report`` has exactly the documented keys (tests reuse it)."""
    for path, keys in report_schema_in_the_guide().items():
        actual = _keys_at(report, path)
        if actual is None or path == "output":  # absent (no repairs, no --out) or the writer's
            continue
        if path == "":
            keys = keys - REPORT_COMMAND_KEYS if not REPORT_COMMAND_KEYS & actual else keys
        assert actual == keys, (
            f"`{path}`: in the report {sorted(actual)}, documented {sorted(keys)}"
        )
