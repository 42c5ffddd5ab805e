"""Floating-base identification: the equations of a log, all rows or projected on the contacts.

``M(q) v̇ + h = Y π = Sᵀτ + Σ_c J_cᵀ w_c`` per sample, ``v = [ω; v_b, q̇]`` (base
twist in the base frame, then the joints), contact wrenches ``[n; f]`` in each
contact frame's axes about its origin. "wrenches" keeps all rows, "projection"
projects them on the null space of the closed contacts.
Derivation: docs page ``identification-methods.md#floating-base``.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..errors import IdentifyError, IdentifyTypeError
from ..logs.preprocess import PreparedLog, parallel_filter, tail_samples

__all__ = ["CONTACT_TYPES", "FloatingBaseRows", "floating_base_rows"]

#: Contact kinds of the projection: a point keeps its origin (3 rows), a surface its pose (6).
CONTACT_TYPES = ("point", "surface")
#: Default speed below which a contact frame counts as closed (m/s).
CONTACT_SPEED = 0.05
#: Tail of the filter's impulse response beyond which it no longer moves a detected contact.
CONTACT_REACH_TAIL = 1e-2
#: Names of the free flyer's rows: the base wrench ``[n; f]`` in the base frame.
BASE_ROWS = ("base_nx", "base_ny", "base_nz", "base_fx", "base_fy", "base_fz")
#: Singular values of ``J_a`` below this fraction of its largest count as zero.
_RANK_RTOL = 1e-9
METHODS = ("wrenches", "projection")


@dataclasses.dataclass(frozen=True, eq=False)
class FloatingBaseRows:
    """Row-stacked identification equations of a floating-base log (``floating_base_rows``).

    Each sample's ``R = 6 + n`` equations (the model's ``v`` order, base rows
    first) come as one block of ``R`` rows per part: ``"free"`` (``P r``), and for
    "wrenches" also ``"contact"`` (``(I − P) r``). ``measured ≈ Y @ π + extra @ φ``
    row by row; pass them as ``fit_torques(rows.Y, rows.measured, prior=...,
    extra=rows.extra, multiplicity=rows.multiplicity)``.

    Attributes:
      Y: ``(M, K R, 10 nb)`` regressor rows (body-major 10-vectors), ``K`` parts.
      extra: ``(M, K R, ne)`` rows of the extra columns (friction), or None.
      measured: ``(M, K R)`` the measured side, part by part: ``P S^T τ``
        ("projection"), or ``P m`` and ``(I − P) m`` with ``m = S^T τ + Σ_c
        J_c^T w_c`` ("wrenches").
      multiplicity: ``(M, K R)`` independent equations each row stands for
        (a sample's kept rows add up to its ``rank``; 0 on a dropped row).
      row_names: ``K R`` names: ``base_nx … base_fz`` (the base wrench in the
        base frame), then the joints; the contact part's with ``"@contact"``.
      groups: ``K R`` groups, ``"base"`` or ``"joint"``.
      parts: ``K R`` parts, ``"free"`` or ``"contact"``.
      rank: ``(M,)`` independent equations per sample: ``R`` ("wrenches"),
        ``R − rank J_a`` ("projection").
      method: ``"wrenches"`` or ``"projection"``.
      contact_frames: the contact frames (``()`` when none).
      contact: ``(M, k)`` the contacts treated as closed (after detection and
        widening).
      log: the [PreparedLog][spatialjax.identification.PreparedLog] of the
        ``M`` samples (filtered and decimated with the rows).
      diagonal: ``(M, R)`` the diagonal of the operator the parts add up to:
        ``P_ii`` for "projection", 1 for "wrenches"; 0 on an excluded joint's.
      excluded: the joints whose torque is unknown (``exclude_torque``).
      unknown: ``(M, n)`` booleans: the joints whose torque was unknown at each
        sample, or None.
    """

    Y: np.ndarray
    extra: np.ndarray | None
    measured: np.ndarray
    multiplicity: np.ndarray
    row_names: tuple[str, ...]
    groups: tuple[str, ...]
    parts: tuple[str, ...]
    rank: np.ndarray
    method: str
    contact_frames: tuple[str, ...]
    contact: np.ndarray
    log: PreparedLog
    diagonal: np.ndarray | None = None
    excluded: tuple[str, ...] = ()
    unknown: np.ndarray | None = None

    @property
    def n_samples(self) -> int:
        """``M``, the number of samples."""
        return int(self.Y.shape[0])

    @property
    def n_dof(self) -> int:
        """``R = 6 + n``, the equations of one sample."""
        return sum(p == "free" for p in self.parts)

    @property
    def n_equations(self) -> int:
        """Independent equations in all: ``Σ rank``."""
        return int(np.sum(self.rank))

    def combine(self, x) -> np.ndarray:
        """``(..., K R)`` rows → ``(..., R)`` equations: ``P r + (I − P) r = r``."""
        x = np.asarray(x)
        R = self.n_dof
        return x.reshape(x.shape[:-1] + (-1, R)).sum(axis=-2)

    def group(self, name: str) -> np.ndarray:
        """``(R,)`` mask of the equations of group ``name``: ``"base"`` or ``"joint"``."""
        if name not in ("base", "joint"):
            raise IdentifyError("name", f"expected 'base' or 'joint', got {name!r}")
        return np.array([g == name for g in self.groups[: self.n_dof]])

    def predict(self, params, coefficients=None) -> np.ndarray:
        """``(M, K R)`` rows predicted by body parameters ``(nb, 10)`` and extra coefficients."""
        out = self.Y @ np.asarray(params, np.float64).reshape(-1)
        if self.extra is not None and self.extra.shape[-1]:
            if coefficients is None:
                raise IdentifyError(
                    "coefficients", "the rows have extra columns; pass their values"
                )
            out = out + self.extra @ np.asarray(coefficients, np.float64).reshape(-1)
        return out

    def relative_errors(self, params, coefficients=None) -> dict[str, float | None]:
        """``{"base" | "joint" | "all": ‖Yπ + Eφ − measured‖ / ‖measured‖}``, parts added first.

        None where a group's measured side is all zero.
        """
        err = self.combine(self.predict(params, coefficients) - self.measured)
        ref = self.combine(self.measured)
        out: dict[str, float | None] = {}
        for name, mask in (
            ("base", self.group("base")),
            ("joint", self.group("joint")),
            ("all", np.ones(self.n_dof, bool)),
        ):
            d = float(np.linalg.norm(ref[:, mask]))
            out[name] = float(np.linalg.norm(err[:, mask])) / d if d > 0 else None
        return out


def check_contact_frames(model, frames) -> None:
    """Refuse contact frames that are not frames (or bodies) of ``model``, naming every one.

    Raises:
      ValueError: ``contact_frames: 'FL_FOT' is no frame of model 'solo' (closest:
        'FL_FOOT'; ...)``.
    """
    known = set(model.frame_names) | set(model.body_names)
    bad = [f for f in frames if f not in known]
    if not bad:
        return
    hints = []
    for f in bad:
        close = difflib.get_close_matches(f, sorted(known), n=4, cutoff=0.5)
        hints.append(
            (f"closest to {f!r}: " if len(bad) > 1 else "closest: ")
            + (", ".join(map(repr, close)) if close else "none")
        )
    what = "is no frame" if len(bad) == 1 else "are no frames"
    raise IdentifyError(
        "contact_frames",
        f"{', '.join(map(repr, bad))} {what} of model {model.name!r} "
        f"({'; '.join(hints)}; see model.frame_names)",
    )


def _widen(closed: np.ndarray, t: np.ndarray, reach: float) -> np.ndarray:
    """``closed`` made True within ``reach`` seconds of any True sample (per contact)."""
    if reach <= 0 or not closed.any():
        return closed
    out = closed.copy()
    for c in range(closed.shape[1]):
        on = t[closed[:, c]]
        if on.size == 0:
            continue
        k = np.searchsorted(on, t)  # nearest closed times on either side
        before = np.abs(t - on[np.clip(k - 1, 0, on.size - 1)])
        after = np.abs(on[np.clip(k, 0, on.size - 1)] - t)
        out[:, c] |= np.minimum(before, after) <= reach
    return out


def contact_reach(prepared: PreparedLog) -> float:
    """Seconds by which a detected contact is widened: the low-pass's reach (0 without one)."""
    if prepared.lowpass is None:
        return 0.0
    rate0 = prepared.rate * prepared.decimate  # the log's own rate
    return tail_samples(rate0, prepared.lowpass, prepared.order, CONTACT_REACH_TAIL) / rate0


#: Regressor columns filtered at a time (bounds the memory of long logs).
_COLUMN_BLOCK = 8


@functools.partial(jax.jit, static_argnames=("frames",))
def _jacobians(model, q, frames):
    import spatialjax.multibody as mb

    return jnp.stack([mb.frame_jacobian(model, q, f, reference="local") for f in frames], axis=-3)


def contact_jacobians(model, q, frames) -> np.ndarray:
    """``(M, k, 6, nv)`` the contact frames' Jacobians, rows ``[ω; v]`` in each frame's axes."""
    M, nv = q.shape[0], model.nv
    if not frames:
        return np.zeros((M, 0, 6, nv))
    return np.asarray(_jacobians(model, jnp.asarray(q, model.dtype), tuple(frames)), np.float64)


def _projectors(Ja: np.ndarray, kept: np.ndarray):
    """``(P, C, r)`` per sample: onto the null and row space of ``Ja`` on the kept rows, rank."""
    M, _, nv = Ja.shape
    Ja = Ja * kept[:, None, :]  # an unknown torque's equation is dropped, not projected
    if Ja.shape[1]:
        _, sv, Vt = np.linalg.svd(Ja, full_matrices=True)
        smax = sv[:, :1]
        r = np.sum(sv > _RANK_RTOL * np.where(smax > 0, smax, np.inf), axis=1)  # (M,)
        sel = (np.arange(nv)[None, :] < r[:, None]).astype(np.float64)
        C = np.einsum("mkv,mk,mkw->mvw", Vt, sel, Vt)  # onto the contacts' motions
    else:
        r = np.zeros(M, np.int64)
        C = np.zeros((M, nv, nv))
    return kept[:, :, None] * np.eye(nv) - C, C, r


def _kept_equations(joints: tuple[str, ...], exclude: tuple[str, ...], unknown,
                    M: int) -> tuple[np.ndarray, np.ndarray | None]:  # fmt: skip
    """``(kept (M, 6 + n), unknown (M, n) or None)``: the equations kept at each sample."""
    n = len(joints)
    kept = np.ones((M, 6 + n), bool)
    kept[:, [6 + joints.index(j) for j in exclude]] = False
    if unknown is None:
        return kept, None
    u = np.asarray(unknown)
    if u.dtype != bool or u.shape != (M, n):
        raise IdentifyError(
            "unknown",
            f"expected booleans of shape (M, n) = ({M}, {n}) (the samples where each "
            f"joint's torque is unknown), got {u.dtype} of shape {u.shape}",
        )
    kept[:, 6:] &= ~u
    return kept, u


def _filter_projected(prepared: PreparedLog, x: np.ndarray, project, decimate: int):
    """``(log, filtered (M', K nv, c))``: ``parallel_filter`` of ``project(x)``, in blocks."""
    log, out = prepared, []
    for c in range(0, max(x.shape[-1], 1), _COLUMN_BLOCK):
        log, y = parallel_filter(
            prepared, project(x[..., c : c + _COLUMN_BLOCK]), decimate=decimate
        )
        out.append(y)
    return log, np.concatenate(out, axis=-1)


def _check_options(method, contact_type, contact_speed, decimate) -> None:
    """Refuse a bad ``method``, ``contact_type``, ``contact_speed`` or ``decimate``."""
    if method not in ("auto",) + METHODS:
        raise IdentifyError(
            "method", f"expected 'auto', 'wrenches' or 'projection', got {method!r}"
        )
    if contact_type not in CONTACT_TYPES:
        raise IdentifyError(
            "contact_type", f"expected one of {CONTACT_TYPES}, got {contact_type!r}"
        )
    if isinstance(contact_speed, bool) or not (
        isinstance(contact_speed, (int, float, np.integer, np.floating))
        and math.isfinite(contact_speed)
        and contact_speed > 0
    ):
        raise IdentifyError("contact_speed", f"expected a speed > 0 in m/s, got {contact_speed!r}")
    if isinstance(decimate, bool) or not (
        isinstance(decimate, (int, np.integer)) and decimate >= 1
    ):
        raise IdentifyError("decimate", f"expected a positive integer, got {decimate!r}")


def _check_floating_log(model, prepared: PreparedLog, decimate: int) -> None:
    """Refuse a fixed base, a decimated low-passed log, and joints that are not the model's."""
    if not getattr(model, "floating_base", False):
        raise IdentifyError(
            "model",
            f"{getattr(model, 'name', model)!r} is fixed-base; load it with "
            "floating_base=True for a floating-base log",
        )
    if not prepared.floating_base:
        raise IdentifyError("prepared", "the log has no base pose (a fixed-base log)")
    if prepared.decimate != 1 and prepared.lowpass is not None:
        raise IdentifyError(
            "prepared",
            f"expected the full-rate log (prepare_log with decimate=1), got "
            f"decimate={prepared.decimate}; pass decimate here instead",
        )
    if decimate > 1 and prepared.lowpass is None:
        raise IdentifyError(
            "decimate",
            f"{decimate} without a low-pass would alias noise; prepare the log with "
            "prepare_log(..., lowpass=...)",
        )
    n, nv = prepared.q.shape[1], model.nv
    if nv != 6 + n:
        raise IdentifyError(
            "prepared",
            f"{n} joint columns, but model {model.name!r} has {nv - 6} joints besides "
            "its free flyer (match the log's joints first: match_joints)",
        )


def _checked_columns(model, prepared: PreparedLog, Y, extra):
    """``(Y (M, nv, 10 nb), extra (M, nv, ne) or None)`` as float64, their shapes checked."""
    M, nv = prepared.q.shape[0], model.nv
    Y = np.asarray(Y, np.float64)
    if Y.ndim != 3 or Y.shape[:2] != (M, nv) or Y.shape[2] != 10 * model.nbodies:
        raise IdentifyError(
            "Y",
            f"expected shape (M, nv, 10 nb) = ({M}, {nv}, {10 * model.nbodies}) (the "
            f"regressor at prepared.state()), got shape {Y.shape}",
        )
    if extra is not None:
        extra = np.asarray(extra, np.float64)
        if extra.ndim != 3 or extra.shape[:2] != (M, nv):
            raise IdentifyError(
                "extra", f"expected shape (M, nv, ne) = ({M}, {nv}, ne), got shape {extra.shape}"
            )
    return Y, extra


def _checked_contact_frames(model, prepared: PreparedLog) -> tuple[str, ...]:
    """The log's contact frames, refused when it names none or one the model lacks."""
    frames = prepared.contact_frames
    if frames is None:
        raise IdentifyError(
            "prepared",
            "the log names no contact_frames; name the frames that touch the "
            "environment (with contact_wrenches or a contact schedule), or pass "
            "contact_frames=() for a robot without contacts",
        )
    check_contact_frames(model, frames)
    return frames


def _torque_joints(model, exclude_torque) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(joints, excluded)``: the model's joints besides the free flyer, ``exclude_torque``."""
    joints = tuple(nm for nm, ty in zip(model.joint_names, model.joint_types, strict=True)
                   if ty != "free_flyer")  # fmt: skip
    if isinstance(exclude_torque, str):
        raise IdentifyError(
            "exclude_torque",
            f"expected a sequence of joint names, got the string {exclude_torque!r}",
        )
    exclude = tuple(exclude_torque)
    for j in exclude:
        if j not in joints:
            raise IdentifyError(
                "exclude_torque",
                f"{j!r} is no joint of model {model.name!r} (joints: {', '.join(joints)})",
            )
    return joints, exclude


def _resolved_method(method: str, wrenches) -> str:
    """``"auto"`` resolved by whether the log has contact wrenches; "wrenches" needs them."""
    if method == "auto":
        method = "wrenches" if wrenches is not None else "projection"
    if method == "wrenches" and wrenches is None:
        raise IdentifyError(
            "method",
            "'wrenches' needs contact_wrenches in the log; without them use "
            "'projection' (the contact null space)",
        )
    return method


def _contact_schedule(prepared: PreparedLog, J, v, method: str, contact_speed) -> np.ndarray:
    """``(M, k)`` contacts closed: logged, all (wrenches), or detected by speed and widened."""
    if prepared.contact is not None:
        return np.asarray(prepared.contact, bool)
    if method == "wrenches":
        return np.ones(J.shape[:2], bool)
    speed = np.linalg.norm(np.einsum("mcrv,mv->mcr", J[:, :, 3:], v), axis=-1)
    return _widen(speed < contact_speed, prepared.t, contact_reach(prepared))


def _measured_side(prepared: PreparedLog, J, closed, method: str) -> np.ndarray:
    """``(M, nv)`` the measured side: ``Sᵀτ`` (+ ``Σ_c J_cᵀ w_c`` for "wrenches")."""
    M = prepared.q.shape[0]
    tau = prepared.tau if prepared.raw_tau is None else prepared.raw_tau
    m = np.concatenate([np.zeros((M, 6)), tau], axis=1)  # Sᵀτ
    if method == "wrenches":
        wrenches = prepared.contact_wrenches
        w = wrenches if prepared.raw_contact_wrenches is None else prepared.raw_contact_wrenches
        # an open contact's wrench is zero by definition: its sensor noise is left out
        m = m + np.einsum("mcrv,mcr->mv", J, w * closed[:, :, None])
    return m


class _RowOperators(NamedTuple):
    """Per sample: the parts' operators ``ops``, ``parts``, ``share``, ``rank``, ``diagonal``."""

    ops: tuple[np.ndarray, ...]
    parts: tuple[str, ...]
    share: list[np.ndarray]
    rank: np.ndarray
    diagonal: np.ndarray


def _row_operators(J, closed, kept, method: str, contact_type: str) -> _RowOperators:
    """The closed contacts' projectors (3 rows per point, 6 per surface) on the kept rows."""
    M, nv = J.shape[0], J.shape[-1]
    rows = slice(3, 6) if contact_type == "point" else slice(0, 6)
    Ja = (J[:, :, rows] * closed[:, :, None, None]).reshape(M, -1, nv)  # open: zero rows
    P, C, r = _projectors(Ja, kept)
    n_kept = kept.sum(axis=1)  # (M,): the base's six at least
    if method == "wrenches":
        return _RowOperators(
            ops=(P, C),
            parts=("free", "contact"),
            share=[(n_kept - r) / n_kept, r / n_kept],
            rank=n_kept.astype(np.int64),
            diagonal=kept.astype(np.float64),  # P + C: the kept rows
        )
    return _RowOperators(
        ops=(P,),
        parts=("free",),
        share=[(n_kept - r) / n_kept],
        rank=(n_kept - r).astype(np.int64),
        diagonal=np.diagonal(P, axis1=1, axis2=2).copy(),
    )


def _project(ops, x: np.ndarray) -> np.ndarray:
    """``(M', nv, c) -> (M', K nv, c)``: ``x`` through each of the ``K`` operators."""
    nv = ops[0].shape[-1]
    out = np.empty((x.shape[0], len(ops) * nv, x.shape[2]))
    for k, op in enumerate(ops):
        np.matmul(op, x, out=out[:, k * nv : (k + 1) * nv])
    return out


def _projected_rows(prepared: PreparedLog, ops, Y, extra, m, decimate: int):
    """``(log, Y, extra, measured)``: projected per sample, then filtered and decimated."""
    project = functools.partial(_project, ops)
    if prepared.lowpass is None:
        Er = None if extra is None else project(extra)
        return prepared, project(Y), Er, project(m[..., None])[..., 0]
    log, Yr = _filter_projected(prepared, Y, project, decimate)
    Er = None if extra is None else _filter_projected(prepared, extra, project, decimate)[1]
    mr = _filter_projected(prepared, m[..., None], project, decimate)[1][..., 0]
    return log, Yr, Er, mr


def _at_row_samples(prepared: PreparedLog, op: _RowOperators, closed, unknown, decimate: int):
    """``(share, rank, closed, unknown, diagonal)`` at the rows' (decimated) samples."""
    if prepared.lowpass is None:
        return op.share, op.rank, closed, unknown, op.diagonal
    _, diagonal = parallel_filter(prepared, op.diagonal[..., None], decimate=decimate)
    keep = slice(prepared.edge, prepared.q.shape[0] - prepared.edge, decimate)
    return (
        [x[keep] for x in op.share],
        op.rank[keep],
        closed[keep],
        None if unknown is None else unknown[keep],
        diagonal[..., 0],
    )


def floating_base_rows(
    model,
    prepared: PreparedLog,
    Y,
    extra=None,
    *,
    decimate: int = 1,
    method: str = "auto",
    contact_type: str = "point",
    contact_speed: float = CONTACT_SPEED,
    exclude_torque=(),
    unknown=None,
) -> FloatingBaseRows:
    """The identification equations of a floating-base log: all rows, or projected on the contacts.

    The rows are formed at the full rate, then (with a low-pass) filtered alike and
    decimated by ``decimate``. Derivation: docs page
    ``identification-methods.md#floating-base``.

    Args:
      model: the floating-base [Model][spatialjax.multibody.Model] (free
        flyer, ``nv = 6 + n``) whose joints are the log's, in model order.
      prepared: the [PreparedLog][spatialjax.identification.PreparedLog] of a
        floating-base log with ``contact_frames``, at the log's full rate
        (``prepare_log(..., decimate=1)``) when it was low-passed.
      Y: ``(M, nv, 10 nb)`` joint-torque regressor at ``prepared.state()``.
      extra: optional ``(M, nv, ne)`` extra columns at ``prepared.state()``
        (friction), treated as ``Y``.
      decimate: keep every ``decimate``-th sample after filtering (needs a
        low-pass above 1).
      method: ``"wrenches"`` (needs ``contact_wrenches``), ``"projection"``, or
        ``"auto"`` (default: ``"wrenches"`` when the log has contact wrenches).
      contact_type: ``"point"`` (three force rows per contact, the default) or
        ``"surface"`` (six rows).
      contact_speed: speed (m/s) below which a contact counts as closed where
        the log has no ``contact`` schedule.
      exclude_torque: joints whose torque is not known: their equations are
        dropped before the projection.
      unknown: optional ``(M, n)`` booleans: the samples at which a joint's
        torque is unknown; its equation is dropped there.

    Returns:
      [FloatingBaseRows][spatialjax.identification.FloatingBaseRows] (float64
      NumPy), with ``log`` the filtered and decimated samples they were formed on.

    Raises:
      ValueError: a fixed-base model or log; a low-passed ``prepared`` that was
        decimated; an ``exclude_torque`` name that is no joint; ``Y``,
        ``extra`` or ``unknown`` of the wrong shape; no ``contact_frames`` in
        the log; a contact frame that is not a frame of the model (naming it and
        the closest names); ``method="wrenches"`` without wrenches; an unknown
        ``method`` or ``contact_type``; ``contact_speed`` not positive;
        ``decimate`` not a positive integer, above 1 without a low-pass, or too
        large for the cut-off.
      TypeError: ``prepared`` is not a PreparedLog.
    """
    if not isinstance(prepared, PreparedLog):
        raise IdentifyTypeError(
            "prepared", f"expected a PreparedLog (prepare_log), got {type(prepared).__name__}"
        )
    _check_options(method, contact_type, contact_speed, decimate)
    _check_floating_log(model, prepared, decimate)
    Y, extra = _checked_columns(model, prepared, Y, extra)
    frames = _checked_contact_frames(model, prepared)
    joints, exclude = _torque_joints(model, exclude_torque)
    M, n = prepared.q.shape
    nv = model.nv
    kept, unknown = _kept_equations(joints, exclude, unknown, M)  # (M, nv)
    method = _resolved_method(method, prepared.contact_wrenches)

    # at the full rate: contact Jacobians, the schedule, the measured side, the projector
    q, v, _ = prepared.state()
    J = contact_jacobians(model, q, frames)
    closed = _contact_schedule(prepared, J, v, method, contact_speed)
    m = _measured_side(prepared, J, closed, method)
    op = _row_operators(J, closed, kept, method, contact_type)
    # projected sample by sample, then filtered alike (exact: the filter is linear)
    log, Yr, Er, mr = _projected_rows(prepared, op.ops, Y, extra, m, decimate)
    share, rank, closed, unknown, diagonal = _at_row_samples(
        prepared, op, closed, unknown, decimate
    )

    names = BASE_ROWS + joints
    parts = op.parts
    multiplicity = np.repeat(np.stack(share, axis=1), nv, axis=1).astype(np.float64)
    if unknown is not None:  # an equation dropped at a sample stands for none there
        live = np.concatenate([np.ones((unknown.shape[0], 6), bool), ~unknown], axis=1)
        multiplicity *= np.tile(live, (1, len(parts)))
    return FloatingBaseRows(
        Y=Yr,
        extra=Er,
        measured=mr,
        multiplicity=multiplicity,
        row_names=names + tuple(f"{nm}@contact" for nm in names) * (len(parts) - 1),
        groups=(("base",) * 6 + ("joint",) * n) * len(parts),
        parts=tuple(p for p in parts for _ in range(nv)),
        rank=rank,
        method=method,
        contact_frames=tuple(frames),
        contact=closed,
        log=log,
        diagonal=np.asarray(diagonal, np.float64),
        excluded=tuple(exclude),
        unknown=unknown,
    )
