r"""Write identified bodies back into a URDF: ``write_identified_urdf``.

A [`Model`][spatialjax.multibody.Model] body is a *composite*: the child link of
a moving joint plus every link rigidly attached to it (by ``fixed`` joints and
by joints locked at a value), their inertias moved into the body frame and
summed (the composite-body rule, Featherstone, *Rigid Body Dynamics
Algorithms*, 2008, §6.2, eq. 2.63 for the parallel-axis shift). Identification
returns one 10-vector per body, about the body frame origin in body axes
(Pinocchio order ``[m, hx, hy, hz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``). A URDF,
however, stores one ``<inertial>`` per *link*, so the identified composite
has to be split between the links it was made of. The rule:

1. The *remainder* ``π_r = π_body − Σ π_attached`` (the attached links'
   inertials as they are in the file, moved into the body frame at the
   attachment pose, locked joints at their locked value) is what the joint's
   child link must carry for the composite to come out right. If it is fully
   physically consistent (``m > 0``, ``I_c ⪰ 0``, triangle inequality:
   Wensing, Kim & Slotine, RA-L 2017;
   [`spatialjax.physical_consistency`][spatialjax.physical_consistency] in float64 with its default
   tolerance), the child link gets the remainder and the attached links keep their inertials
   (``mode = "remainder"``).
2. Otherwise the whole composite goes to the child link (expressed in that
   link's frame, which is the body frame) and every attached link's
   ``<inertial>`` is removed, so that no mass is counted twice
   (``mode = "composite"``; ``links_cleared`` lists them).
3. A body with nothing massive attached gets its identified body as is
   (``mode = "single"``).

Links fixed to the world (not part of any moving body) are never touched.
Every byte outside the rewritten ``<inertial>`` elements is kept: the values
are edited in place through the ``spatialjax check --fix`` machinery
([`spatialjax.io.read_model`][spatialjax.io.read_model]'s per-link ``rewrite``; the inertial frame's
``rpy`` is kept and the inertia written in it), a link without an
``<inertial>`` gets one inserted, and unchanged numbers keep their original
text. Loading the output with the same ``locked_joints`` (spatialjax's
``Model.from_urdf``, or Pinocchio's ``buildModelFromUrdf`` +
``buildReducedModel`` at the same joint values) gives the identified bodies
back up to float64 round-off; the writer re-reads its output and reports the
largest deviation (``max_reload_error``).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

import numpy as np

__all__ = ["write_identified_urdf"]


def _params_of(m, c, I_c) -> np.ndarray:
    """10-vector about the frame origin of mass ``m``, CoM ``c`` and ``I_c`` (float64)."""
    I_o = I_c + m * (float(c @ c) * np.eye(3) - np.outer(c, c))
    return np.array([m, *(m * c), I_o[0, 0], I_o[0, 1], I_o[1, 1], I_o[0, 2], I_o[1, 2], I_o[2, 2]])


def _mass_com_inertia(p) -> tuple[float, np.ndarray, np.ndarray]:
    """``(m, c, I_c)`` of a 10-vector with ``m ≠ 0`` (float64)."""
    m = float(p[0])
    c = np.asarray(p[1:4], dtype=np.float64) / m
    xx, xy, yy, xz, yz, zz = (float(x) for x in p[4:])
    I_o = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]])
    I_c = I_o - m * (float(c @ c) * np.eye(3) - np.outer(c, c))
    return m, c, 0.5 * (I_c + I_c.T)


_UNIT_BODY = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0)  # padding: a consistent body


@functools.cache
def _metrics_jit():
    import jax
    import jax.numpy as jnp

    from .._consistency import physical_consistency
    from .._inertia import RigidBodyInertia
    from .._metrics import geodesic_distance

    def core(P, P0):
        rep = physical_consistency(RigidBodyInertia(P))
        ok = rep.fully_consistent & (rep.min_eig_pseudo_inertia > 0)
        J0 = RigidBodyInertia(P0).pseudo_inertia()
        J = jnp.where(ok[:, None, None], RigidBodyInertia(P).pseudo_inertia(), J0)
        return rep, jnp.where(ok, geodesic_distance(J, J0), jnp.nan)

    return jax.jit(core)


def body_metrics(P, P0=None) -> dict:
    """Consistency margins of bodies ``P (k, 10)`` and their geodesic distances to ``P0``.

    [`spatialjax.physical_consistency`][spatialjax.physical_consistency] and
    [`spatialjax.geodesic_distance`][spatialjax.geodesic_distance] (Lee, Wensing & Park 2020; NaN
    where ``J`` is not positive definite) in float64, under one ``jit`` on a batch
    padded to at least 32 bodies, so that one compilation serves the command
    line's report and this module's remainder checks.

    Returns:
      NumPy arrays: ``consistent`` (k,), ``principal_moments`` (k, 3),
      ``min_eig_inertia_com``, ``triangle_margin``, ``min_eig_pseudo_inertia``,
      ``geodesic`` (k,).
    """
    from ..io._check import _x64
    from ..io._verdict import bucket

    P = np.asarray(P, np.float64).reshape(-1, 10)
    P0 = P if P0 is None else np.asarray(P0, np.float64).reshape(-1, 10)
    k = P.shape[0]
    n = max(32, bucket(k))
    pad = np.tile(np.asarray(_UNIT_BODY), (n, 1))
    A, B = pad.copy(), pad.copy()
    A[:k], B[:k] = P, P0
    with _x64():
        rep, d = _metrics_jit()(A, B)
        return {
            "consistent": np.asarray(rep.fully_consistent)[:k],
            "principal_moments": np.asarray(rep.principal_moments)[:k],
            "min_eig_inertia_com": np.asarray(rep.min_eig_inertia_com)[:k],
            "triangle_margin": np.asarray(rep.triangle_margin)[:k],
            "min_eig_pseudo_inertia": np.asarray(rep.min_eig_pseudo_inertia)[:k],
            "geodesic": np.asarray(d)[:k],
        }


def _consistent(P: np.ndarray) -> tuple[np.ndarray, list[dict]]:
    """Full physical consistency of float64 10-vectors ``P (k, 10)``, with their margins."""
    if P.shape[0] == 0:
        return np.zeros(0, bool), []
    m = body_metrics(P)
    margins = [
        {"mass": float(P[k, 0]), "min_eig_inertia_com": float(m["min_eig_inertia_com"][k]),
         "triangle_margin": float(m["triangle_margin"][k])}
        for k in range(P.shape[0])
    ]  # fmt: skip
    return m["consistent"], margins


def _line_span(data: bytes, start: int, end: int) -> tuple[int, int]:
    """Widen ``[start, end)`` to whole lines when the element sits alone on its lines."""
    ls = data.rfind(b"\n", 0, start) + 1
    le = data.find(b"\n", end)
    le = len(data) if le < 0 else le
    if data[ls:start].strip() == b"" and data[end:le].strip() == b"" and le < len(data):
        return ls, le + 1
    return start, end


def _inertial_xml(m, c, I_c) -> str:
    from ..io._common import format_number as f

    return (
        f'<inertial><origin xyz="{f(c[0])} {f(c[1])} {f(c[2])}" rpy="0 0 0"/>'
        f'<mass value="{f(m)}"/><inertia ixx="{f(I_c[0, 0])}" ixy="{f(I_c[0, 1])}" '
        f'ixz="{f(I_c[0, 2])}" iyy="{f(I_c[1, 1])}" iyz="{f(I_c[1, 2])}" '
        f'izz="{f(I_c[2, 2])}"/></inertial>'
    )


def _as_params(inertia, nb: int) -> np.ndarray:
    from .._inertia import RigidBodyInertia

    p = inertia.params if isinstance(inertia, RigidBodyInertia) else inertia
    try:
        p = np.asarray(p, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(
            "write_identified_urdf: inertia: expected a RigidBodyInertia or an (nbodies, 10) "
            f"array, got {type(inertia).__name__}"
        ) from None
    if p.shape != (nb, 10):
        raise ValueError(
            f"write_identified_urdf: inertia: expected batch shape ({nb},) (one body per model "
            f"body), i.e. parameters of shape ({nb}, 10), got {p.shape}"
        )
    bad = ~np.all(np.isfinite(p), axis=1)
    if bad.any():
        raise ValueError(
            f"write_identified_urdf: inertia: bodies {np.flatnonzero(bad).tolist()} have "
            "non-finite parameters"
        )
    return p


def write_identified_urdf(src_path, model, inertia, out_path, *, overwrite: bool = False) -> dict:
    """Write ``src_path`` to ``out_path`` with the identified bodies' ``<inertial>`` rewritten.

    See the module docstring for how a composite body is split between its
    links. Computed in float64 NumPy whatever the inputs' dtype.

    Args:
      src_path: the URDF the model was read from.
      model: the [`Model`][spatialjax.multibody.Model] read from ``src_path``
        by ``Model.from_urdf`` (with the ``locked_joints`` used for the
        identification; their values are in ``model.frame_placements``).
      inertia: identified bodies, a [`RigidBodyInertia`][spatialjax.RigidBodyInertia] of
        batch ``(model.nbodies,)`` (or an ``(nbodies, 10)`` array), each about
        its body frame origin in body axes. Every body needs a positive mass
        (a URDF inertial cannot hold a first moment without mass).
      out_path: the file to write (atomically: a temporary file renamed).
      overwrite: replace ``out_path`` if it exists. The input itself is never
        overwritten.

    Returns:
      A JSON-able report: ``source``, ``output``, ``bodies`` (one dict per
      model body: ``body``, ``joint``, ``link`` (the child link written),
      ``mode`` (``"single"``, ``"remainder"`` or ``"composite"``),
      ``links_kept``, ``links_cleared``, ``remainder_consistent``,
      ``remainder_margins``, ``note``), ``untouched`` (world-fixed links) and
      ``max_reload_error`` (largest ``|π_reloaded − π_identified|`` relative
      to the body's largest parameter, after re-reading the output).

    Raises:
      ValueError: ``src_path`` is not a URDF, ``model`` was not read from it,
        ``inertia`` has the wrong shape, non-finite values or a body with
        ``m ≤ 0``, or ``out_path`` is ``src_path``.
      FileExistsError: ``out_path`` exists and ``overwrite`` is false.
      spatialjax.io.ModelFileError: ``src_path`` is malformed.
    """
    from ..io._check import _write_atomic
    from ..io._load import read_model
    from ..io._xml import apply_edits, insert_child_edit, parse_xml
    from ..multibody._build import link_params

    fn = "write_identified_urdf"
    src = read_model(src_path)
    if src.format != "urdf":
        raise ValueError(f"{fn}: {src_path} is {src.format.upper()}, not a URDF; only URDF output")
    names = tuple(link.name for link in src.links)
    if tuple(model.frame_names) != names:
        raise ValueError(
            f"{fn}: model: its frames {list(model.frame_names)} are not the links of "
            f"{src_path} ({list(names)}); pass the Model read from this file"
        )
    nb = model.nbodies
    p_id = _as_params(inertia, nb)
    for b in range(nb):
        if not p_id[b, 0] > 0:
            raise ValueError(
                f"{fn}: inertia: body {b} ({model.body_names[b]!r}) has mass "
                f"{float(p_id[b, 0])!r}; a URDF inertial needs a positive mass"
            )
    out = Path(out_path)
    if out.exists():
        if os.path.samefile(out, src_path):
            raise ValueError(f"{fn}: out_path {str(out_path)!r} is the input file itself")
        if not overwrite:
            raise FileExistsError(
                f"{fn}: {out_path} exists; pass overwrite=True to replace it (or choose another "
                "out_path)"
            )

    data = src.source
    root = parse_xml(data, src_path)
    link_nodes = {el.attrib.get("name"): el for el in root.findall("link")}
    by_name = {link.name: link for link in src.links}
    fb = [int(b) for b in model.frame_bodies]
    FR = np.asarray(model.frame_placements.E, dtype=np.float64)
    Fp = np.asarray(model.frame_placements.r, dtype=np.float64)

    # the attached links of each body, and the remainders (checked in one batch)
    plan = []
    for b in range(nb):
        child = model.body_names[b]
        attached = [
            k
            for k, n in enumerate(names)
            if fb[k] == b and n != child and by_name[n].status == "inertial"
        ]
        p_links = {k: link_params(by_name[names[k]], FR[k], Fp[k]) for k in attached}
        massive = [k for k in attached if np.any(p_links[k] != 0.0)]
        p_att = np.sum([p_links[k] for k in attached], axis=0) if attached else np.zeros(10)
        plan.append((child, attached, massive, p_id[b] - p_att))
    with_att = [b for b in range(nb) if plan[b][2]]
    ok_all, margins_all = _consistent(np.array([plan[b][3] for b in with_att]).reshape(-1, 10))
    checked = {b: (bool(ok_all[i]), margins_all[i]) for i, b in enumerate(with_att)}

    edits: list = []
    bodies = []
    for b in range(nb):
        child, attached, massive, p_rem = plan[b]
        entry: dict = {"body": b, "joint": model.joint_names[b], "link": child}
        if not massive:
            mode, p_child, cleared = "single", p_id[b], []
            entry["remainder_consistent"] = None
            entry["remainder_margins"] = None
        else:
            ok, margins = checked[b]
            entry["remainder_consistent"] = ok
            entry["remainder_margins"] = margins
            if ok:
                mode, p_child, cleared = "remainder", p_rem, []
            else:
                mode, p_child, cleared = "composite", p_id[b], [names[k] for k in massive]
        kept = [names[k] for k in attached if names[k] not in cleared]
        entry.update(mode=mode, links_kept=kept, links_cleared=cleared)
        entry["note"] = {
            "single": f"{child}: the identified body",
            "remainder": f"{child}: the identified body minus the attached links "
            f"{', '.join(kept)} (kept as in the file)",
            "composite": f"{child}: the whole identified composite; the remainder after the "
            f"attached links was not physically consistent, so the inertials of "
            f"{', '.join(cleared)} were removed",
        }[mode]
        bodies.append(entry)

        # the child link's frame is the body frame (frame placement = identity)
        m, c, I_c = _mass_com_inertia(p_child)
        link = by_name[child]
        if link.rewrite is not None:
            edits += link.rewrite(m, c, I_c)
        else:  # a link without <inertial>: insert one
            node = link_nodes[child]
            text = _inertial_xml(m, c, I_c)
            if node.self_closing:
                edits.append((node.head_end - 2, node.head_end, f">{text}</link>".encode()))
            else:
                edits.append(insert_child_edit(node, data, text))
        for name in cleared:
            inertial = link_nodes[name].find("inertial")
            if inertial is not None:
                s, e = _line_span(data, inertial.start, inertial.end)
                edits.append((s, e, b""))

    new = apply_edits(data, edits)
    _write_atomic(out, new)

    # re-read the output: the composites must come back
    back = read_model(out)
    back_by = {link.name: link for link in back.links}
    p_back = np.zeros((nb, 10))
    for k, n in enumerate(names):
        if fb[k] >= 0 and back_by[n].status == "inertial":
            p_back[fb[k]] += link_params(back_by[n], FR[k], Fp[k])
    scale = np.maximum(np.max(np.abs(p_id), axis=1), np.finfo(np.float64).tiny)
    err = float(np.max(np.abs(p_back - p_id).max(axis=1) / scale)) if nb else 0.0
    return {
        "source": str(src_path),
        "output": str(out_path),
        "bodies": bodies,
        "untouched": [n for k, n in enumerate(names) if fb[k] < 0],
        "max_reload_error": err,
    }
