"""The library behind ``spatialjax check``: check one model file, optionally write a fixed copy.

Invalid inertials are replaced by [`spatialjax.nearest_consistent`][spatialjax.nearest_consistent],
every other byte unchanged. Docs page ``model-files.md#verdicts``.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np

from .._errors import ArgumentError
from .._util import bucket, write_atomic, x64
from .verdict import DEFAULT_LENGTH_SCALE, DEFAULT_TOL


def _fix_eps(tol: float) -> float:
    """``eps`` for nearest_consistent: ``10 tol`` keeps fixed bodies 5× clear of the tolerance."""
    return max(10.0 * tol, 1000 * float(np.finfo(np.float64).eps))


@functools.cache
def _jitted():
    """``params(m, c, I_c)`` and ``fix(params, eps)``, jitted once per padded batch size."""
    import jax

    from .._inertia import RigidBodyInertia
    from .._projection import nearest_consistent

    def params(m, c, I_c):
        return RigidBodyInertia.from_mass_com_inertia(m, c, I_c).params

    def fix(p, eps):
        old = RigidBodyInertia(p)
        new = nearest_consistent(old, eps)
        return new.params, new.com, new.inertia_com(), new.pseudo_inertia(), old.pseudo_inertia()

    return jax.jit(params), jax.jit(fix)


def _pad(x, n_pad, fill):
    out = np.broadcast_to(np.asarray(fill, dtype=np.float64), (n_pad,) + x.shape[1:]).copy()
    out[: x.shape[0]] = x
    return out


def _inertia(model):
    """float64 ``RigidBodyInertia`` of the model's links (jitted on a padded batch)."""
    import jax.numpy as jnp

    from .._inertia import RigidBodyInertia

    n = len(model.links)
    b = bucket(n)
    m = np.array([link.mass for link in model.links]).reshape(n)
    c = np.array([link.com for link in model.links]).reshape(n, 3)
    I_c = np.array([link.inertia_com for link in model.links]).reshape(n, 3, 3)
    p = _jitted()[0](_pad(m, b, 0.0), _pad(c, b, 0.0), _pad(I_c, b, 0.0))
    return RigidBodyInertia(jnp.asarray(np.asarray(p)[:n]))


def check_file(
    path,
    *,
    tol: float = DEFAULT_TOL,
    length_scale: float = DEFAULT_LENGTH_SCALE,
    fix_to=None,
    in_place: bool = False,
) -> dict:
    """Check one file; optionally write the fixed file. Returns the JSON-able report.

    Computed in float64 whatever JAX's global x64 setting.

    Args:
      path: a URDF, SDFormat or MJCF file (format from the root element).
      tol: relative tolerance of the verdicts (docs page ``model-files.md#verdicts``).
      length_scale: size below which a body counts as a point, in the file's unit.
      fix_to: write a copy with every invalid inertial replaced here (written
        even when nothing needed fixing); not ``path`` itself: use ``in_place``.
      in_place: rewrite ``path`` itself, only if something was fixed.

    Returns:
      The report: ``path``, ``format``, ``n_links``, ``n_invalid``,
      ``n_degenerate``, ``n_massless``, ``notes``, ``links`` (one dict per
      link) and, when a fix was asked for, ``fix`` with ``output``,
      ``written``, ``replaced_existing``, the moved ``links`` and ``n_invalid_after``.

    Raises:
      ModelFileError: the file is malformed.
      ValueError: ``fix_to`` is the input file, or both ``fix_to`` and ``in_place``.
    """
    if in_place and fix_to is not None:
        raise ArgumentError("fix_to", "give fix_to (a copy) or in_place=True, not both")
    if fix_to is not None and _same_file(path, fix_to):
        raise ArgumentError(
            "fix_to",
            f"{str(fix_to)!r} is the input file itself; pass in_place=True to rewrite the input",
        )
    with x64():
        return _check_file(
            path,
            tol=tol,
            length_scale=length_scale,
            fix_to=path if in_place else fix_to,
            in_place=in_place,
        )


def _same_file(a, b) -> bool:
    """Whether two paths name the same existing file (symlinks and ``..`` resolved)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _check_file(path, *, tol, length_scale, fix_to, in_place) -> dict:
    from ..io import read_model
    from ..io._xml import apply_edits
    from .verdict import classify

    model = read_model(path)
    inertia = _inertia(model)
    verdicts = classify(inertia, tol=tol, length_scale=length_scale) if model.links else []
    links = []
    for link, v in zip(model.links, verdicts, strict=True):
        d = v.as_dict()
        links.append({"name": link.name, "line": link.line, "status": link.status, **d})
    report = {
        "path": str(path),
        "format": model.format,
        "n_links": len(links),
        "n_invalid": sum(not v.valid for v in verdicts),
        "n_degenerate": sum(v.degenerate for v in verdicts),
        "n_massless": sum(v.code == "massless" for v in verdicts),
        "notes": list(model.notes),
        "links": links,
    }
    if fix_to is None:
        return report

    bad = [i for i, v in enumerate(verdicts) if not v.valid]
    eps = _fix_eps(tol)
    edits, moved = [], []
    if bad:
        old = np.asarray(inertia.params)[np.array(bad)]
        unit = [1.0, 0, 0, 0, 1.0, 0, 1.0, 0, 0, 1.0]  # padding: a consistent body
        res = _jitted()[1](_pad(old, bucket(len(bad)), unit), eps)
        p_new, c_new, I_new, J_new, J_old = (np.asarray(x)[: len(bad)] for x in res)
        m_new = p_new[:, 0]
        for k, i in enumerate(bad):
            link = model.links[i]
            if link.rewrite is None:  # pragma: no cover - only readable inertials are invalid
                continue
            edits += link.rewrite(float(m_new[k]), c_new[k], I_new[k])
            dI = np.linalg.norm(I_new[k] - link.inertia_com)
            moved.append(
                {
                    "name": link.name,
                    "mass": [link.mass, float(m_new[k])],
                    "com_moved": float(np.linalg.norm(c_new[k] - link.com)),
                    "inertia_com_moved": float(dI),
                    "inertia_com_moved_relative": float(
                        dI / max(np.linalg.norm(link.inertia_com), np.finfo(float).tiny)
                    ),
                    "pseudo_inertia_moved": float(np.linalg.norm(J_new[k] - J_old[k])),
                }
            )
    out = apply_edits(model.source, edits)
    fix_to = Path(fix_to)
    existed = fix_to.exists()
    written = not in_place or bool(edits)
    if written:
        write_atomic(fix_to, out)
    # re-read the copy: every link must now be valid
    fixed = read_model(fix_to)
    after = classify(_inertia(fixed), tol=tol, length_scale=length_scale) if fixed.links else []
    by_name = {link.name: v for link, v in zip(fixed.links, after, strict=True)}
    for entry in moved:
        v = by_name[entry["name"]]
        entry["verdict_after"] = v.code
        entry["valid_after"] = v.valid
    report["fix"] = {
        "output": str(fix_to),
        "in_place": in_place,
        "written": written,
        "replaced_existing": existed and written and not in_place,
        "method": "nearest_consistent(reference='com'): pseudo-inertia eigenvalues clipped",
        "eps": eps,
        "links": moved,
        "n_invalid_after": sum(not v.valid for v in after),
    }
    return report
