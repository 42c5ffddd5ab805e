"""identification.identify_robot and its parts: correlation time, prior repair, torque channels.

Reference values: closed forms (the correlation time of an AR(1) series, the
second moments of a repaired body), NumPy eigenvalues for consistency, and,
for the pipeline, the log's own construction (a channel scaled, flipped,
zeroed or quantised on purpose).
"""

from __future__ import annotations

import dataclasses
import json

import jax
import numpy as np
import pytest
from helpers import FIXTURES, check_report_against_the_guide, raises_argument

import spatialjax.multibody as mb
from spatialjax import identification as ident
from spatialjax._util import x64
from spatialjax.identification import IdentifyError, IdentifyTypeError, PriorError
from spatialjax.identification.logs.channel_checks import check_channels, resolution
from spatialjax.identification.pipeline import DEFAULT_HOLDOUT

# ------------------------------------------------------------------ correlation_time


def _ar1(a: float, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    e = rng.standard_normal(n)
    x = np.empty(n)
    x[0] = e[0] / np.sqrt(1 - a * a)
    for k in range(1, n):
        x[k] = a * x[k - 1] + e[k]
    return x


@pytest.mark.parametrize("a", [0.0, 0.5, 0.9, 0.98])
def test_correlation_time_of_ar1_is_its_closed_form(a):
    """τ = (1 + a) / (1 − a) for x_k = a x_{k−1} + e_k (Sokal 1997, eq. 3.17)."""
    x = np.column_stack([_ar1(a, 200_000, s) for s in range(2)])
    tau = ident.correlation_time(x)
    assert tau.shape == (2,)
    np.testing.assert_allclose(tau, (1 + a) / (1 - a), rtol=0.08)


def test_correlation_time_of_filtered_white_noise_follows_the_bandwidth():
    """A zero-phase low-pass at f_c: about f_s / (2 f_c) correlated samples per independent one."""
    from scipy import signal

    rng = np.random.default_rng(1)
    fs, fc = 1000.0, 10.0
    sos = signal.butter(4, fc, fs=fs, output="sos")
    x = signal.sosfiltfilt(sos, rng.standard_normal(200_000))
    tau = float(ident.correlation_time(x))
    assert 0.5 * fs / (2 * fc) < tau < 2.0 * fs / (2 * fc)


def test_correlation_time_edge_cases_and_bad_input():
    assert float(ident.correlation_time(np.ones(50))) == 1.0  # no variation
    alt = np.tile([1.0, -1.0], 500)  # anticorrelated: floored at 1
    assert float(ident.correlation_time(alt)) == 1.0
    assert ident.correlation_time(np.arange(10.0)).shape == ()
    with raises_argument(IdentifyError, "x"):
        ident.correlation_time(np.ones(1))
    with raises_argument(IdentifyError, "x"):
        ident.correlation_time(np.ones((3, 2, 2)))
    with raises_argument(IdentifyError, "x"):
        ident.correlation_time(np.array([0.0, 1, 2, np.nan, 4]))
    with raises_argument(IdentifyError, "window_c"):
        ident.correlation_time(np.ones(5), window_c=0)


# ------------------------------------------------------------------ repair_prior


def _params(m, c, I_c):
    """10-vector about the origin from mass, CoM and inertia about the CoM (parallel axis)."""
    c = np.asarray(c, float)
    I_o = np.asarray(I_c, float) + m * (c @ c * np.eye(3) - np.outer(c, c))
    return np.array([m, *(m * c), I_o[0, 0], I_o[0, 1], I_o[1, 1], I_o[0, 2], I_o[1, 2], I_o[2, 2]])


def _pseudo(p):
    m, h = p[0], p[1:4]
    I = np.array([[p[4], p[5], p[7]], [p[5], p[6], p[8]], [p[7], p[8], p[9]]])
    S = 0.5 * np.trace(I) * np.eye(3) - I
    return np.block([[S, h[:, None]], [h[None, :], np.array([[m]])]])


def test_repair_prior_keeps_good_bodies_and_repairs_bad_ones():
    R = np.linalg.qr(np.random.default_rng(0).standard_normal((3, 3)))[0]
    good = _params(2.0, [0.1, 0.0, 0.2], np.diag([0.01, 0.02, 0.025]))
    # principal moments 0.002, 0.008, 0.0106: 0.002 + 0.008 < 0.0106 (triangle inequality broken)
    bad = _params(2.083, [0.06, 0.02, -0.01], R @ np.diag([0.002, 0.008, 0.0106]) @ R.T)
    P = np.stack([good, bad])
    out, reps = ident.repair_prior(P, ["good", "bad"])
    assert np.array_equal(out[0], good)  # bit for bit
    assert [r.name for r in reps] == ["bad"] and reps[0].body == 1
    assert "triangle" in reps[0].reason
    np.testing.assert_allclose(out[1, :4], bad[:4], rtol=1e-14)  # mass and first moment kept
    assert np.linalg.eigvalsh(_pseudo(out[1])).min() > 0  # strictly inside
    # the principal second moments σ = ½ tr(I_c) − λ: the negative one raised to 1e-3 σ_max
    lam = np.array([0.002, 0.008, 0.0106])
    sig = 0.5 * lam.sum() - lam
    want = np.maximum(sig, 1e-3 * sig.max())
    np.testing.assert_allclose(np.sort(reps[0].second_moments_after), np.sort(want), rtol=1e-10)
    np.testing.assert_allclose(
        reps[0].principal_moments_after, np.sort(want.sum() - want), rtol=1e-10
    )

    # the principal axes are kept: the repaired I_c commutes with the original
    def I_c(p):
        m, c = p[0], p[1:4] / p[0]
        I_o = np.array([[p[4], p[5], p[7]], [p[5], p[6], p[8]], [p[7], p[8], p[9]]])
        return I_o - m * (c @ c * np.eye(3) - np.outer(c, c))

    A, B = I_c(bad), I_c(out[1])
    np.testing.assert_allclose(A @ B, B @ A, atol=1e-14)


def test_repair_prior_refuses_what_it_cannot_repair():
    massless = np.zeros(10)
    with raises_argument(PriorError, "prior"):
        ident.repair_prior(np.stack([_params(1.0, [0, 0, 0], np.eye(3) * 0.01), massless]),
                           ["l1", "l2"])  # fmt: skip
    with raises_argument(PriorError, "prior"):
        ident.repair_prior(np.full((1, 10), np.nan), ["n"])
    # a point mass is repaired (tests/identification/priors/test_prior_repair.py)
    point = _params(1.0, [0.1, 0, 0], np.zeros((3, 3)))
    with raises_argument(IdentifyError, "params"):
        ident.repair_prior(np.zeros(10))
    with raises_argument(IdentifyError, "floor"):
        ident.repair_prior(point[None], floor=1.0)
    with raises_argument(IdentifyError, "names"):
        ident.repair_prior(point[None], ["a", "b"])


# ------------------------------------------------------------------ torque channels


def test_resolution_ignores_decimal_rounding():
    x = np.round(np.random.default_rng(0).normal(0, 0.003, 1000), 3)  # TIAGo-like 1e-3 steps
    x = x + np.where(np.arange(1000) % 7 == 0, 1e-18, 0.0)  # rounding of decimals to binary
    assert resolution(x) == pytest.approx(1e-3, rel=1e-9)
    assert resolution(np.random.default_rng(1).normal(size=1000)) == 0.0  # unquantised
    assert resolution(np.zeros(10)) == 0.0


def test_check_channels_signal_scale_and_sign():
    rng = np.random.default_rng(0)
    N = 2000
    pred = np.column_stack([np.sin(np.linspace(0, 20, N) + k) * (k + 1) for k in range(5)])
    meas = pred * np.array([1.2, 0.1, -1.0, 1.0, 1.0])
    meas[:, 3] = 0.0  # no signal: constant
    meas[:, 4] = np.round(rng.normal(0, 0.002, N), 3)  # a few 1e-3 steps: no signal
    checks = check_channels(list("abcde"), meas, meas, pred, exclude=())
    by = {c.joint: c for c in checks}
    assert by["a"].signal and not by["a"].excluded and not by["a"].scale_flagged
    assert by["a"].scale == pytest.approx(1.2)
    assert by["b"].scale_flagged and by["b"].scale == pytest.approx(0.1) and not by["b"].excluded
    assert by["c"].scale_flagged and by["c"].scale == pytest.approx(-1.0)
    assert not by["d"].signal and by["d"].excluded and "constant" in by["d"].reason
    assert not by["e"].signal and by["e"].excluded and "resolution 0.001" in by["e"].reason
    user = check_channels(list("abcde"), meas, meas, pred, exclude=("a",))
    assert user[0].excluded and user[0].reason == "excluded by the user"


# ------------------------------------------------------------------ identify_robot

TOY_LOCK = {"j3": 0.3, "j4": 0.05}
FIX = FIXTURES
TOY_URDF = FIX / "toy_attached.urdf"


@pytest.fixture(scope="module")
def toy():
    """The toy 2-joint arm, a simulated 1 kHz log with friction and noise, and its truth."""
    with x64():
        model = mb.Model.from_urdf(TOY_URDF, locked_joints=TOY_LOCK, dtype="float64")
        k1, k2, k3 = jax.random.split(jax.random.PRNGKey(7), 3)
        t, q, dq, ddq = ident.excitation_trajectory(2, duration=8.0, rate=1000.0, key=k1)
        true = ident.perturb_inertia(model.inertia, 0.2, k2)
        log = ident.simulate_log(
            model, t, q, dq, ddq, key=k3, inertia=true, torque_noise=0.01,
            friction=np.array([[0.1, 0.05, 0.0], [0.05, 0.02, 0.01]]),
        )  # fmt: skip
        log = dataclasses.replace(log, joint_names=("j1", "j2"))
    return model, log, true


def _run(model, log, **kw):
    kw.setdefault("lowpass", 20.0)
    kw.setdefault("decimate", 1)  # the full rate: these tests are about the stages after it
    with x64():
        return ident.identify_robot(model, log, **kw)


def test_identify_robot_on_a_simulated_log(toy):
    model, log, true = toy
    stages = []
    res = _run(model, log, progress=lambda s, text, lines: stages.append((s, text, lines)))
    assert [s for s, _, _ in stages] == list(ident.pipeline.STAGES)
    assert stages[1][2] == ("q: within the limits (2 of 2 joints limited); unquantised",)
    rep = res.report.to_dict()
    # the dict is the typed report's, key for key; the guide documents every key
    check_report_against_the_guide(rep)
    assert json.loads(res.report.to_json()) == json.loads(res.to_json())
    assert res.report.links[1].fit.mass == rep["links"][1]["fit"]["mass"]
    assert res.report.errors.fit.holdout.overall == e_hold(rep)
    assert [c["joint"] for c in rep["positions"]] == ["j1", "j2"]
    assert rep["fit_status"]["converged"]
    assert rep["sampling"]["resampled"] is False
    e = rep["errors"]
    assert e["fit"]["holdout"]["overall"] < 1.1 * e["least_squares"]["holdout"]["overall"]
    assert e["fit"]["holdout"]["overall"] < 0.5 * e["prior"]["holdout"]["overall"]
    for d in rep["links"]:
        assert d["fit"]["consistent"] and not d["plausibility"]["flagged"]
    assert all(1.0 <= v < 200 for v in rep["correlation_time"].values())
    assert res.params["fit"].shape == (2, 10) and res.joint_parameters["fit"].shape == (2, 4)
    text = res.summary()
    assert "link" in text and "j1" in text and "held-out" in text
    assert '"links"' in res.to_json()


def test_the_programs_prepared_ahead_are_the_ones_run(toy, monkeypatch):
    """identify compiles its least squares, fit and identifiability ahead, in background
    threads: each call finds its program prepared (none is left pending), with the same
    results as programs compiled by the calls themselves."""
    from spatialjax.identification.fitting import program

    model, log, _ = toy
    prepared = []
    real = program._prepare

    def recording(fn, *args):
        prepared.append(fn.__name__)
        return real(fn, *args)

    monkeypatch.setattr(program, "_PENDING", {})
    monkeypatch.setattr(program, "_LOADED", {})
    monkeypatch.setattr(program, "_prepare", recording)
    ahead = _run(model, log)
    assert {"_lstsq_impl", "_fit_batch_impl", "_ident_impl"} <= set(prepared)
    assert program._PENDING == {}  # every prepared program was taken by its call
    monkeypatch.setattr(program, "_prepare", lambda *args: None)
    monkeypatch.setattr(program, "_LOADED", {})
    plain = _run(model, log)
    for kind in ("fit", "least_squares"):
        np.testing.assert_array_equal(ahead.params[kind], plain.params[kind])
    assert e_hold(ahead.report.to_dict()) == e_hold(plain.report.to_dict())


@pytest.mark.parametrize("kw", [{"lowpass": 20.0, "decimate": 3}, {"lowpass": None}])
def test_the_solvers_prepared_before_the_regressor_stage_are_the_ones_run(toy, monkeypatch, kw):
    """A fixed base's fit, least squares and identifiability compile from the shapes the
    training data will have, before the regressor stage (``prepare_ahead``): the stages'
    own preparations then find those programs (add none), and none is left pending."""
    from spatialjax.identification.fitting import program

    model, log, _ = toy
    added: dict[str, list[int]] = {}
    real = program._prepare

    def recording(fn, *args):
        before = set(program._PENDING)
        real(fn, *args)
        added.setdefault(fn.__name__, []).append(len(set(program._PENDING) - before))

    monkeypatch.setattr(program, "_PENDING", {})
    monkeypatch.setattr(program, "_LOADED", {})
    monkeypatch.setattr(program, "_prepare", recording)
    _run(model, log, **kw)
    assert added["_fit_batch_impl"] == [1, 0]
    assert added["_lstsq_impl"] == [1]
    assert added["_ident_impl"] == [1, 0]
    assert program._PENDING == {}


def test_a_refused_run_drops_the_programs_it_prepared(toy, monkeypatch):
    """Preparations not yet started when a stage refuses the log are cancelled: the process
    neither compiles them nor waits for them at exit."""
    import threading

    from spatialjax.identification.fitting import program

    model, log, _ = toy
    monkeypatch.setattr(program, "_PENDING", {})
    monkeypatch.setattr(program, "_LOADED", {})
    gate = threading.Event()
    worker = program._WORKER[0] if program._WORKER else None
    if worker is None:
        import concurrent.futures

        worker = concurrent.futures.ThreadPoolExecutor(2, "spatialjax-compile")
        monkeypatch.setattr(program, "_WORKER", [worker])
    # every compile thread is busy: what identify asks waits
    busy = [worker.submit(gate.wait) for _ in range(worker._max_workers)]
    try:
        with pytest.raises(ident.IdentifyError) as e:
            _run(model, log, lowpass=0.05)  # refused by the filter stage
        assert e.value.argument == "lowpass"
        assert program._PENDING == {}  # the regressor's preparation, queued, was dropped
    finally:
        gate.set()
        for b in busy:
            b.result()


def e_hold(rep):
    return rep["errors"]["fit"]["holdout"]["overall"]


def test_result_writes_the_fitted_urdf(toy, tmp_path):
    """``res.write``: the URDF with the fitted bodies; reloaded, they come back."""
    model, log, _ = toy
    res = _run(model, log)
    out = tmp_path / "fitted.urdf"
    rep = res.write(out, source=TOY_URDF)
    assert rep["output"] == str(out) and rep["max_reload_error"] < 1e-12
    with x64():
        back = mb.Model.from_urdf(out, locked_joints=TOY_LOCK, dtype="float64")
    np.testing.assert_allclose(np.asarray(back.inertia.params), res.params["fit"], rtol=1e-12,
                               atol=1e-12)  # fmt: skip
    assert not np.allclose(res.params["fit"], res.params["model"])
    with pytest.raises(FileExistsError, match="pass overwrite=True"):
        res.write(out, source=TOY_URDF)
    res.write(out, source=TOY_URDF, overwrite=True)
    # the joints' fitted viscous and Coulomb friction as <dynamics damping friction>; URDF has no
    # armature: reported, not written
    np.testing.assert_allclose(np.asarray(back.damping), res.joint_parameters["fit"][:, 1],
                               rtol=1e-12)  # fmt: skip
    np.testing.assert_allclose(np.asarray(back.friction), res.joint_parameters["fit"][:, 2],
                               rtol=1e-12)  # fmt: skip
    assert [j["armature"]["written"] for j in rep["joints"]] == [False, False]
    np.testing.assert_array_equal(np.asarray(back.armature), 0.0)
    with raises_argument(IdentifyError, "source"):
        res.write(tmp_path / "fitted.sdf", source=FIX / "branch.sdf")
    with raises_argument(IdentifyError, "out_path"):
        res.write(tmp_path / "fitted.xml", source=TOY_URDF)
    assert not (tmp_path / "fitted.xml").exists() and not (tmp_path / "fitted.sdf").exists()


def test_ignore_limits_goes_on_with_a_warning(toy):
    """j1 turns about the vertical: a log shifted past its limit has the same dynamics."""
    model, log, _ = toy
    q = log.q.copy()
    q[:, 0] += 3.12 - q[:, 0].max()
    past = dataclasses.replace(log, q=q)
    with raises_argument(IdentifyError, "log"):
        _run(model, past)
    res = _run(model, past, ignore_limits=True)
    w = res.warnings[0]
    assert w.startswith("joint 'j1': q spans") and w.endswith("ignored (ignore_limits)")
    assert res.report.to_dict()["settings"]["ignore_limits"] is True
    assert res.report.to_dict()["positions"][0]["within_limits"] is False
    ref = _run(model, log)
    np.testing.assert_allclose(res.params["fit"], ref.params["fit"], rtol=1e-6, atol=1e-9)


def test_the_default_filter_is_chosen_from_the_training_part(toy):
    """``lowpass="auto"``, ``decimate="auto"`` (the defaults): choose_filter on the training
    part (the held-out samples do not inform it), its reason on the stage line, the values
    used in ``settings`` and the choice in ``filter``; the fit predicts the held-out part."""
    model, log, _ = toy
    lines = {}
    with x64():
        res = ident.identify_robot(
            model, log, progress=lambda stage, text, _: lines.__setitem__(stage, text)
        )
        n_train = log.n_samples - int(round(log.n_samples * DEFAULT_HOLDOUT))
        train = dataclasses.replace(
            log, t=log.t[:n_train], q=log.q[:n_train], tau=log.tau[:n_train],
            dq=None if log.dq is None else log.dq[:n_train],
        )  # fmt: skip
        want = ident.choose_filter(train, parts=[log.n_samples - n_train])
    f = res.report.to_dict()["filter"]
    assert f["automatic"] is True and f["reason"] == want.reason
    assert (f["lowpass"], f["decimate"]) == (want.lowpass, want.decimate)
    # the settings are the options as given: the choice is the filter section's
    assert (res.report.settings.lowpass, res.report.settings.decimate) == ("auto", "auto")
    assert lines["filter"].startswith(want.reason)
    err = res.report.to_dict()["errors"]
    assert err["fit"]["holdout"]["overall"] < 0.5 * err["prior"]["holdout"]["overall"]


@pytest.mark.slow  # compile time; CI's second step
def test_independent_weighting_is_fit_torques_default(toy):
    """``sample_weighting="independent"``: weights 1/σ̂_j² (fit_torques' rule) on the rows the
    fit keeps, each joint's samples at rest dropped from its row (weight 0), σ̂_j² the residual
    energy of the kept rows of joint j over ``n_j (1 − r/Σ n)``; the armature's prior."""
    model, log, _ = toy
    res = _run(model, log, sample_weighting="independent", holdout=0.0)
    with x64():
        jm = mb.JointModel()
        p = ident.prepare_log(log, lowpass=20.0)
        Y = np.asarray(mb.joint_torque_regressor(model, p.q, p.dq, p.ddq))
        F = np.asarray(jm.regressor(model, p.dq, p.ddq))
        p2, Y, F = ident.parallel_filter(p, Y, F)
        moving = ident.moving_samples(p2.dq)
        X, tau = np.concatenate([Y, F], -1), np.asarray(p2.tau)
        x = np.linalg.lstsq(X[moving], tau[moving], rcond=None)[0]
        d = np.linalg.norm(X[moving], axis=0)
        live = d > 1e-8 * d.max()  # columns the log never excites (j1 is vertical) are zero
        r = np.linalg.matrix_rank(X[moving][:, live] / d[live])
        n = moving.sum(axis=0)
        var = np.sum(np.where(moving, tau - X @ x, 0.0) ** 2, axis=0) / (n * (1 - r / n.sum()))
        jp = ident.joint_prior(model, p2.q, jm)
        ref = ident.fit_torques(Y, tau, prior=model.inertia, extra=F, weights=moving / var,
                                extra_nonnegative=jm.nonnegative(model), extra_prior=jp.values,
                                extra_prior_weight=jp.weights)  # fmt: skip
    np.testing.assert_allclose(
        np.sqrt(var), list(res.report.to_dict()["noise_std"].values()), rtol=1e-8
    )
    want = np.asarray(ref.inertia.params).reshape(-1)
    np.testing.assert_allclose(res.params["fit"].reshape(-1), want, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(res.joint_parameters["fit"].reshape(-1), np.asarray(ref.extra),
                               rtol=1e-6, atol=1e-9)  # fmt: skip


def test_autocorrelation_weighting_moves_the_fit_towards_the_prior(toy):
    """Filtered residuals are correlated (τ > 1): the data count less, the prior more."""
    model, log, _ = toy
    a = _run(model, log, sample_weighting="autocorrelation")
    b = _run(model, log, sample_weighting="independent")
    ga = [d["fit"]["geodesic_to_prior"] for d in a.report.to_dict()["links"]]
    gb = [d["fit"]["geodesic_to_prior"] for d in b.report.to_dict()["links"]]
    assert min(a.report.to_dict()["correlation_time"].values()) > 5  # 20 Hz at 1 kHz: ~25 samples
    assert sum(ga) < sum(gb)


def test_irregular_timestamps_are_resampled(toy):
    model, log, _ = toy
    rng = np.random.default_rng(3)
    keep = np.sort(rng.choice(log.n_samples, int(0.7 * log.n_samples), replace=False))
    keep = np.unique(np.concatenate([[0], keep, [log.n_samples - 1]]))
    irregular = ident.RobotLog(t=log.t[keep], q=log.q[keep], tau=log.tau[keep],
                               joint_names=log.joint_names)  # fmt: skip
    res = _run(model, irregular, rate=1000.0)
    s = res.report.to_dict()["sampling"]
    assert s["resampled"] is True and s["rate"] == 1000.0
    assert s["max_interval"] > 1.5e-3 and s["off_share"] > 0.1
    ref = _run(model, log)
    e, e0 = (r.report.to_dict()["errors"]["fit"]["holdout"]["overall"] for r in (res, ref))
    assert e < 1.5 * e0  # linear interpolation of a 1 kHz log costs little


@pytest.mark.slow  # compile time; CI's second step
def test_channels_zero_excluded_scaled_and_flipped(toy):
    model, log, _ = toy
    zero = dataclasses.replace(log, tau=log.tau * np.array([1.0, 0.0]))
    res = _run(model, zero)
    ch = {c["joint"]: c for c in res.report.to_dict()["channels"]}
    assert ch["j2"]["excluded"] and ch["j2"]["reason"] == "constant: no torque signal"
    assert res.report.to_dict()["noise_weights"]["j2"] == 0.0
    assert any("j2" in n and "left out of the fit" in n for n in res.notes)
    flipped = dataclasses.replace(log, tau=log.tau * np.array([1.0, -1.0]))
    res = _run(model, flipped)
    assert any("j2" in w and "opposite sign" in w for w in res.warnings)
    fixed = _run(model, flipped, torque_scale={"j2": -1.0})
    assert not any("opposite sign" in w for w in fixed.warnings)
    ref = _run(model, log)
    np.testing.assert_allclose(fixed.params["fit"], ref.params["fit"], rtol=1e-9, atol=1e-12)
    gone = _run(model, log, exclude_torque=("j1",))
    assert [c["excluded"] for c in gone.report.to_dict()["channels"]] == [True, False]


@pytest.mark.slow  # compile time; CI's second step
def test_free_bodies_only(toy):
    model, log, _ = toy
    res = _run(model, log, free=["b"])
    np.testing.assert_array_equal(res.params["fit"][0], res.params["model"][0])
    assert not np.allclose(res.params["fit"][1], res.params["model"][1])
    assert [d["free"] for d in res.report.to_dict()["links"]] == [False, True]
    assert (
        res.report.to_dict()["identifiability"]["n_columns"] == 10 + 8
    )  # + armature, 3 friction kinds


def test_validation_logs(toy):
    model, log, true = toy
    with x64():
        t, q, dq, ddq = ident.excitation_trajectory(2, duration=4.0, rate=1000.0,
                                                    key=jax.random.PRNGKey(11))  # fmt: skip
        fr = np.array([[0.1, 0.05, 0.0], [0.05, 0.02, 0.01]])
        other = ident.simulate_log(model, t, q, dq, ddq, key=jax.random.PRNGKey(12), inertia=true,
                                   torque_noise=0.01, friction=fr)  # fmt: skip
    res = _run(model, log, validate=[other])
    (v,) = res.report.to_dict()["validation"]
    assert v["errors"]["fit"]["overall"] < 0.5 * v["errors"]["prior"]["overall"]
    check_report_against_the_guide(res.report)
    assert "validation log 0" in res.summary()


def test_inconsistent_prior_repaired_or_refused(toy):
    model, log, _ = toy
    P = np.asarray(model.inertia.params).copy()
    P[1, 9] = P[1, 4] + P[1, 6] + 0.5 * (P[1, 4] + P[1, 6])  # Izz > Ixx + Iyy about the origin
    bad = dataclasses.replace(model, inertia=type(model.inertia)(jax.numpy.asarray(P)))
    res = _run(bad, log)
    (r,) = res.report.to_dict()["prior_repairs"]
    assert r["link"] == "b"
    check_report_against_the_guide(res.report.to_dict())
    with raises_argument(IdentifyError, "prior"):
        _run(bad, log, repair_prior_bodies=False)
    P[1] = 0.0
    massless = dataclasses.replace(model, inertia=type(model.inertia)(jax.numpy.asarray(P)))
    with pytest.raises(ident.IdentifyError) as e:
        _run(massless, log)
    assert e.value.argument == "prior" and e.value.detail.startswith("link 'b' has mass 0 kg")


@pytest.mark.parametrize(
    "kw, argument",
    [
        ({"holdout": 0.9999}, "holdout"),  # 1 training sample left
        ({"holdout": 1.0}, "holdout"),
        ({"lowpass": True}, "lowpass"),
        ({"lowpass": 0.05}, "lowpass"),  # its filter's edges leave nothing
        ({"decimate": 0}, "decimate"),
        ({"joint_model": ("viscous", "stiction")}, "joint_model"),
        ({"sample_weighting": "none"}, "sample_weighting"),
        ({"exclude_torque": "j1"}, "exclude_torque"),
        ({"exclude_torque": ["j9"]}, "exclude_torque"),
        ({"torque_scale": {"j1": 0.0}}, "torque_scale"),
        ({"free": ["nope"]}, "free"),
        ({"free": []}, "free"),
    ],
)
def test_identify_robot_bad_arguments(toy, kw, argument):
    model, log, _ = toy
    with pytest.raises(ident.IdentifyError) as e:
        _run(model, log, **kw)
    assert e.value.argument == argument


def test_identify_robot_messages_that_are_the_feature(toy):
    """A handful of messages checked word for word: what was expected and what was given."""
    model, log, _ = toy
    with raises_argument(IdentifyError, "holdout"):
        _run(model, log, holdout=0.9999)
    with raises_argument(IdentifyError, "lowpass"):
        _run(model, log, lowpass=0.05)
    with raises_argument(IdentifyError, "free"):
        _run(model, log, free=["nope"])


def test_identify_robot_bad_log_and_model(toy):
    model, log, _ = toy
    with raises_argument(IdentifyTypeError, "log") as e:
        _run(model, {"t": log.t})
    assert e.value.argument == "log"
    with raises_argument(IdentifyTypeError, "model") as e:
        _run("toy.urdf", log)
    assert e.value.argument == "model"
    renamed = dataclasses.replace(log, joint_names=("j1", "x"))
    with raises_argument(IdentifyError, "log") as e:
        _run(model, renamed)
    assert e.value.argument == "log"


@pytest.mark.slow  # compile time; CI's second step
def test_bandwidth_weighting_counts_two_samples_per_hertz_of_the_filter(toy):
    """``"bandwidth"``: τ = f_s / (2 f_c) after decimation (1000 / 2 / (2 · 20) = 12.5)."""
    model, log, _ = toy
    res = _run(model, log, sample_weighting="bandwidth", decimate=2)
    np.testing.assert_allclose(
        list(res.report.to_dict()["correlation_time"].values()), 12.5, rtol=1e-12
    )
    none = _run(model, log, sample_weighting="bandwidth", lowpass=None)
    assert list(none.report.to_dict()["correlation_time"].values()) == [1.0, 1.0]


def test_scale_check_takes_the_joints_friction_apart():
    """A distal joint whose torque is mostly friction is in the right units: not flagged.

    Regression: the slope through the origin alone read such a channel as −6× the prior.
    """
    N = 4000
    s = np.linspace(0, 40, N)
    v = np.cos(s)  # the velocity
    pred = -0.05 * v + 0.02 * np.sin(3 * s)  # small rigid-body torque
    meas = 1.2 * pred + 0.3 * v + 0.6 * np.sign(v)
    (alone,) = check_channels(["j7"], meas[:, None], meas[:, None], pred[:, None])
    assert alone.scale < 0 and alone.scale_flagged  # what the old check said
    (c,) = check_channels(["j7"], meas[:, None], meas[:, None], pred[:, None], dq=v[:, None])
    assert c.scale == pytest.approx(1.2, rel=1e-9) and not c.scale_flagged


def test_friction_of_a_channel_left_out_is_not_fitted(toy):
    """Its columns act on its own row only: undetermined, so null (regression: 46112 N·m·s/rad)."""
    model, log, _ = toy
    res = _run(model, log, exclude_torque=("j2",))
    jp = res.joint_parameters
    assert np.isnan(jp["fit"][1]).all() and np.isnan(jp["least_squares"][1]).all()
    assert np.isfinite(jp["fit"][0]).all()
    rep = res.report.to_dict()
    j2 = {d["joint"]: d["fit"] for d in rep["joint_parameters"]}["j2"]
    assert j2 == {"armature": None, "viscous": None, "coulomb": None, "offset": None}
    assert rep["identifiability"]["n_columns"] == 20 + 4
