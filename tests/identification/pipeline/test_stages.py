"""The stages of identify_robot one at a time, the position checks, and the report's schema.

Reference values: the log's own construction (positions shifted past a limit, turned into
degrees, quantised on purpose; noiseless torques that the true bodies' regressor must
reproduce), closed forms (the encoder step of values on a grid, the peak velocity of a
sinusoid), and, for the schema, the report's dataclasses read against the guide's tables.
"""

from __future__ import annotations

import dataclasses
import math

import jax
import numpy as np
import pytest
from helpers import REPORT_COMMAND_KEYS, ROOT, raises_argument, report_schema_in_the_guide

import spatialjax.multibody as mb
from spatialjax import identification as ident
from spatialjax._util import x64
from spatialjax.identification import IdentifyError, IdentifyTypeError
from spatialjax.identification.logs.positions import check_positions, encoder_step
from spatialjax.identification.output.report import schema
from spatialjax.identification.pipeline.channels import channel_stage
from spatialjax.identification.pipeline.filtering import filter_stage
from spatialjax.identification.pipeline.least_squares import (
    least_squares_stage,
    training_data,
)
from spatialjax.identification.pipeline.options import resolve
from spatialjax.identification.pipeline.prior import prior_stage
from spatialjax.identification.pipeline.regression import regressor_stage
from spatialjax.identification.pipeline.sampling import sampling_stage

FIX = ROOT / "tests" / "fixtures"
TOY_LOCK = {"j3": 0.3, "j4": 0.05}
DEFAULTS = dict(lowpass=None, decimate=1)


@pytest.fixture(scope="module")
def toy():
    """The toy arm (j1 vertical, j2 horizontal; limits ±3 rad, 2 rad/s) and a noiseless 4 s log."""
    with x64():
        model = mb.Model.from_urdf(FIX / "toy_attached.urdf", locked_joints=TOY_LOCK,
                                   dtype="float64")  # fmt: skip
        k1, k2, k3 = jax.random.split(jax.random.PRNGKey(3), 3)
        t, q, dq, ddq = ident.excitation_trajectory(2, duration=4.0, rate=1000.0, key=k1)
        true = ident.perturb_inertia(model.inertia, 0.2, k2)
        log = ident.simulate_log(model, t, q, dq, ddq, key=k3, inertia=true, torque_noise=0.0)
    return model, dataclasses.replace(log, joint_names=("j1", "j2")), true


def _opts(model, log, **kw):
    return resolve(model, log, ident.IdentifyOptions(**{**DEFAULTS, **kw}))


# ------------------------------------------------------------------------ options
@pytest.mark.parametrize(
    ("kw", "argument"),
    [
        ({"prior_spread": 0.0}, "prior_spread"),
        ({"repair_floor": 1.5}, "repair_floor"),
        ({"gravity": (0.0, -9.81)}, "gravity"),
        ({"gravity": (0.0, 0.0, math.nan)}, "gravity"),
        ({"ignore_limits": "yes"}, "ignore_limits"),
        ({"holdout": 1.0}, "holdout"),
        ({"lowpass": -3.0}, "lowpass"),
        ({"decimate": 0}, "decimate"),
        ({"gamma": -1.0}, "gamma"),
        ({"rate": 0.0}, "rate"),
        ({"max_gap": math.inf}, "max_gap"),
        ({"sample_weighting": "equal"}, "sample_weighting"),
        ({"torque_scale": {"j1": 0.0}}, "torque_scale"),
        ({"exclude_torque": "j1"}, "exclude_torque"),
        ({"free": []}, "free"),
        ({"contact_type": "line"}, "contact_type"),
        ({"contact_speed": -1.0}, "contact_speed"),
    ],
)
def test_options_are_checked_when_built_naming_the_option(toy, kw, argument):
    """Each option is checked when the options are built (before any stage), and again through
    identify_robot's keywords: the error carries the option's name."""
    model, log, _ = toy
    with pytest.raises(ident.IdentifyError) as e:
        ident.IdentifyOptions(**kw)
    assert e.value.argument == argument
    with pytest.raises(ident.IdentifyError) as e:
        ident.identify_robot(model, log, **kw)
    assert e.value.argument == argument


def test_option_messages_read_with_either_name():
    """The message is ``argument: detail``; ``render`` gives it under the caller's names (the
    command line's flags), other arguments named in the detail too."""
    with pytest.raises(ident.IdentifyError) as e:
        ident.IdentifyOptions(ignore_limits="yes")
    assert str(e.value) == "ignore_limits: expected True or False, got 'yes'"
    assert e.value.render(lambda n: "--" + n.replace("_", "-")).startswith("--ignore-limits: ")
    err = ident.IdentifyError("decimate", "5 without a low-pass; give `lowpass`")
    assert str(err) == "decimate: 5 without a low-pass; give lowpass"
    assert err.render(lambda n: f"--{n}") == "--decimate: 5 without a low-pass; give --lowpass"


def test_unknown_keyword_and_options_object(toy):
    """A keyword that is no option is a TypeError naming it; options and keywords combine."""
    model, log, _ = toy
    with pytest.raises(TypeError) as e:
        ident.identify_robot(model, log, lowpas=20.0)
    assert isinstance(e.value, ident.IdentifyError) and e.value.argument == "lowpas"
    with pytest.raises(ident.IdentifyError) as e:  # the keyword applies to the object's values
        ident.identify_robot(model, log, ident.IdentifyOptions(lowpass=20.0), holdout=2.0)
    assert e.value.argument == "holdout"
    with pytest.raises(ident.IdentifyError) as e:
        ident.identify_robot(model, log, ident.IdentifyOptions(free=["nope"]))
    assert e.value.argument == "free"


def test_options_resolve_the_per_joint_and_per_body_arguments(toy):
    model, log, _ = toy
    o = _opts(model, log, torque_scale={"j2": -2.0}, free=["b"], joint_model="viscous")
    np.testing.assert_array_equal(o.scale, [1.0, -2.0])
    np.testing.assert_array_equal(o.free_mask, [False, True])
    assert o.joint_model.kinds == ("viscous",) and o.gravity == (0.0, 0.0, -9.81)
    assert o.torque_scale == {"j2": -2.0} and o.free == ("b",)
    with pytest.raises(ident.IdentifyError) as e:
        _opts(model, log, exclude_torque=["j9"])
    assert e.value.argument == "exclude_torque"


def test_joint_model_option(toy):
    """``joint_model`` takes a JointModel, kinds or text; an unknown kind names the argument;
    ``friction=`` is no keyword of ``identify_robot``."""
    model, log, _ = toy
    assert _opts(model, log).joint_model.kinds == mb.JOINT_KINDS  # default: all four
    o = _opts(model, log, joint_model="coulomb,armature")
    assert o.joint_model.kinds == ("armature", "coulomb")
    assert _opts(model, log, joint_model="none").joint_model.kinds == ()
    assert _opts(model, log, joint_model=mb.JointModel(("viscous",))).joint_model.kinds == (
        "viscous",
    )
    with raises_argument(IdentifyError, "joint_model") as e:
        _opts(model, log, joint_model="armature,stiction")
    assert e.value.argument == "joint_model"
    with raises_argument(IdentifyTypeError, "friction"):
        ident.identify_robot(model, log, friction=("viscous",))


# ------------------------------------------------------------------------ stages alone
def test_prior_stage_holds_the_bodies_not_free(toy):
    model, log, _ = toy
    prior = prior_stage(model, _opts(model, log, free=["b"]))
    np.testing.assert_array_equal(prior.prior, np.asarray(model.inertia.params))
    assert prior.free_names == ("b",) and prior.free_prior.shape == (1, 10)
    text, lines = prior.describe()
    assert text == "1 of 2 bodies identified (b; the others held); all strictly consistent"
    assert lines == ()


def test_sampling_filter_regressor_and_least_squares_stages_on_a_noiseless_log(toy):
    """Without noise or friction, the regressor of the true bodies gives the logged torques."""
    model, log, true = toy
    opts = _opts(model, log, joint_model=())
    with x64():
        prior = prior_stage(model, opts)
        sampled = sampling_stage(model, log, (), opts)
        filtered = filter_stage(sampled.logs, lowpass=None, decimate=1, holdout=0.25)
        regs = regressor_stage(model, filtered, opts)
    assert [name for name, _ in filtered.parts] == ["training part", "held-out part"]
    assert filtered.n_raw == 4000 and filtered.n_raw_hold == 1000
    assert regs.Y[0].shape == (regs.n_train, 2, 20) and regs.ne == 0
    pi = np.asarray(true.params).reshape(-1)
    for k in (0, 1):  # raw central differences of an unquantised 1 kHz log: ~1e-5 relative
        np.testing.assert_allclose(regs.Y[k] @ pi, regs.tau[k], rtol=0, atol=1e-4)
    text, _ = filtered.describe()
    n0, n1 = (p.n_samples for p in filtered.prepared)
    assert text == (f"no low-pass (given): q differentiated raw; training part {n0} samples, "
                    f"held-out part (the last 1000 raw samples) {n1} at 1000 Hz")  # fmt: skip
    assert filtered.choice.automatic is False and filtered.choice.lowpass is None
    channels = channel_stage(model, sampled.raw[0].tau[:3000], regs.tau[0],
                             regs.Y[0] @ prior.prior.reshape(-1), regs.dq[0], opts)  # fmt: skip
    assert channels.used.all() and channels.warnings == ()
    data = training_data(regs.Y[0], regs.F[0], regs.tau[0], regs.held_torque(0, prior), prior,
                         channels)  # fmt: skip
    with x64():
        ls = least_squares_stage(data, prior, sample_weighting="independent", lowpass=None,
                                 rate=1000.0)  # fmt: skip
    np.testing.assert_allclose(data.Y @ ls.params.reshape(-1), data.tau, rtol=0, atol=1e-4)
    np.testing.assert_array_equal(ls.correlation_time, 1.0)


def test_joint_model_columns_reproduce_the_armature_and_friction_of_the_log(toy):
    """A log whose truth has armature, viscous and Coulomb friction and an offset: the true
    bodies' regressor plus the joint-model columns with the true coefficients give the torques
    (exact derivatives, no noise)."""
    model, _, true = toy
    armature = np.array([0.05, 0.02])
    fr = np.array([[0.1, 0.05, 0.01], [0.05, 0.02, -0.01]])
    with x64():
        k1, k2 = jax.random.split(jax.random.PRNGKey(4))
        t, q, dq, ddq = ident.excitation_trajectory(2, duration=2.0, rate=1000.0, key=k1)
        truth = dataclasses.replace(model, armature=jax.numpy.asarray(armature))
        log = ident.simulate_log(truth, t, q, dq, ddq, key=k2, inertia=true, friction=fr,
                                 torque_noise=0.0, include_derivatives=True)  # fmt: skip
    log = dataclasses.replace(log, joint_names=("j1", "j2"))
    opts = _opts(model, log)
    with x64():
        filtered = filter_stage((log,), lowpass=None, decimate=1, holdout=0.0)
        regs = regressor_stage(model, filtered, opts)
    assert regs.kinds == mb.JOINT_KINDS and regs.ne == 8
    assert regs.q[0].shape == (regs.n_train, 2) and regs.ddq[0].shape == (regs.n_train, 2)
    phi = np.column_stack([armature, fr]).reshape(-1)  # joint-major, kinds in order
    pred = regs.Y[0] @ np.asarray(true.params).reshape(-1) + regs.F[0] @ phi
    np.testing.assert_allclose(pred, regs.tau[0], rtol=0, atol=1e-9)
    assert (
        "8 joint-model columns (armature, viscous, coulomb, offset per joint)"
        in (regs.describe()[0])
    )


def test_least_squares_leaves_a_joints_samples_at_rest_out_of_its_row(toy):
    """Torques corrupted where a joint is marked at rest change nothing of least squares;
    the noise estimate counts the samples kept; the fit's weights are 0 there."""
    model, log, _ = toy
    opts = _opts(model, log, joint_model=())
    with x64():
        prior = prior_stage(model, opts)
        filtered = filter_stage((log,), lowpass=None, decimate=1, holdout=0.0)
        regs = regressor_stage(model, filtered, opts)
        ch = channel_stage(model, log.tau, regs.tau[0], regs.Y[0] @ prior.prior.reshape(-1),
                           regs.dq[0], opts)  # fmt: skip
    n = regs.n_train
    moving = np.ones((n, 2), bool)
    moving[::4, 0] = False  # a quarter of joint 1's samples "at rest"
    noise = np.random.default_rng(0).normal(0.0, 1e-3, (n, 2))
    tau = regs.tau[0] + noise
    bad = tau.copy()
    bad[~moving] += 50.0
    held = regs.held_torque(0, prior)
    runs = []
    for t in (tau, bad):
        data = training_data(regs.Y[0], regs.F[0], t, held, prior, ch, q=regs.q[0],
                             moving=moving)  # fmt: skip
        with x64():
            runs.append(least_squares_stage(data, prior, sample_weighting="independent",
                                            lowpass=None, rate=1000.0))  # fmt: skip
    a, b = runs
    np.testing.assert_allclose(b.params, a.params, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(b.noise_var, a.noise_var, rtol=1e-9)
    np.testing.assert_allclose(a.rest_fraction, [0.25, 0.0], atol=1 / n)
    np.testing.assert_allclose(a.samples_used, [0.75 * n, n], atol=1)
    np.testing.assert_allclose(a.noise_var, [1e-6, 1e-6], rtol=0.1)  # the noise added, kept rows
    w = data.sample_weights(a.weights)
    assert w.shape == (n, 2) and np.all(w[~moving] == 0) and np.all(w[moving] > 0)
    assert "samples at rest left out of their joint's row" in a.describe()[0]


def test_channel_stage_flags_a_flipped_channel(toy):
    model, log, _ = toy
    opts = _opts(model, log, joint_model=())
    with x64():
        prior = prior_stage(model, opts)
        filtered = filter_stage((log,), lowpass=None, decimate=1, holdout=0.0)
        regs = regressor_stage(model, filtered, opts)
    tau = regs.tau[0] * np.array([1.0, -1.0])
    ch = channel_stage(model, log.tau * np.array([1.0, -1.0]), tau,
                       regs.Y[0] @ prior.prior.reshape(-1), regs.dq[0], opts)  # fmt: skip
    (w,) = ch.warnings
    assert w.startswith("j2: measured torques are the opposite sign of the torques the prior")
    assert ch.describe()[0] == "2 of 2 channels fitted; 1 scale/sign warning(s)"


# ------------------------------------------------------------------------ positions
def test_encoder_step_of_values_on_a_grid():
    rng = np.random.default_rng(0)
    step = 2 * np.pi / 2**18
    q = np.round(np.cumsum(rng.normal(0, 3e-4, 5000)) / step) * step + 0.3
    assert encoder_step(q) == pytest.approx(step, rel=1e-9)
    assert encoder_step(rng.normal(size=5000)) == 0.0  # not on a grid
    assert encoder_step(np.ones(10)) == 0.0
    tiago = np.load(FIX / "tiago" / "tiago_log.npz")["q"]
    assert encoder_step(tiago[:, 1]) == pytest.approx(1.534e-5, rel=1e-3)


def test_velocity_check_ignores_quantisation_noise_and_flags_a_real_excess():
    """A 12-bit encoder at 1 kHz: one-sample differences are off by up to 1.5 rad/s."""
    t = np.arange(4000) / 1000.0
    step = 2 * np.pi / 2**12
    w = 2 * np.pi * 0.5
    q = np.round(0.9 * 2.0 / w * np.sin(w * t) / step) * step  # true peak velocity 1.8 rad/s
    raw_peak = np.max(np.abs(np.diff(q))) * 1000.0
    assert raw_peak > 2.2  # the raw differences would pass the limit 2 by more than 10 %
    lim = np.array([[-3.0], [3.0], [2.0]])
    (c,) = check_positions(["j"], [True], t, q[:, None], None, *lim)
    assert c.resolution == pytest.approx(step) and not c.velocity_flagged
    assert 1.7 < c.peak_velocity <= 1.8 + 1e-9
    (c,) = check_positions(["j"], [True], t, 1.5 * q[:, None], None, *lim)
    assert c.velocity_flagged and "velocities reach" in c.velocity_text()
    dq = np.gradient(q, t)[:, None]  # a logged velocity is averaged over the window too
    (c,) = check_positions(["j"], [True], t, q[:, None], dq, *lim)
    assert not c.velocity_flagged


def test_positions_in_degrees_are_refused_naming_the_joint(toy):
    model, log, _ = toy
    deg = dataclasses.replace(log, q=np.degrees(log.q))
    lo, hi = np.degrees(log.q[:, 0].min()), np.degrees(log.q[:, 0].max())
    with pytest.raises(ident.IdentifyError) as e:
        ident.identify_robot(model, deg)
    msg = str(e.value)
    assert e.value.argument == "log"
    assert f"joint 'j1': q spans [{lo:.4g}, {hi:.4g}], outside the model's limits [-3, 3]" in msg
    assert "degrees? q × π/180 spans" in msg and "joint 'j2'" in msg
    assert msg.endswith("set ignore_limits to go on")
    with pytest.raises(ident.IdentifyError) as e:
        ident.identify_robot(model, log, validate=[deg])
    assert e.value.argument == "validate[0]" and "joint 'j1'" in e.value.detail


def test_positions_slightly_past_a_limit_are_accepted_further_refused(toy):
    """The margin: 1 % of the range (0.06 rad here) or 3 encoder steps, whichever is larger."""
    model, log, _ = toy
    opts = _opts(model, log)

    def shifted(to):
        q = log.q.copy()
        q[:, 0] += to - q[:, 0].max()
        return dataclasses.replace(log, q=q)

    s = sampling_stage(model, shifted(3.05), (), opts)
    assert s.positions[0].within_limits and s.positions[0].margin == pytest.approx(0.06)
    assert s.warnings == ()
    with raises_argument(IdentifyError, "log") as e:
        sampling_stage(model, shifted(3.07), (), opts)
    assert e.value.argument == "log" and "degrees" not in str(
        e.value
    )  # past the limit, not twice as far: not degrees
    with raises_argument(IdentifyError, "log") as e:
        sampling_stage(model, shifted(3.5), (), opts)
    assert "degrees" not in str(e.value)
    s = sampling_stage(model, shifted(3.07), (), _opts(model, log, ignore_limits=True))
    (w,) = s.warnings
    assert w.startswith("joint 'j1': q spans") and w.endswith("ignored (ignore_limits)")
    assert "q: outside the limits on j1" in s.describe()[1][0]


def test_continuous_joints_are_not_checked(tmp_path):
    urdf = tmp_path / "c.urdf"
    urdf.write_text(
        '<robot name="c"><link name="base"/>'
        '<joint name="j1" type="continuous"><parent link="base"/><child link="a"/>'
        '<axis xyz="0 0 1"/></joint>'
        '<link name="a"><inertial><origin xyz="0.1 0 0"/><mass value="1"/>'
        '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>'
        "</robot>"
    )
    with x64():
        model = mb.Model.from_urdf(urdf, dtype="float64")
    t = np.arange(2000) / 1000.0
    log = ident.RobotLog(t=t, q=(20.0 * t)[:, None], tau=np.sin(t)[:, None])  # 40 rad, 6 turns
    s = sampling_stage(model, log, (), _opts(model, log))
    (c,) = s.positions
    assert c.within_limits and c.lower is None and c.margin is None and not c.degrees
    assert c.max == pytest.approx(40.0, rel=1e-3)


# ------------------------------------------------------------------------ report schema
def test_the_guide_documents_every_field_of_the_report():
    guide = report_schema_in_the_guide()
    for path, cls in schema().items():
        fields = {f.name for f in dataclasses.fields(cls)}
        documented = guide.get(path)
        assert documented is not None, f"docs/identification-report.md: no table for `{path}`"
        if path == "":
            assert documented - fields == REPORT_COMMAND_KEYS, path
            documented = documented - REPORT_COMMAND_KEYS
        assert documented == fields, (
            f"`{path}`: documented but not fields {sorted(documented - fields)}, "
            f"fields not documented {sorted(fields - documented)}"
        )
