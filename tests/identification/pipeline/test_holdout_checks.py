"""The held-out check says what it measures: rows at rest, a part at rest, a joint worse than zero.

Reference values: the log's own construction (a trajectory that ramps to rest before the
held-out part ends; one joint's torque flipped in the held-out part only; a training part of a
few hundred samples), and for the errors a direct NumPy computation: the fit's parameters
times the held-out regressors, over the samples where each joint moves faster than the
training part's rest threshold ``max(3 σ̂, 0.05 rms q̇)`` (``σ̂ = 1.4826 MAD(Δ² q̇) / √6``),
written out here.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import numpy as np
import pytest

import spatialjax.multibody as mb
from spatialjax import identification as ident
from spatialjax._util import x64
from spatialjax.identification.output.report import ErrorFigures, Errors, PartErrors
from spatialjax.identification.pipeline.checks import holdout_warnings
from spatialjax.identification.pipeline.filtering import filter_stage
from spatialjax.identification.pipeline.options import IdentifyOptions, resolve
from spatialjax.identification.pipeline.regression import regressor_stage

ARM = """<robot name="arm">
  <link name="base"/>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <axis xyz="0 0 1"/><limit lower="-2.5" upper="2.5" effort="50" velocity="3"/></joint>
  <link name="l1"><inertial><origin xyz="0.2 0 0"/><mass value="2"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.03"/></inertial></link>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.4 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-2.5" upper="2.5" effort="50" velocity="3"/></joint>
  <link name="l2"><inertial><origin xyz="0.15 0 0"/><mass value="1"/>
    <inertia ixx="0.005" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
</robot>"""
FRICTION = np.array([[0.1, 0.5, 0.0], [0.05, 0.3, 0.0]])  # viscous, Coulomb, offset
DURATION, RATE = 20.0, 500.0
NEW_WARNINGS = ("mostly at rest", "worse than zero", "worse than the prior", "has norm")


# ------------------------------------------------------------------ the rules, on figures
def _fig(per_joint, overall):
    return ErrorFigures(overall=overall, per_joint=per_joint)


def _errors(fit, prior):
    return Errors(fit=PartErrors(None, fit), least_squares=PartErrors(None, fit),
                  prior=PartErrors(None, prior))  # fmt: skip


def test_the_rules_on_figures():
    kw = dict(joints=("a", "b"), used=np.array([True, True]), holdout=0.2, counts="N samples")
    fine = _errors(_fig({"a": 0.02, "b": 0.9}, 0.1), _fig({"a": 0.3, "b": 0.5}, 0.4))
    assert holdout_warnings(fine, (), [0.5], **kw) == ()
    # an exact prior: the fit's noise-level error may be twice the prior's, not 0.05 above it
    exact = _errors(_fig({"a": 0.002, "b": 0.003}, 0.003), _fig({"a": 1e-3, "b": 1e-3}, 1e-3))
    assert holdout_warnings(exact, (), [0.0], **kw) == ()
    (w,) = holdout_warnings(fine, (), [0.55], **kw)
    assert "the held-out part (the last 20 % of the log) is mostly at rest" in w
    assert "every fitted joint rests in 55 % of its samples" in w and "--validate" in w
    bad = _errors(_fig({"a": 0.01, "b": 1.3}, 0.9), _fig({"a": 0.3, "b": 0.2}, 0.25))
    w0, w1 = holdout_warnings(bad, (), [0.0], **kw)
    assert "the torque of b (1.3) worse than zero" in w0 and "a (" not in w0
    assert "coupled transmission" in w0 and "--torque-scale" in w0 and "--gravity" in w0
    assert "3.6× worse than the prior" in w1 and "0.9 against 0.25" in w1 and "N samples" in w1
    # a channel left out of the fit is not judged
    kw["used"] = np.array([True, False])
    assert holdout_warnings(bad, (), [0.0], **kw)[0].startswith("the held-out part")
    assert not any("worse than zero" in x for x in holdout_warnings(bad, (), [0.0], **kw))


# ------------------------------------------------------------------ identify_robot
def _ramp_to_rest(t, q, dq, ddq, t_stop: float, ramp: float):
    """``s(t) q`` with ``s`` a raised cosine from 1 to 0 over ``[t_stop − ramp, t_stop]``, 0 after;
    exact derivatives (the product rule)."""
    u = np.clip((t - (t_stop - ramp)) / ramp, 0.0, 1.0)[:, None]
    on = ((t > t_stop - ramp) & (t < t_stop))[:, None]
    s = 0.5 * (1 + np.cos(np.pi * u))
    ds = np.where(on, -0.5 * np.pi / ramp * np.sin(np.pi * u), 0.0)
    dds = np.where(on, -0.5 * (np.pi / ramp) ** 2 * np.cos(np.pi * u), 0.0)
    return s * q, ds * q + s * dq, dds * q + 2 * ds * dq + s * ddq


@pytest.fixture(scope="module")
def arm(tmp_path_factory):
    """The arm, a log moving to its end, and the same trajectory resting its last 12 %."""
    urdf = tmp_path_factory.mktemp("arm") / "arm.urdf"
    urdf.write_text(ARM)
    with x64():
        model = mb.Model.from_urdf(urdf, dtype="float64")
        k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
        traj = ident.excitation_trajectory(2, duration=DURATION, rate=RATE, key=k1,
                                           q_limits=[[-2.0, 2.0]] * 2, dq_limits=2.0)  # fmt: skip
        t, q, dq, ddq = (np.asarray(x) for x in traj)
        true = ident.perturb_inertia(model.inertia, 0.2, k2)
        kw = dict(key=k3, inertia=true, friction=FRICTION, torque_noise=0.01,
                  encoder_resolution=2 * np.pi / 2**18, position_noise=1e-5)  # fmt: skip
        moving = ident.simulate_log(model, t, q, dq, ddq, **kw)
        rest = ident.simulate_log(model, t, *_ramp_to_rest(t, q, dq, ddq, 0.88 * DURATION, 0.5),
                                  **kw)  # fmt: skip
    return model, moving, rest


def _rest_threshold(dq):
    """``max(3 σ̂, 0.05 rms)`` per column, written out (``moving_samples``' rule)."""
    d2 = np.diff(dq, n=2, axis=0)
    sigma = 1.4826 * np.median(np.abs(d2 - np.median(d2, axis=0)), axis=0) / math.sqrt(6.0)
    return np.maximum(3 * sigma, 0.05 * np.sqrt(np.mean(dq**2, axis=0)))


@pytest.mark.slow  # compiles a fit
def test_a_held_out_part_mostly_at_rest_is_warned_and_judged_on_its_moving_rows(arm):
    model, _, log = arm
    with x64():
        res = ident.identify_robot(model, log)
    rep = res.report.to_dict()
    (w,) = [w for w in res.warnings if "mostly at rest" in w]
    assert w.startswith("the held-out part (the last 20 % of the log) is mostly at rest")
    assert not any("worse than" in w for w in res.warnings)
    # the held-out regressors as the run formed them (its filter), and the fit's parameters
    opts = resolve(
        model, log,
        IdentifyOptions(lowpass=rep["filter"]["lowpass"], decimate=rep["filter"]["decimate"]),
    )  # fmt: skip
    with x64():
        filtered = filter_stage((log,), lowpass=opts.lowpass, decimate=opts.decimate, holdout=0.2)
        regs = regressor_stage(model, filtered, opts)
    thr = _rest_threshold(regs.dq[0])
    rows = np.abs(regs.dq[1]) > thr
    assert 0.05 < rows.mean() < 0.5  # mostly at rest, some motion
    phi = res.joint_parameters["fit"].reshape(-1)  # joint-major, the kinds in order
    pred = regs.Y[1] @ res.params["fit"].reshape(-1) + regs.F[1] @ phi
    err, tau = np.where(rows, pred - regs.tau[1], 0.0), np.where(rows, regs.tau[1], 0.0)
    fig = rep["errors"]["fit"]["holdout"]
    for k, j in enumerate(("j1", "j2")):
        want = np.linalg.norm(err[:, k]) / np.linalg.norm(tau[:, k])
        assert fig["per_joint"][j] == pytest.approx(want, rel=1e-9)
        assert fig["rest_left_out"][j] == pytest.approx(1 - rows[:, k].mean(), abs=1e-12)
    assert fig["overall"] == pytest.approx(np.linalg.norm(err) / np.linalg.norm(tau), rel=1e-9)
    # the training part's figures leave out what the fit left out of its rows
    train = rep["errors"]["fit"]["train"]["rest_left_out"]
    assert [train[j] for j in ("j1", "j2")] == pytest.approx(
        [p["rest_fraction"] for p in rep["joint_parameters"]], abs=1e-12
    )
    assert "at rest, left out" in res.summary()


@pytest.mark.slow  # compiles a fit
def test_a_correct_log_gives_no_warning_and_a_flipped_joint_is_named(arm):
    model, log, _ = arm
    with x64():
        res = ident.identify_robot(model, log)
    assert res.warnings == ()
    n_hold = int(round(0.2 * log.n_samples))
    tau = log.tau.copy()
    tau[-n_hold:, 1] *= -1.0  # j2's torque flipped in the held-out part only
    with x64():
        flipped = ident.identify_robot(model, dataclasses.replace(log, tau=tau))
    (w,) = [w for w in flipped.warnings if "worse than zero" in w]
    assert "the torque of j2 (" in w and "j1" not in w
    assert flipped.report.to_dict()["errors"]["fit"]["holdout"]["per_joint"]["j2"] > 1.0


@pytest.mark.slow  # compiles a fit
def test_holdout_099_warns_that_the_fit_does_not_carry_over(arm):
    model, log, _ = arm
    with x64():
        res = ident.identify_robot(model, log, holdout=0.99)
    (w,) = [w for w in res.warnings if "worse than the prior" in w]
    assert w.startswith("the held-out part (the last 99 % of the log): the fit predicts")
    e = res.report.to_dict()["errors"]
    assert e["fit"]["holdout"]["overall"] > 2 * e["prior"]["holdout"]["overall"]
    assert f"{res.report.samples.train} samples after filtering" in w
