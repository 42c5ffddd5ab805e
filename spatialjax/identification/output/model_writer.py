"""Write identified bodies and joints back into the user's model file (URDF or MJCF).

A model body is a composite of a moving joint's child link and the links rigidly
attached to it; identified 10-vectors ``[m, hx, hy, hz, Ixx, Ixy, Iyy, Ixz, Iyz, Izz]``
(about the body frame origin, body axes) are split back into the file's links.
Derivation: docs page ``identification-methods.md#model-writer``.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from ..._params import mass_com_inertia
from ..errors import IdentifyError, IdentifyTypeError

__all__ = ["write_identified_mjcf", "write_identified_model", "write_identified_urdf"]

#: The ``joint_params`` keys: Model joint-dynamics fields (MJCF ``armature``, ``damping``,
#: ``frictionloss``; URDF ``<dynamics damping friction>``).
JOINT_PARAMETER_FIELDS = ("armature", "damping", "friction")


def body_metrics(P, P0=None) -> dict:
    """Consistency margins of bodies ``P (k, 10)`` and their geodesic distances to ``P0``.

    Float64 NumPy (``body_metrics.consistency_margins``, ``geodesic_distances``).
    Returns NumPy arrays ``consistent`` (k,), ``principal_moments`` (k, 3),
    ``min_eig_inertia_com``, ``triangle_margin``, ``min_eig_pseudo_inertia``,
    ``geodesic`` (k,): NaN where a body of ``P`` is not consistent.
    """
    from .body_metrics import consistency_margins, geodesic_distances

    P = np.asarray(P, np.float64).reshape(-1, 10)
    P0 = P if P0 is None else np.asarray(P0, np.float64).reshape(-1, 10)
    out = consistency_margins(P)
    ok = out["consistent"] & (out["min_eig_pseudo_inertia"] > 0)
    geo = np.full(P.shape[0], np.nan)
    geo[ok] = geodesic_distances(P[ok], P0[ok])
    return {**out, "geodesic": geo}


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
    from ...io._common import format_number as f

    return (
        f'<inertial><origin xyz="{f(c[0])} {f(c[1])} {f(c[2])}" rpy="0 0 0"/>'
        f'<mass value="{f(m)}"/><inertia ixx="{f(I_c[0, 0])}" ixy="{f(I_c[0, 1])}" '
        f'ixz="{f(I_c[0, 2])}" iyy="{f(I_c[1, 1])}" iyz="{f(I_c[1, 2])}" '
        f'izz="{f(I_c[2, 2])}"/></inertial>'
    )


def _as_params(inertia, nb: int) -> np.ndarray:
    from ..._inertia import RigidBodyInertia

    p = inertia.params if isinstance(inertia, RigidBodyInertia) else inertia
    try:
        p = np.asarray(p, dtype=np.float64)
    except (TypeError, ValueError):
        raise IdentifyTypeError(
            "inertia",
            f"expected a RigidBodyInertia or an (nbodies, 10) array, got {type(inertia).__name__}",
        ) from None
    if p.shape != (nb, 10):
        raise IdentifyError(
            "inertia",
            f"expected batch shape ({nb},) (one body per model "
            f"body), i.e. parameters of shape ({nb}, 10), got {p.shape}",
        )
    bad = ~np.all(np.isfinite(p), axis=1)
    if bad.any():
        raise IdentifyError(
            "inertia", f"bodies {np.flatnonzero(bad).tolist()} have non-finite parameters"
        )
    return p


def _check_model(model) -> None:
    """A ``TypeError`` naming ``model`` when it is not a Model (e.g. an array of parameters)."""
    from ...multibody import Model

    if not isinstance(model, Model):
        raise IdentifyTypeError(
            "model",
            f"expected the spatialjax.multibody.Model read from source "
            f"(Model.from_urdf(source, locked_joints=...)), got {type(model).__name__}; an "
            "identify_robot result writes itself: result.write(out_path, source=source)",
        )


def _positive_masses(p_id, model, what: str) -> None:
    for b in range(p_id.shape[0]):
        if not p_id[b, 0] > 0:
            raise IdentifyError(
                "inertia",
                f"body {b} ({model.body_names[b]!r}) has mass "
                f"{float(p_id[b, 0])!r}; {what} needs a positive mass",
            )


def _check_out(out_path, src_path, overwrite: bool, fn: str) -> Path:
    out = Path(out_path)
    if out.exists():
        if Path(src_path).exists() and os.path.samefile(out, src_path):
            raise IdentifyError("out_path", f"{str(out_path)!r} is the input file itself")
        if not overwrite:
            raise FileExistsError(
                f"{fn}: {out_path} exists; pass overwrite=True to replace it (or choose another "
                "out_path)"
            )
    return out


def _one_dof(model) -> list[int]:
    """The bodies whose joint is one-DoF (all but a free flyer), in ``v`` order."""
    return [b for b, t in enumerate(model.joint_types) if t != "free_flyer"]


def _check_joint_params(joint_params, model) -> dict:
    """``{field: (n1,) float64}`` (NaN: keep the file's) from ``joint_params``, checked."""
    if joint_params is None:
        return {}
    if not isinstance(joint_params, dict):
        raise IdentifyTypeError(
            "joint_params",
            f"expected a dict {{field: (n_joints,) values}} with fields from "
            f"{JOINT_PARAMETER_FIELDS}, got {type(joint_params).__name__}",
        )
    n1 = len(_one_dof(model))
    out = {}
    for key, value in joint_params.items():
        if key not in JOINT_PARAMETER_FIELDS:
            raise IdentifyError(
                "joint_params",
                f"unknown field {key!r}; expected fields from "
                f"{JOINT_PARAMETER_FIELDS} (damping = viscous, friction = Coulomb / MJCF "
                "frictionloss)",
            )
        try:
            arr = np.asarray(value, np.float64)
        except (TypeError, ValueError):
            raise IdentifyTypeError(
                f"joint_params[{key!r}]", f"expected {n1} numbers, got {type(value).__name__}"
            ) from None
        if arr.shape != (n1,):
            raise IdentifyError(
                f"joint_params[{key!r}]",
                f"expected shape ({n1},) (one value per one-DoF "
                f"joint of the model, in its order), got shape {arr.shape}",
            )
        bad = ~np.isnan(arr) & ~(np.isfinite(arr) & (arr >= 0))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            joint = model.joint_names[_one_dof(model)[i]]
            raise IdentifyError(
                f"joint_params[{key!r}]",
                f"expected finite values >= 0 (NaN: keep the "
                f"file's), got {arr[i]} for joint {joint!r}",
            )
        out[key] = arr
    return out


def _in_frame(p, R, r):
    """``(m, c, I_c)`` of a body-frame 10-vector ``p`` in the frame at ``(R, r)`` in the body."""
    m, c, I_c = mass_com_inertia(p)
    return m, R.T @ (c - r), R.T @ I_c @ R


def write_identified_urdf(
    source, model, inertia, out_path, *, joint_params=None, overwrite: bool = False
) -> dict:
    """Write the URDF ``source`` to ``out_path``, the identified bodies' ``<inertial>`` rewritten.

    How a composite body is split between its links: docs page
    ``identification-methods.md#model-writer``.

    Args:
      source: the URDF the model was read from: its path, or its
        [`ModelDescription`][spatialjax.io.ModelDescription] (not read again).
      model: the [`Model`][spatialjax.multibody.Model] read from ``source`` (with the
        ``locked_joints`` used for the identification).
      inertia: identified bodies, a [`RigidBodyInertia`][spatialjax.RigidBodyInertia] of batch
        ``(model.nbodies,)`` (or an ``(nbodies, 10)`` array), each about its body frame origin in
        body axes, every mass positive.
      out_path: the file to write (atomically: a temporary file renamed).
      joint_params: optional ``{"armature" | "damping" | "friction": (n_joints,)}`` (NaN keeps the
        file's): written as ``<dynamics damping= friction=>``; armature only where the joint has
        Drake's ``drake:rotor_inertia``.
      overwrite: replace ``out_path`` if it exists (the input is never overwritten).

    Returns:
      A JSON-able report (keys: docs page ``identification-report.md``, section ``output``).

    Raises:
      TypeError: ``model`` is not a Model, or ``joint_params`` not a dict.
      ValueError: ``source`` is not a URDF, ``model`` was not read from it, ``inertia`` has the
        wrong shape, non-finite values or a body with ``m ≤ 0``, ``joint_params`` with an unknown
        field, the wrong shape or a negative value, or ``out_path`` is the source file.
      FileExistsError: ``out_path`` exists and ``overwrite`` is false.
      spatialjax.io.ModelFileError: ``source`` is malformed.
    """
    from ..._util import write_atomic as _write_atomic
    from ...io._load import read_description
    from ...io._xml import apply_edits

    desc, names, p_id, jp, out = _urdf_inputs(
        source, model, inertia, joint_params, out_path, overwrite
    )
    data, root = desc.source, desc.element
    links = [link.inertial for link in desc.links]
    frames = _frame_poses(model)
    plan, checked = _urdf_plan(model, links, names, p_id, frames)
    edits, bodies = _urdf_body_edits(model, links, root, data, names, p_id, plan, checked)

    joints_report = []
    if jp:
        jedits, joints_report = _urdf_joint_edits(desc, root, data, model, jp)
        edits += jedits

    new = apply_edits(data, edits)
    _write_atomic(out, new)

    # read the output back, once: the composites and the joint values must come back
    back = read_description(out, "urdf")
    back_links = {link.name: link.inertial for link in back.links
                  if link.inertial is not None and link.inertial.status == "inertial"}  # fmt: skip
    report = {
        "source": desc.path,
        "output": str(out_path),
        "format": "urdf",
        "bodies": bodies,
        "untouched": [n for k, n in enumerate(names) if frames[0][k] < 0],
        "max_reload_error": _reload_error(back_links, names, frames, p_id),
    }
    if jp:
        report["joints"] = joints_report
        report["max_joint_error"] = _joint_reload_error(back, joints_report)
    return report


def _urdf_inputs(source, model, inertia, joint_params, out_path, overwrite):
    """``(source description, link names, (nb, 10) bodies, joint params, out path)``, checked."""
    fn = "write_identified_urdf"
    _check_model(model)
    desc = _description(source)
    if desc.format != "urdf":
        raise IdentifyError(
            "source", f"{desc.path} is {desc.format.upper()}, not a URDF; only URDF output"
        )
    names = tuple(link.name for link in desc.links)
    if tuple(model.frame_names) != names:
        raise IdentifyError(
            "model",
            f"its frames {list(model.frame_names)} are not the links of "
            f"{desc.path} ({list(names)}); pass the Model read from this file",
        )
    nb = model.nbodies
    p_id = _as_params(inertia, nb)
    _positive_masses(p_id, model, "a URDF inertial")
    jp = _check_joint_params(joint_params, model)
    out = _check_out(out_path, desc.path, overwrite, fn)
    return desc, names, p_id, jp, out


def _description(source):
    """The ``ModelDescription`` of ``source``: read (one parse) when it is a path."""
    from ...io import ModelDescription
    from ...io._load import read_description

    if not isinstance(source, ModelDescription):
        return read_description(source)
    if source.element is None or not source.links:
        raise IdentifyTypeError(
            "source",
            "expected a model file or the ModelDescription of "
            "spatialjax.io.read_description (with its tree and elements), got one without them",
        )
    return source


def _frame_poses(model):
    """``(frame bodies, R (nf, 3, 3), p (nf, 3))``: where every file link sits in its body."""
    fb = [int(b) for b in model.frame_bodies]
    FR = np.asarray(model.frame_placements.E, dtype=np.float64)
    Fp = np.asarray(model.frame_placements.r, dtype=np.float64)
    return fb, FR, Fp


def _checked_remainders(massive: list, remainders: list) -> dict:
    """``{body: (consistent, margins)}`` of the remainders of bodies with massive attached links."""
    with_att = [b for b in range(len(massive)) if massive[b]]
    rem = np.array([remainders[b] for b in with_att]).reshape(-1, 10)
    ok_all, margins_all = _consistent(rem)
    return {b: (bool(ok_all[i]), margins_all[i]) for i, b in enumerate(with_att)}


def _split_mode(entry: dict, p_body, p_rem, massive, checked_b, names):
    """``(mode, the child's 10-vector, cleared link names)`` of one body; fills ``entry``."""
    if not massive:
        entry["remainder_consistent"] = entry["remainder_margins"] = None
        return "single", p_body, []
    ok, margins = checked_b
    entry["remainder_consistent"] = ok
    entry["remainder_margins"] = margins
    if ok:
        return "remainder", p_rem, []
    return "composite", p_body, [names[k] for k in massive]


def _reload_error(back_links: dict, names, frames, p_id) -> float:
    """Largest ``|π_reloaded − π_identified|`` relative to each body's largest parameter."""
    fb, FR, Fp = frames
    from ...multibody._build import link_params

    nb = p_id.shape[0]
    p_back = np.zeros((nb, 10))
    for k, n in enumerate(names):
        if fb[k] >= 0 and n in back_links:
            p_back[fb[k]] += link_params(back_links[n], FR[k], Fp[k])
    scale = np.maximum(np.max(np.abs(p_id), axis=1), np.finfo(np.float64).tiny)
    return float(np.max(np.abs(p_back - p_id).max(axis=1) / scale)) if nb else 0.0


def _urdf_plan(model, links, names, p_id, frames):
    """Per body ``(child link, attached links, massive ones, remainder)`` and their consistency."""
    from ...multibody._build import link_params

    fb, FR, Fp = frames
    by_name = {link.name: link for link in links}
    plan = []
    for b in range(model.nbodies):
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
    return plan, _checked_remainders([p[2] for p in plan], [p[3] for p in plan])


def _urdf_body_edits(model, links, root, data, names, p_id, plan, checked):
    """The edits writing every body into its links' ``<inertial>``, and the per-body report."""
    from ...io._xml import insert_child_edit

    link_nodes = {el.attrib.get("name"): el for el in root.findall("link")}
    by_name = {link.name: link for link in links}
    edits: list = []
    bodies = []
    for b in range(model.nbodies):
        child, attached, massive, p_rem = plan[b]
        entry: dict = {"body": b, "joint": model.joint_names[b], "link": child}
        mode, p_child, cleared = _split_mode(entry, p_id[b], p_rem, massive, checked.get(b), names)
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
        m, c, I_c = mass_com_inertia(p_child)
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
    return edits, bodies


# ----------------------------------------------------------------------------- joints
def _urdf_joint_edits(desc, root, data, model, jp):
    """Edits writing ``jp`` into a URDF's ``<dynamics>`` (and Drake rotor inertias)."""
    from ...io._common import Ctx, format_number, parse_numbers
    from ...io._xml import attr_value_edit, attrs_insert_edit, insert_child_edit

    by_name = {j.name: j for j in desc.joints}
    drake = {}  # joint -> (rotor inertia element, gear ratio)
    for tr in root.findall("transmission"):
        jels = tr.findall("joint")
        for act in tr.findall("actuator"):
            ri = act.find("drake:rotor_inertia")
            if ri is not None and len(jels) == 1 and "value" in ri.attrib:
                gr = act.find("drake:gear_ratio")
                rho = 1.0
                if gr is not None and "value" in gr.attrib:
                    ctx = Ctx(desc.path, gr.line, None, "drake:gear_ratio")
                    rho = float(parse_numbers(gr.attrib["value"], ctx, 1)[0])
                drake[jels[0].attrib.get("name")] = (ri, rho)
    edits, report = [], []
    for i, b in enumerate(_one_dof(model)):
        name = model.joint_names[b]
        el = by_name[name].element
        entry: dict = {"joint": name}
        dyn = {}
        for field, attr in (("damping", "damping"), ("friction", "friction")):
            if field in jp and not np.isnan(jp[field][i]):
                dyn[attr] = float(jp[field][i])
                old = float(np.asarray(getattr(model, field))[_v_index(model, b)])
                entry[field] = {"file": old, "identified": dyn[attr], "written": True}
        if dyn:
            d_el = el.find("dynamics")
            if d_el is None:
                text = " ".join(f'{k}="{format_number(v)}"' for k, v in dyn.items())
                edits.append(insert_child_edit(el, data, f"<dynamics {text}/>"))
            else:
                inserts = []
                for k, v in dyn.items():
                    if k in d_el.attrib:
                        edits.append(attr_value_edit(d_el, k, format_number(v)))
                    else:
                        inserts.append((k, format_number(v)))
                if inserts:
                    edits.append(attrs_insert_edit(d_el, inserts))
        if "armature" in jp and not np.isnan(jp["armature"][i]):
            a = float(jp["armature"][i])
            old = float(np.asarray(model.armature)[_v_index(model, b)])
            written = name in drake and drake[name][1] != 0
            if written:
                ri, rho = drake[name]
                edits.append(attr_value_edit(ri, "value", format_number(a / rho**2)))
            entry["armature"] = {"file": old, "identified": a, "written": written}
            if not written:
                entry["note"] = (
                    "URDF has no armature: add Drake's <transmission> with "
                    "<drake:rotor_inertia> for this joint to carry it (spatialjax, Drake read it)"
                )
        report.append(entry)
    return edits, report


def _v_index(model, b: int) -> int:
    """The ``v`` index of one-DoF body ``b``'s joint."""
    return b + (5 if model.floating_base else 0)


def _joint_reload_error(back_desc, joints_report) -> float:
    """Largest relative difference between written and re-read joint parameters."""
    back = {j.name: j.dynamics for j in back_desc.joints if j.name is not None}
    worst = 0.0
    for entry in joints_report:
        for field in JOINT_PARAMETER_FIELDS:
            e = entry.get(field)
            if not e or not e["written"]:
                continue
            got = back.get(entry["joint"], {}).get(field, 0.0)
            want = e["identified"]
            worst = max(worst, abs(got - want) / max(abs(want), np.finfo(np.float64).tiny))
    return worst


# ------------------------------------------------------------------------------- MJCF
_ACTUATOR_TAGS = ("general", "motor", "position", "velocity", "intvelocity", "damper",
                  "cylinder", "muscle", "adhesion")  # fmt: skip


def _has_geoms(el) -> bool:
    """Whether an MJCF body has geoms of its own (directly or inside its ``<frame>``s)."""
    for c in el.children:
        if c.tag == "geom" or (c.tag == "frame" and _has_geoms(c)):
            return True
    return False


def write_identified_mjcf(
    source,
    model,
    inertia,
    out_path,
    *,
    joint_params=None,
    overwrite: bool = False,
    tendon_params=None,
) -> dict:
    """Write an MJCF file with the identified bodies' ``<inertial>`` and joints rewritten.

    Every byte outside the edited elements and attributes is kept; loaded with MuJoCo the output
    has the identified ``body_mass``, ``body_ipos``, ``body_inertia``/``body_iquat``,
    ``dof_armature``, ``dof_damping`` and ``dof_frictionloss``. Conventions: docs page
    ``identification-methods.md#model-writer``.

    Args:
      source: the MJCF file the model was read from: its path, or its
        [`ModelDescription`][spatialjax.io.ModelDescription] (not read again).
      model: the [Model][spatialjax.multibody.Model] read from ``source`` (with the
        ``locked_joints`` used).
      inertia: identified bodies, a [RigidBodyInertia][spatialjax.RigidBodyInertia] of batch
        ``(model.nbodies,)`` (or an ``(nbodies, 10)`` array), each about its body frame origin in
        body axes; every mass positive.
      out_path: the file to write (atomically: a temporary file renamed).
      joint_params: optional ``{"armature" | "damping" | "friction": (n_joints,)}`` over the
        one-DoF joints in model order (``friction`` written as ``frictionloss``; NaN keeps the
        file's value).
      overwrite: replace ``out_path`` if it exists (the input is never overwritten).
      tendon_params: optional ``{tendon: {"armature" | "viscous" | "coulomb": value}}`` written on
        the file's ``<tendon><fixed name=tendon>`` as ``armature``, ``damping`` and
        ``frictionloss`` (a coupled motor of a [Transmission][spatialjax.multibody.Transmission]).

    Returns:
      A JSON-able report (keys: docs page ``identification-report.md``, section ``output``).

    Raises:
      ValueError: ``source`` is not MJCF, ``model`` was not read from it, ``inertia`` has the
        wrong shape, non-finite values or a mass ``≤ 0``, ``joint_params`` with an unknown field,
        the wrong shape or a negative value, a joint whose ``springdamper`` overrides the damping
        written, a ``tendon_params`` tendon the file lacks or a negative value, an actuator with
        its own ``armature``/``damping`` when those are written, or ``out_path`` is the source.
      TypeError: ``joint_params`` not a dict.
      FileExistsError: ``out_path`` exists and ``overwrite`` is false.
      spatialjax.io.ModelFileError: ``source`` is malformed or not expandable (``<include>``).
    """
    from ..._util import write_atomic as _write_atomic
    from ...io._load import read_description
    from ...io._xml import apply_edits

    desc, names, by_joint, p_id, jp, out = _mjcf_inputs(
        source, model, inertia, joint_params, out_path, overwrite
    )
    data, root = desc.source, desc.element
    edits, notes = _mjcf_compiler_edits(root)
    _check_actuators(root, jp, desc.path, "write_identified_mjcf")

    frames = _frame_poses(model)
    plan, checked = _mjcf_plan(model, desc.links, names, p_id, frames)
    body_edits, bodies = _mjcf_body_edits(model, desc.links, data, names, p_id, frames, plan,
                                          checked)  # fmt: skip
    edits += body_edits
    joint_edits, joints_report = _mjcf_joint_edits(model, by_joint, jp)
    edits += joint_edits
    tendons_report = []
    if tendon_params:
        from ...io._mjcf_tendons import read_fixed_tendons, tendon_edits

        t_edits, tendons_report = tendon_edits(
            read_fixed_tendons(root, desc.path), tendon_params, "write_identified_mjcf"
        )
        edits += t_edits

    new_data = apply_edits(data, edits)
    _write_atomic(out, new_data)

    # read the output back, once: the composites and the joint values must come back
    back = read_description(out, "mjcf")
    back_links = {link.name: link.inertial for link in back.links if link.inertial is not None}
    report = {
        "source": desc.path,
        "output": str(out_path),
        "format": "mjcf",
        "bodies": bodies,
        "joints": joints_report,
        "tendons": tendons_report,
        "notes": notes,
        "max_reload_error": _reload_error(back_links, names, frames, p_id),
    }
    report["max_joint_error"] = _joint_reload_error(back, joints_report)
    return report


def _mjcf_inputs(source, model, inertia, joint_params, out_path, overwrite):
    """``(description, body names, {joint name: joint}, (nb, 10) bodies, joint params, out)``."""
    fn = "write_identified_mjcf"
    _check_model(model)
    desc = _description(source)
    src_path = desc.path
    if desc.format != "mjcf":
        raise IdentifyError("source", f"{src_path} is {desc.format.upper()}, not MJCF")
    names = tuple(link.name for link in desc.links)
    if tuple(model.frame_names[: len(names)]) != names:
        raise IdentifyError(
            "model",
            f"its frames {list(model.frame_names)} do not start with the bodies of "
            f"{src_path} ({list(names)}); pass the Model read from this file",
        )
    by_joint = {j.name: j for j in desc.joints if j.name is not None}
    missing = [n for n in model.joint_names if n not in by_joint]
    if missing:
        raise IdentifyError(
            "model",
            f"joints {missing} are not joints of {src_path}; pass the Model read from this file",
        )
    nb = model.nbodies
    p_id = _as_params(inertia, nb)
    _positive_masses(p_id, model, "a MuJoCo body with a joint")
    jp = _check_joint_params(joint_params, model)
    out = _check_out(out_path, src_path, overwrite, fn)
    return desc, names, by_joint, p_id, jp, out


def _mjcf_compiler_edits(root):
    """``(edits, notes)``: ``inertiafromgeom="true"`` made ``"auto"``; notes on other options."""
    from ...io._xml import attr_value_edit

    edits: list = []
    notes: list[str] = []
    for comp in root.iter("compiler"):
        if comp.attrib.get("inertiafromgeom", "").strip() == "true":
            edits.append(attr_value_edit(comp, "inertiafromgeom", "auto"))
            notes.append(
                f'line {comp.line}: <compiler inertiafromgeom="true"> changed to "auto": MuJoCo '
                "ignored every <inertial>, so the identified ones would have had no effect"
            )
        for attr in ("balanceinertia", "boundmass", "boundinertia"):
            if attr in comp.attrib and comp.attrib[attr].strip() not in ("false", "0"):
                notes.append(
                    f'line {comp.line}: <compiler {attr}="{comp.attrib[attr]}"> can change the '
                    "written inertias when MuJoCo compiles the file"
                )
    return edits, notes


def _mjcf_plan(model, links, names, p_id, frames):
    """Per body ``(child, welded, massive, geoms without <inertial>, remainder)``, consistency."""
    from ...multibody._build import link_params

    fb, FR, Fp = frames
    by_name = {link.name: link for link in links}
    plan = []
    for b in range(model.nbodies):
        child = model.body_names[b]
        attached = [k for k, n in enumerate(names) if fb[k] == b and n != child]
        with_inertial = [k for k in attached if by_name[names[k]].inertial is not None]
        p_links = {k: link_params(by_name[names[k]].inertial, FR[k], Fp[k]) for k in with_inertial}
        massive = [k for k in with_inertial if np.any(p_links[k] != 0.0)]
        geom_only = [
            k
            for k in attached
            if by_name[names[k]].inertial is None and _has_geoms(by_name[names[k]].element)
        ]
        p_att = np.sum([p_links[k] for k in with_inertial], axis=0) if with_inertial else 0.0
        plan.append((child, attached, massive, geom_only, p_id[b] - p_att))
    return plan, _checked_remainders([p[2] for p in plan], [p[4] for p in plan])


def _mjcf_body_edits(model, links, data, names, p_id, frames, plan, checked):
    """The edits writing every body into its MJCF bodies' ``<inertial>``, and the report."""
    from ...io._xml import insert_child_edit

    _, FR, Fp = frames
    by_name = {link.name: link for link in links}
    edits: list = []
    bodies = []
    for b in range(model.nbodies):
        child, attached, massive, geom_only, p_rem = plan[b]
        entry: dict = {"body": b, "joint": model.joint_names[b], "link": child}
        mode, p_child, cleared = _split_mode(entry, p_id[b], p_rem, massive, checked.get(b), names)
        kept = [names[k] for k in attached if names[k] not in cleared and k not in geom_only]
        massless = [names[k] for k in geom_only]
        k_child = names.index(child)
        m, c, I_c = _in_frame(p_child, FR[k_child], Fp[k_child])
        link = by_name[child]
        inserted = link.inertial is None
        if link.inertial is None:
            edits.append(_insert_inertial(link.element, data, m, c, I_c, insert_child_edit))
        else:  # the MJCF reader makes every <inertial> rewritable
            assert link.inertial.rewrite is not None
            edits += link.inertial.rewrite(m, c, I_c)
        for name in cleared:  # mass 0, so that the composite is not counted twice
            li = by_name[name].inertial
            if li is not None and li.rewrite is not None:
                edits += li.rewrite(0.0, li.com, np.zeros((3, 3)))
        for name in massless:
            edits.append(
                _insert_inertial(
                    by_name[name].element,
                    data,
                    0.0,
                    np.zeros(3),
                    np.zeros((3, 3)),
                    insert_child_edit,
                )  # fmt: skip
            )
        entry.update(
            mode=mode,
            links_kept=kept,
            links_cleared=cleared,
            links_massless=massless,
            inserted=inserted,
        )
        entry["note"] = {
            "single": f"{child}: the identified body",
            "remainder": f"{child}: the identified body minus the welded bodies "
            f"{', '.join(kept)} (kept as in the file)",
            "composite": f"{child}: the whole identified composite; the remainder after the "
            f"welded bodies was not physically consistent, so {', '.join(cleared)} got mass 0",
        }[mode] + (
            f"; {', '.join(massless)} got a massless <inertial> (MuJoCo would have added their "
            "geoms' mass, which the identified body already holds)"
            if massless
            else ""
        )
        bodies.append(entry)
    return edits, bodies


def _mjcf_joint_edits(model, by_joint, jp):
    """Edits writing ``jp`` into the ``<joint>`` attributes, and the per-joint report."""
    from ...io._xml import scalar_attribute_edits

    fn = "write_identified_mjcf"
    attr_of = {"armature": "armature", "damping": "damping", "friction": "frictionloss"}
    edits: list = []
    joints_report = []
    for i, b in enumerate(_one_dof(model)):
        name = model.joint_names[b]
        el = by_joint[name].element
        entry = {"joint": name}
        changes = []
        for field, attr in attr_of.items():
            if field not in jp or np.isnan(jp[field][i]):
                continue
            new = float(jp[field][i])
            old = float(np.asarray(getattr(model, field))[_v_index(model, b)])
            entry[field] = {"file": old, "identified": new, "written": True}
            if field == "damping" and "springdamper" in el.attrib:
                raise ValueError(
                    f"{fn}: joint {name!r} (line {el.line}) has springdamper="
                    f"{el.attrib['springdamper']!r}, from which MuJoCo computes its damping: "
                    "the identified damping would be ignored; remove springdamper first"
                )
            changes.append((attr, old, new))
        edits += scalar_attribute_edits(el, changes)
        joints_report.append(entry)
    return edits, joints_report


def _insert_inertial(body_el, data, m, c, I_c, insert_child_edit):
    """An edit inserting ``<inertial pos mass fullinertia>`` as the body's first child."""
    from ...io._common import format_number as f

    I_c = 0.5 * (I_c + I_c.T)
    full = [I_c[0, 0], I_c[1, 1], I_c[2, 2], I_c[0, 1], I_c[0, 2], I_c[1, 2]]
    text = (
        f'<inertial pos="{f(c[0])} {f(c[1])} {f(c[2])}" mass="{f(m)}" '
        f'fullinertia="{" ".join(f(x) for x in full)}"/>'
    )
    if m == 0.0:
        text = '<inertial pos="0 0 0" mass="0" diaginertia="0 0 0"/>'
    if body_el.self_closing:
        return (body_el.head_end - 2, body_el.head_end, f">{text}</body>".encode())
    return insert_child_edit(body_el, data, text)


def _check_actuators(root, jp, path, fn) -> None:
    """Refuse actuators with their own armature or damping (added to the joint's) when written."""
    fields = [f for f in ("armature", "damping") if f in jp]
    if not fields:
        return
    for parent_tag in ("actuator", "default"):
        for holder in root.iter(parent_tag):
            for el in holder.children:
                if el.tag not in _ACTUATOR_TAGS:
                    continue
                for f in fields:
                    text = el.attrib.get(f, "").split()
                    if text and any(float(x) != 0.0 for x in text):
                        raise ValueError(
                            f"{fn}: <{el.tag}> on line {el.line} of {path} has {f}="
                            f"{el.attrib[f]!r}: MuJoCo adds an actuator's {f} to its joint's, "
                            f"so the identified joint {f} would be counted twice; set it to 0 "
                            "or write without that field"
                        )


#: The writers of ``write_identified_model``, by the source's format.
WRITERS = {"urdf": write_identified_urdf, "mjcf": write_identified_mjcf}


def write_identified_model(
    source,
    model,
    inertia,
    out_path,
    *,
    joint_params=None,
    overwrite: bool = False,
    tendon_params=None,
) -> dict:
    """Write the identified robot back in the format of ``source``: URDF or MJCF.

    Reads ``source`` once (unless it is already its description) and hands the
    description to [write_identified_urdf][spatialjax.identification.write_identified_urdf] or
    [write_identified_mjcf][spatialjax.identification.write_identified_mjcf] by the file's root
    element (same arguments and report; ``format`` says which). SDFormat is not written back.

    Args:
      source: the model file the model was read from, or its
        [`ModelDescription`][spatialjax.io.ModelDescription].
      model, inertia, out_path, joint_params, overwrite: as the writer's.
      tendon_params: an MJCF's fixed tendons (``write_identified_mjcf``); an error for a URDF.

    Returns:
      The writer's JSON-able report.

    Raises:
      ValueError: an SDFormat file, and the errors of the writer called.
      spatialjax.io.ModelFileError: a malformed or unknown file.

    Examples:
      >>> import pathlib, tempfile
      >>> import numpy as np
      >>> from spatialjax.identification import write_identified_model
      >>> from spatialjax.io import read_description
      >>> from spatialjax.multibody import Model
      >>> folder = pathlib.Path(tempfile.mkdtemp())
      >>> _ = (folder / "pendulum.urdf").write_text(
      ...     '<robot name="pendulum"><link name="base"/><link name="arm"><inertial>'
      ...     '<mass value="2"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>'
      ...     '</inertial></link><joint name="hinge" type="continuous"><parent link="base"/>'
      ...     '<child link="arm"/></joint></robot>'
      ... )
      >>> desc = read_description(folder / "pendulum.urdf")
      >>> model = Model.from_description(desc, dtype="float64")
      >>> fitted = np.array([[3.0, 0.0, 0.0, 0.0, 2.0, 0.0, 2.0, 0.0, 0.0, 2.0]])
      >>> report = write_identified_model(desc, model, fitted, folder / "fitted.urdf")
      >>> report["format"], report["bodies"][0]["mode"], report["max_reload_error"] < 1e-15
      ('urdf', 'single', True)
    """
    desc = _description(source)
    writer = WRITERS.get(desc.format)
    if writer is None:
        raise IdentifyError(
            "source",
            f"{desc.path} is {desc.format.upper()}; only URDF and MJCF models can be written back",
        )
    if tendon_params and desc.format != "mjcf":
        raise IdentifyError(
            "tendon_params",
            f"{desc.path} is {desc.format.upper()}, which has no tendons",
        )
    extra = {"tendon_params": tendon_params} if tendon_params else {}
    return writer(desc, model, inertia, out_path, joint_params=joint_params, overwrite=overwrite,
                  **extra)  # fmt: skip
