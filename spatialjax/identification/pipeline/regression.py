"""Stage 4, **regressor**: joint-torque and joint-model columns, parallel-filtered, decimated."""

from __future__ import annotations

import dataclasses

import numpy as np

from .filtering import Filtered, part_argument, part_error
from .host_regressor import host_regressors, live_columns
from .options import IdentifyError, Options
from .prior import Prior


@dataclasses.dataclass(frozen=True, eq=False)
class Regressors:
    """Per part of ``Filtered`` (training, held-out, validation logs), float64.

    Attributes:
      Y: ``(N, nv, 10 nb)`` joint-torque regressors of every body.
      F: ``(N, nv, ne)`` joint-model regressors (``JointModel.regressor``:
        armature, viscous, Coulomb, offset columns of the kinds modelled).
      tau: ``(N, nv)`` measured torques, filtered and decimated like the columns.
      dq: ``(N, nv)`` joint velocities on the same samples.
      n_free: bodies identified.
      lowpass: the low-pass used (the columns are parallel-filtered), or None.
      decimate: the decimation used.
      n_hold: held-out samples after decimation (0 without a held-out part).
      q: ``(N, nq)`` joint positions on the same samples (the armature prior's ``M(q)``;
        a floating base's with its free flyer's first).
      ddq: ``(N, n)`` joint accelerations on the same samples (the channel checks).
      kinds: the joint-model kinds of ``F``'s columns.
      rows: for a floating base, the
        [FloatingBaseRows][spatialjax.identification.FloatingBaseRows] of every
        part (then ``Y``, ``F``, ``tau`` are its ``Y``, ``extra``, ``measured``:
        ``K R`` rows per sample in place of ``nv`` joints, and ``dq`` the joint
        velocities); ``()`` for a fixed base.
      unknown: the joints whose torque the floating-base rows treat as unknown
        (left out by the user or without signal).
      description: the floating base's words for the stage line (``""`` for a
        fixed base).
      gravity: the gravity in the regressors, m/s², world frame (the stage line states it).
    """

    Y: tuple[np.ndarray, ...]
    F: tuple[np.ndarray, ...]
    tau: tuple[np.ndarray, ...]
    dq: tuple[np.ndarray, ...]
    n_free: int
    lowpass: float | None
    decimate: int
    n_hold: int
    q: tuple[np.ndarray, ...] = ()
    ddq: tuple[np.ndarray, ...] = ()
    kinds: tuple[str, ...] = ()
    rows: tuple = ()
    unknown: tuple[str, ...] = ()
    description: str = ""
    gravity: tuple[float, ...] = ()

    @property
    def n_train(self) -> int:
        """Training samples after decimation."""
        return self.Y[0].shape[0]

    @property
    def ne(self) -> int:
        """Joint-model columns."""
        return self.F[0].shape[-1]

    def free_columns(self, free_mask: np.ndarray) -> np.ndarray:
        """``(10 nb,)`` the columns of the free bodies."""
        return np.repeat(free_mask, 10)

    def held_torque(self, k: int, prior: Prior) -> np.ndarray:
        """``(N, nv)`` on part ``k``: the torque of the bodies held at the model's values."""
        cols = self.free_columns(prior.free_mask)
        return self.Y[k][..., ~cols] @ prior.model[~prior.free_mask].reshape(-1)

    def describe(self) -> tuple[str, tuple[str, ...]]:
        """The stage line and its detail lines."""
        if self.rows:
            return self._describe_rows()
        _, nv, ncol = self.Y[0].shape
        nb = ncol // 10
        free = f"; {10 * self.n_free} columns of the {self.n_free} free bodies"
        text = (
            f"Y {nv}×{ncol} (10 per body"
            + (free if self.n_free < nb else "")
            + f") + {self.ne} joint-model columns ({', '.join(self.kinds) or 'none'} per joint) "
            + "per sample"
            + (", parallel-filtered (Gautier 1997)" if self.lowpass else "")
            + f", decimated by {self.decimate}: fit on {self.n_train} samples, "
            + f"{self.n_hold} held out"
        )
        return text, self._gravity_lines()

    def _gravity_lines(self) -> tuple[str, ...]:
        if not self.gravity:
            return ()
        from .checks import gravity_text

        return (
            f"gravity {gravity_text(self.gravity)} m/s² in the world frame (a fixed base's root "
            "frame: an upright robot's is (0, 0, -9.81); a wall, ceiling or tilted mount needs "
            "its own, --gravity)",
        )

    def _describe_rows(self) -> tuple[str, tuple[str, ...]]:
        ncol = self.Y[0].shape[-1]
        nb = ncol // 10
        free = f" ({10 * self.n_free} of the {self.n_free} free bodies)" if self.n_free < nb else ""
        text = (
            f"Y {self.rows[0].n_dof}×{ncol}{free} + {self.ne} joint-model columns "
            + f"({', '.join(self.kinds) or 'none'} per joint) per sample"
            + (", parallel-filtered (Gautier 1997)" if self.lowpass else "")
            + f", decimated by {self.decimate}: fit on {self.n_train} samples "
            + f"({self.rows[0].n_equations} equations), {self.n_hold} held out"
        )
        return text, (self.description, *self._gravity_lines())


def mass_diagonal(model, q, joint_model) -> np.ndarray:
    """``(M, nv)`` the diagonal of the joint-space inertia ``M(q)`` without armature, float64.

    ``M_jj(q) = Y(q, 0, e_j)_j · π`` with gravity zero (RNEA at rest with a
    unit acceleration of joint ``j``; Featherstone 2008, §5.3), ``π`` the
    model's bodies: computed by ``host_regressors`` (NumPy, nothing to compile).

    Args:
      model: a [Model][spatialjax.multibody.Model].
      q: ``(M, nq)`` configurations.
      joint_model: a [JointModel][spatialjax.multibody.JointModel] (its columns are
        not used).

    Returns:
      ``(M, nv)``: ``M_jj`` at each configuration, the free flyer's first for a floating base.
    """

    q = np.asarray(q, np.float64)
    M, nv = q.shape[0], model.nv
    acc = np.tile(np.eye(nv), (M, 1))  # sample k, joint j at row k nv + j
    Y, _ = host_regressors(model, np.repeat(q, nv, axis=0), np.zeros_like(acc), acc,
                           np.zeros(3), joint_model)  # fmt: skip
    pi = np.asarray(model.inertia.params, np.float64).reshape(-1)
    rows = Y[np.arange(M * nv), np.tile(np.arange(nv), M)]  # (M nv, 10 nb): row j of sample k
    return (rows @ pi).reshape(M, nv)


def _part(model, g, joint_model, part: str, p, lowpass, K: int, holdout: float, arg: str):
    """``(Y, F, tau, dq, q, ddq)`` of one prepared part, parallel-filtered and decimated.

    The regressor's live entries (``host_regressor.LiveColumns``, samples last) are
    filtered and decimated before the zero entries are added back: the full-rate
    regressor is never stored whole.
    """
    from ..logs.preprocess import parallel_filter_last

    live = live_columns(model, p.q, p.dq, p.ddq, g, joint_model)
    values = live.values
    if lowpass:
        try:
            p, values = parallel_filter_last(p, values, decimate=K)
        except IdentifyError as e:
            raise part_error(e, part, p.n_samples, holdout, lowpass, arg) from None
    Yp, Fp = live.dense(values)
    return (Yp, Fp, np.asarray(p.tau, np.float64), np.asarray(p.dq, np.float64),
            np.asarray(p.q, np.float64), np.asarray(p.ddq, np.float64))  # fmt: skip


def _floating_parts(model, g, filtered: Filtered, opts: Options, unknown) -> Regressors:
    """The floating-base rows of every part (``floating.rows_of_part``)."""
    from . import floating_base as floating

    K, lowpass = filtered.decimate, filtered.lowpass
    rows = []
    rest = "coulomb" in opts.joint_model.kinds  # the training part's rest rule
    for k, ((part, _), p) in enumerate(zip(filtered.parts, filtered.prepared, strict=True)):
        try:
            rows.append(floating.rows_of_part(model, g, opts, p, decimate=K if lowpass else 1,
                                              unknown=unknown, rest=rest and k == 0))  # fmt: skip
        except IdentifyError as e:
            arg = part_argument(k, 2 if filtered.n_raw_hold else 1)
            raise part_error(e, part, p.n_samples, opts.holdout, lowpass, arg) from None
    F = tuple(r.extra if r.extra is not None else np.zeros(r.Y.shape[:2] + (0,)) for r in rows)
    return Regressors(
        tuple(r.Y for r in rows), F, tuple(r.measured for r in rows),
        tuple(np.asarray(r.log.dq, np.float64) for r in rows), int(opts.free_mask.sum()),
        lowpass, K, rows[1].n_samples if filtered.n_raw_hold else 0,
        q=tuple(np.asarray(r.log.state()[0], np.float64) for r in rows),
        ddq=tuple(np.asarray(r.log.ddq, np.float64) for r in rows),
        kinds=opts.joint_model.kinds, rows=tuple(rows), unknown=tuple(unknown),
        description=floating.describe(rows[0], filtered.prepared[0], opts),
        gravity=tuple(opts.gravity),
    )  # fmt: skip


def regressor_stage(model, filtered: Filtered, opts: Options, unknown=()) -> Regressors:
    """The regressors of every part (RNEA regressor, Atkeson, An & Hollerbach 1986; joint model).

    For a floating base, the equations of
    [floating_base_rows][spatialjax.identification.floating_base_rows] (the
    regressor at the full rate, then projected, filtered and decimated), with
    the torques of ``unknown`` joints treated as unknown.

    Raises:
      IdentifyError: ``"log"``, fewer torque equations than parameters;
        ``"lowpass"``/``"holdout"``, a part too short for parallel filtering.
    """

    g = np.asarray(opts.gravity, np.float64)
    K, lowpass = filtered.decimate, filtered.lowpass
    if opts.floating_base:
        regs = _floating_parts(model, g, filtered, opts, unknown)
        n_params = 10 * regs.n_free + regs.ne
        n_eq = regs.rows[0].n_equations
        if n_eq <= n_params:
            raise IdentifyError(
                "log",
                f"column 't': {regs.n_train} training samples (after filtering and decimation "
                f"by {K}) give {n_eq} independent equations, not more than the {n_params} "
                "parameters to identify (10 per body + the joint model's); record a longer log "
                "or decimate less",
            )
        return regs
    out = [
        _part(
            model,
            g,
            opts.joint_model,
            part,
            p,
            lowpass,
            K,
            opts.holdout,
            part_argument(k, 2 if filtered.n_raw_hold else 1),
        )
        for k, ((part, _), p) in enumerate(zip(filtered.parts, filtered.prepared, strict=True))
    ]
    Y, F, tau, dq, q, ddq = (tuple(x) for x in zip(*out, strict=True))
    n_free = int(opts.free_mask.sum())
    regs = Regressors(Y, F, tau, dq, n_free, lowpass, K,
                      Y[1].shape[0] if filtered.n_raw_hold else 0, q=q, ddq=ddq,
                      kinds=opts.joint_model.kinds, gravity=tuple(opts.gravity))  # fmt: skip
    n_params = 10 * n_free + regs.ne
    if regs.n_train * model.nv <= n_params:
        raise IdentifyError(
            "log",
            f"column 't': {regs.n_train} training samples (after filtering and decimation by {K}) "
            f"give {regs.n_train * model.nv} joint-torque equations, not more than the {n_params} "
            "parameters to identify (10 per body + the joint model's); record a longer log or "
            "decimate less",
        )
    return regs
