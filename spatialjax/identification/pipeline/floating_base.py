"""The floating-base branch of the stages: contacts checked, the rows, their channels, errors.

A floating-base log (a base pose, contact frames, contact wrenches or a
schedule) is identified through the equations of
[floating_base_rows][spatialjax.identification.floating_base_rows]: each
sample gives ``R = 6 + n`` equations (the base's six rows first), one block
per part (``"wrenches"``: the free part and the contacts' part, ``2R`` rows;
``"projection"``: the contacts' null space, ``R`` rows of which ``R −
rank J_a`` are independent). The stages treat each row as a channel of its
own: its noise level and correlation time, its weight, and its multiplicity
(the independent equations it stands for) in the data term. These helpers
keep that branch out of the fixed-base stages' code.
"""

from __future__ import annotations

import numpy as np

from .options import IdentifyError, Options

#: ``P_jj`` below which a joint's projected equation no longer tells its torque (channel check).
DIAGONAL_FLOOR = 1e-3
#: Fraction of a joint's median filtered ``P_jj`` below which the channel check's ratio is
#: taken at that floor (a contact switching, or a rest starting: the filtered ratio of two
#: stepped signals is no longer a sample's ratio).
DIAGONAL_SHARE = 0.25


def check_contacts(model, arg: str, log, opts: Options) -> None:
    """A floating-base log's contact frames and wrenches, checked before any filtering.

    Raises:
      IdentifyError: ``arg`` (``"log"`` or ``"validate[k]"``) for a log without
        ``contact_frames`` or with frames the model lacks (naming each, with the
        closest names); ``"contact_method"`` for ``"wrenches"`` without wrenches.
    """
    from ..fitting.floating_rows import check_contact_frames

    if log.contact_frames is None:
        raise IdentifyError(
            arg,
            "names no contact_frames: name the model frames that touch the environment (with "
            "contact_wrenches, or a contact schedule 'contact', or neither: then a contact "
            "counts as closed while its frame stands still), or give contact_frames=() for a "
            "robot without contacts",
        )
    try:
        check_contact_frames(model, log.contact_frames)
    except IdentifyError as e:
        raise IdentifyError(arg, str(e)) from None
    if opts.contact_method == "wrenches" and log.contact_wrenches is None:
        raise IdentifyError(
            "contact_method",
            f"'wrenches' needs contact_wrenches, but the {'log' if arg == 'log' else arg} has "
            "none; without them use 'projection' (the contacts' null space) or 'auto'",
        )


def rest_samples(prepared, decimate: int) -> np.ndarray:
    """``(M, n)`` the samples of a full-rate part where each joint rests (``moving_samples``'
    rule, the fixed base's ``rest_rule``), its velocity noise estimated on the samples the
    rows keep (every ``decimate``-th inside the filter's edges, as a fixed base's)."""
    from ..priors.joint_prior import moving_samples, velocity_noise

    dq = np.asarray(prepared.dq, np.float64)
    edge = prepared.edge if prepared.lowpass is not None else 0
    kept = dq[edge : dq.shape[0] - edge : decimate]
    noise = velocity_noise(kept if kept.shape[0] >= 3 else dq)
    return ~moving_samples(dq, noise=noise)


def rows_of_part(model, g, opts: Options, p, *, decimate: int, unknown: tuple[str, ...],
                 rest: bool = False):  # fmt: skip
    """``floating_base_rows`` of one prepared part (the regressor at its full rate).

    ``rest``: a joint's equation is dropped at the samples where it rests
    (``rest_samples``; the training part, with Coulomb friction modelled): its
    static friction there is an unknown torque, as a fixed base's rest rule has it.

    Raises:
      IdentifyError: from ``floating_base_rows`` (the caller names the part).
    """
    from ..fitting.floating_rows import floating_base_rows
    from .host_regressor import host_regressors

    q, v, a = p.state()
    Y, F = host_regressors(model, q, v, a, g, opts.joint_model)
    return floating_base_rows(
        model, p, Y, F if F.shape[-1] else None, decimate=decimate,
        method=opts.contact_method, contact_type=opts.contact_type,
        contact_speed=opts.contact_speed, exclude_torque=unknown,
        unknown=rest_samples(p, decimate) if rest else None,
    )  # fmt: skip


def row_moving(rows) -> np.ndarray | None:
    """``(N, K R)`` the rows' samples in the data term: a joint's rows leave at the samples
    where its torque was unknown (``rows.unknown``: at rest), the base rows stay; None
    without ``rows.unknown``."""
    if rows.unknown is None:
        return None
    per = np.concatenate([np.ones((rows.n_samples, 6), bool), ~rows.unknown], axis=1)
    return np.tile(per, (1, len(rows.parts) // rows.n_dof))


def row_mask(rows, used: np.ndarray) -> np.ndarray:
    """``(K R,)`` the rows in the data term: the base rows, and the joints' of ``used (n,)``."""
    per = np.concatenate([np.ones(6, bool), np.asarray(used, bool)])
    return np.tile(per, len(rows.parts) // rows.n_dof)


def channel_torques(rows, params: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(τ (N, n), τ̂ (N, n))``: the filtered joint torques and those the bodies ``params``
    predict, for the channel checks.

    With measured wrenches ``τ̂_j = τ_j + r_j`` (``r = Yπ − Sᵀτ − Σ J_cᵀ w_c``,
    the prior's residual: ``(Yπ − Σ J_cᵀ w_c)_j``). With the projection the
    contact forces are unknown; ``τ̂_j`` is then the torque of joint ``j`` that
    best satisfies the projected equations with the other channels as measured,
    ``τ_j + (P r)_j / P_jj`` (``P`` the sample's projector: the torque enters
    as ``P Sᵀ e_j τ_j``, of squared norm ``P_jj``). The rows are filtered, so
    ``P r`` and ``P_jj`` are too: where ``P`` steps (a contact switching, a
    joint's equation dropped while it rests) their ratio is no longer a
    sample's, and the filter's ringing can take ``P_jj`` to 0 or below. The
    ratio is therefore taken at a floor where ``P_jj`` falls below
    ``DIAGONAL_SHARE`` of its median over the samples where the joint's
    torque is known (never below ``DIAGONAL_FLOOR``, where the equations hardly
    see the joint).
    """
    resid = rows.combine(rows.predict(params, np.zeros(_extra_width(rows))) - rows.measured)
    tau = np.asarray(rows.log.tau, np.float64)
    diag = rows.diagonal[:, 6:]
    known = np.ones(diag.shape, bool) if rows.unknown is None else ~rows.unknown
    floor = np.array([DIAGONAL_SHARE * np.median(diag[known[:, j], j]) if known[:, j].any()
                      else 0.0 for j in range(diag.shape[1])])  # fmt: skip
    d = np.maximum(diag, np.maximum(floor, DIAGONAL_FLOOR))
    return tau, tau + resid[:, 6:] / d


def _extra_width(rows) -> int:
    return 0 if rows.extra is None else rows.extra.shape[-1]


def base_check(rows, params: np.ndarray) -> dict | None:
    """The base rows' scale and sign against the prior (measured wrenches only; else None).

    ``Σ_c J_cᵀ w_c`` on the base rows against the prior's ``Y π`` there
    (``base_row_check``): the contact wrenches' sign convention, units and axes.
    """
    from ..logs.channel_checks import base_row_check

    if rows.method != "wrenches":
        return None
    measured = rows.combine(rows.measured)[:, :6]
    predicted = rows.combine(rows.predict(params, np.zeros(_extra_width(rows))))[:, :6]
    return base_row_check(measured, predicted)


def base_warnings(check: dict | None) -> tuple[str, ...]:
    """The plain-words warning of a base-row check that failed (none when it agrees)."""
    if check is None or check["verdict"] not in ("sign", "scale"):
        return ()
    if check["verdict"] == "sign":
        kind = "the opposite sign of"
        hint = (
            "the log's wrenches look like those the robot exerts on the environment; give the "
            "environment's on the robot (their negative)"
        )
    else:
        kind = f"{check['scale']:.3g}× (more than 3× off)"
        hint = "units (N, N·m)?"
    return (
        f"contact wrenches: the base rows they give (Σ J_cᵀ w_c, the wrenches in each contact "
        f"frame's own axes about its origin) are {kind} those the prior predicts (rms ratio "
        f"{check['rms_ratio']:.3g}): {hint}",
    )


def rows_per_sample(rows) -> dict:
    """``{min, max, mean}`` independent equations per sample."""
    r = np.asarray(rows.rank)
    return {"min": int(r.min()), "max": int(r.max()), "mean": float(r.mean())}


def schedule(prepared) -> str:
    """How the contacts were known: ``"logged"``, ``"detected"`` or ``"all closed"``."""
    if prepared.contact is not None:
        return "logged"
    return "all closed" if prepared.contact_wrenches is not None else "detected"


def describe(rows, prepared, opts: Options) -> str:
    """The regressor stage's words on the floating base: method, rows per sample, contacts."""
    frames = rows.contact_frames
    n = rows.n_dof
    sched = schedule(prepared)
    if rows.method == "wrenches":
        how = (
            f"floating base: measured contact wrenches, all {n} equations per sample (as 2×{n} "
            "rows: the contacts' part weighted apart)"
        )
    else:
        rp = rows_per_sample(rows)
        span = f"{rp['min']}" if rp["min"] == rp["max"] else f"{rp['min']}–{rp['max']}"
        how = (
            f"floating base: projection onto the contacts' null space, {span} of {n} equations "
            f"per sample (mean {rp['mean']:.2f})"
        )
    where = (
        f"; {len(frames)} {opts.contact_type} contact(s) {', '.join(frames)}, schedule {sched}"
        + (f" (closed below {opts.contact_speed:g} m/s)" if sched == "detected" else "")
        if frames
        else "; no contact frames"
    )
    unknown = f"; torques unknown on {', '.join(rows.excluded)}" if rows.excluded else ""
    return how + where + unknown


def contact_share(rows) -> dict:
    """``{frame: fraction of the samples it is closed}`` on the rows' samples."""
    c = np.asarray(rows.contact, bool)
    return {f: float(c[:, k].mean()) if c.size else 0.0 for k, f in enumerate(rows.contact_frames)}


def residual_variance(Y, F, tau, pi, phi, w, chunk: int = 256):
    """``(residuals (N, K R), σ̂² (K R,))`` of a fit of the rows, weighted by ``w (N, K R)``.

    ``σ̂_r² = Σ_n w_nr e_nr² / (Σ_n w_nr · (1 − rank / Σ w))``: the mean squared
    residual of row ``r`` over the equations it stands for (``w`` = row used ×
    multiplicity), corrected for the parameters fitted (``rank``: of the
    column-scaled weighted rows, from their normal matrix, accumulated ``chunk``
    samples at a time, eigenvalues above ``10 p eps`` of the largest). Rows
    that stand for no equation get 0.
    """
    res = tau - Y @ pi - (F @ phi if F.shape[-1] else 0.0)
    p = Y.shape[-1] + F.shape[-1]
    G = np.zeros((p, p))
    for i in range(0, Y.shape[0], chunk):
        X = np.concatenate([Y[i : i + chunk], F[i : i + chunk]], -1)
        X = (X * np.sqrt(w[i : i + chunk])[..., None]).reshape(-1, p)
        G += X.T @ X
    d = np.sqrt(np.maximum(np.diag(G), 0.0))
    live = d > np.sqrt(np.finfo(np.float64).eps) * d.max() if d.max() > 0 else d > 0
    ev = np.linalg.eigvalsh(G[np.ix_(live, live)] / np.outer(d[live], d[live]))
    rank = int(np.sum(ev > 10 * p * np.finfo(np.float64).eps * ev.max())) if ev.size else 0
    n_eq = float(np.sum(w))
    frac = max(1.0 - rank / n_eq, 1e-12) if n_eq > 0 else 1.0
    num = np.sum(w * res * res, axis=0)
    den = np.sum(w, axis=0) * frac
    return res, np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
