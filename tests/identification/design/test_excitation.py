"""``identification.design_excitation`` and ``spatialjax excite``.

One small design (a 2-link chain, float64) is run once per module; the tests
check its samples against the limits, rest at both ends, the Fourier
coefficients, the criterion against a NumPy recomputation and the condition
number against NumPy. The criteria and their gradients are checked on their
own (NumPy, finite differences); bad inputs raise before anything compiles.
The Panda and UR5 checks against Pinocchio (condition number at least 2x
better than the median random trajectory) and the command line's happy path
are ``slow``.
"""

from __future__ import annotations

import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import raises_argument
from helpers import robots_dir as _robots_dir

import spatialjax.multibody as mb
from spatialjax.identification import (
    IdentifyError,
    IdentifyTypeError,
    design_excitation,
    fourier_trajectory,
    identifiability,
)
from spatialjax.identification.design import excitation as _design

jax.config.update("jax_enable_x64", True)

ROBOTS = _robots_dir()
LIM = {"lower": [-2.0, -1.0], "upper": [2.0, 1.5], "velocity_limit": [1.5, 1.0]}
KW = dict(duration=10.0, harmonics=3, starts=4, steps=30, rate=50.0, limits=LIM)


@pytest.fixture(scope="module")
def chain():
    return mb.chain_model(2, dtype="float64")


@pytest.fixture(scope="module")
def design(chain):
    return design_excitation(chain, key=jax.random.key(0), **KW)


def test_limits_rest_and_coefficients(design):
    lo, hi, vel = (np.asarray(LIM[k]) for k in ("lower", "upper", "velocity_limit"))
    c, h = (lo + hi) / 2, 0.9 * (hi - lo) / 2
    assert design.q.shape == (501, 2) and design.t[0] == 0.0 and design.t[-1] == 10.0
    assert np.all(np.abs(design.q - c) <= h + 1e-12)  # the margin, at every sample
    assert np.all(np.abs(design.dq) <= 0.9 * vel + 1e-12)
    assert np.all(design.q >= lo) and np.all(design.q <= hi)
    for k in (0, -1):  # at rest at both ends
        assert np.abs(design.dq[k]).max() < 1e-9 and np.abs(design.ddq[k]).max() < 1e-9
    q, dq, ddq = fourier_trajectory(design.a, design.b, design.q0, design.base_frequency,
                                    design.t)  # fmt: skip
    np.testing.assert_allclose(q, design.q, atol=1e-12)
    np.testing.assert_allclose(ddq, design.ddq, atol=1e-10)
    assert all(np.min(d) >= 0 for d in design.limit_distance.values())
    # every joint uses its range: some limit is (nearly) reached per joint
    used = np.maximum(
        np.max(np.abs(design.q - c), 0) / h, np.max(np.abs(design.dq), 0) / (0.9 * vel)
    )
    assert np.all(used > 0.8)
    assert design.value < design.start_value
    assert design.final_values.shape == design.start_values.shape == (4,)


def test_criterion_matches_numpy(chain, design):
    """The reported value (the default criterion, condition_snr), NumPy on the grid."""
    assert design.criterion == "condition_snr"
    assert np.all(design.scale_down == 1.0)  # then the coefficients are those optimised
    t = np.arange(100) / 10.0  # the 10 Hz grid over one period (t = 10 s is t = 0 again)
    q, dq, ddq = fourier_trajectory(design.a, design.b, design.q0, design.base_frequency, t)
    Y = np.asarray(mb.joint_torque_regressor(chain, q, dq, ddq))
    v = np.asarray(dq)
    v = np.where(np.abs(v) <= 1e-12 * np.abs(v).max(0), 0.0, v)  # rest: sign 0, not ±1 of rounding
    F = np.zeros(v.shape + (6,))  # viscous, Coulomb, offset per joint
    for j in range(2):
        F[:, j, 3 * j : 3 * j + 3] = np.stack([v[:, j], np.sign(v[:, j]), np.ones(len(t))], -1)
    X = np.concatenate([Y, F], -1).reshape(-1, 26)[:, design.base_columns]
    lam = np.linalg.eigvalsh((X / np.linalg.norm(X, axis=0)).T @ (X / np.linalg.norm(X, axis=0)))
    p = _design._COND_POWER
    ref = (np.log(np.sum(lam**p)) + np.log(np.sum(lam**-p))) / (2 * p)
    g = np.sqrt(np.mean(X**2, axis=0)) / design.column_scale  # relative amplitudes on the grid
    ref += np.log(np.sum(g ** (-2 * p))) / (2 * p)
    np.testing.assert_allclose(design.value, ref, rtol=1e-9)


def test_condition_number_matches_numpy(chain, design):
    """On the design's base columns; a maximal independent set (identifiability's rank)."""
    Y = mb.joint_torque_regressor(chain, design.q, design.dq, design.ddq)
    v = np.where(np.abs(design.dq) <= 1e-12 * np.abs(design.dq).max(0), 0.0, design.dq)
    E = mb.JointModel(("viscous", "coulomb", "offset")).regressor(chain, v, np.zeros_like(v))
    X = np.concatenate([np.asarray(Y), np.asarray(E)], -1).reshape(-1, 26)
    assert design.rank == design.base_columns.size == int(identifiability(Y, extra=E).rank)
    Xb = X[:, design.base_columns]
    sv = np.linalg.svd(Xb / np.linalg.norm(Xb, axis=0), compute_uv=False)
    np.testing.assert_allclose(design.condition_number, sv[0] / sv[-1], rtol=1e-6)


def test_base_columns_gautier():
    """QR without pivoting (Gautier 1990): each base column is independent of the columns
    before it, every other column a combination of the base columns before it; the set is
    the same for independent random data (it depends on the model, not the samples)."""
    model = mb.chain_model(3)
    sets = []
    for seed in (0, 1):
        rng = np.random.default_rng(seed)
        q, dq, ddq = (rng.uniform(-2, 2, size=(60, 3)) for _ in range(3))
        Y = np.asarray(mb.joint_torque_regressor(model, q, dq, ddq)).reshape(-1, 30)
        base = _design._base_columns(Y)
        sets.append(base)
        Ys = Y / np.maximum(np.linalg.norm(Y, axis=0), 1e-300)
        for j in range(30):
            before = [c for c in base if c < j]
            A = Ys[:, before]
            resid = (
                Ys[:, j] - A @ np.linalg.lstsq(A, Ys[:, j], rcond=None)[0] if before else Ys[:, j]
            )
            if j in base:
                assert np.linalg.norm(resid) > 1e-3, j
            else:
                assert np.linalg.norm(resid) < 1e-9, j
        assert base.size == np.linalg.matrix_rank(Y)
    np.testing.assert_array_equal(sets[0], sets[1])
    assert sets[0].size < 30  # the chain has unidentifiable columns: not every column is base


def test_criteria_against_numpy():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 7)) * np.array([1e-3, 1, 10, 1, 1, 5, 0.1])
    scale = np.abs(rng.normal(size=7)) + 0.5
    got = float(_design._criterion_value(jnp.asarray(X), "logdet", jnp.asarray(scale)))
    Xs = X / scale
    np.testing.assert_allclose(got, -np.linalg.slogdet(Xs.T @ Xs / 200)[1], rtol=1e-10)
    got = float(_design._criterion_value(jnp.asarray(X), "aoptimal", jnp.asarray(scale)))
    np.testing.assert_allclose(got, np.log(np.trace(np.linalg.inv(Xs.T @ Xs / 200))), rtol=1e-10)
    c = float(_design._criterion_value(jnp.asarray(X), "condition", jnp.asarray(scale)))
    Xn = X / np.linalg.norm(X, axis=0)
    lam = np.linalg.eigvalsh(Xn.T @ Xn)
    p = _design._COND_POWER
    ref = (np.log(np.sum(lam**p)) + np.log(np.sum(lam**-p))) / (2 * p)
    np.testing.assert_allclose(c, ref, rtol=1e-10)
    logk = np.log(np.linalg.cond(Xn))
    assert logk <= c <= logk + np.log(7) / (2 * p) + 1e-12
    # condition_snr: the same plus the power mean, exponent -2p, of g_i = rms_i / D_i
    got = float(_design._criterion_value(jnp.asarray(X), "condition_snr", jnp.asarray(scale)))
    g = np.sqrt(np.mean(X**2, axis=0)) / scale
    np.testing.assert_allclose(got, ref + np.log(np.sum(g ** (-2 * p))) / (2 * p), rtol=1e-10)
    # a smooth upper bound of log(kappa / min g), within log(p_b) / p
    bound = np.log(np.linalg.cond(Xn) / g.min())
    assert bound <= got <= bound + np.log(7) / p + 1e-12
    # scaling every column by k lowers it by log k; the condition part does not move
    got2 = _design._criterion_value(jnp.asarray(3.0 * X), "condition_snr", jnp.asarray(scale))
    np.testing.assert_allclose(float(got2), got - np.log(3.0), rtol=1e-10)
    # what it bounds: 1 / sigma_min of the fixed-scale regressor <= kappa / min g
    smin = np.linalg.svd(Xs / np.sqrt(200), compute_uv=False)[-1]
    assert np.log(1.0 / smin) <= bound + 1e-12
    # the weakest column, not a mean: halving the weakest column's amplitude raises it by
    # about log 2 (a geometric mean would move by log(2) / 7)
    weak = np.argmin(g)
    Xh = X.copy()
    Xh[:, weak] *= 0.5
    got3 = float(_design._criterion_value(jnp.asarray(Xh), "condition_snr", jnp.asarray(scale)))
    assert got3 - got > 0.9 * np.log(2.0)


def _problem(chain, criterion, torque_limit=None):
    return _design._problem(
        chain, key=jax.random.key(3), harmonics=3, base_frequency=0.1, duration=10.0,
        criterion=criterion, starts=1, limits=LIM, acceleration_limit=2.0,
        torque_limit=torque_limit, margin=0.9, rate=20.0, grid_rate=5.0, steps=0,
        learning_rate=0.05, gravity=(0.0, -9.81, -1.0),
    )  # fmt: skip


@pytest.mark.parametrize(
    "criterion",
    [pytest.param(c, marks=pytest.mark.slow)
     for c in ("logdet", "condition", "aoptimal", "condition_snr")],  # compile time: CI's 2nd step
)  # fmt: skip
def test_gradient_against_finite_differences(chain, criterion):
    P = _problem(chain, criterion, torque_limit=[30.0, 8.0])

    def f(x):
        z, u = x[:-2].reshape(P.z.shape[1:]), x[-2:]
        return _design._loss(z, u, chain, P.basis, P.box, P.t_grid, P.f, P.base, P.scale,
                             criterion, P.tau, P.g)[0]  # fmt: skip

    x = jnp.concatenate([P.z[0].ravel(), P.u[0]])
    g = np.asarray(jax.grad(f)(x))
    h = 1e-6
    fd = np.array([(f(x.at[k].add(h)) - f(x.at[k].add(-h))) / (2 * h) for k in range(x.size)])
    np.testing.assert_allclose(g, fd, rtol=2e-4, atol=2e-6 * np.abs(fd).max())


@pytest.mark.slow  # compile time; CI's second step
def test_halving_keeps_the_best_and_their_paths(chain):
    """Successive halving: the starts kept at each rung are those with the lowest loss so far
    (read from a run without halving), and each keeps the path it has without halving."""
    kw = dict(KW, starts=8, steps=16)
    P = _design._problem(chain, key=jax.random.key(5), harmonics=3, base_frequency=0.1,
                         duration=10.0, criterion="condition_snr", starts=8, limits=LIM,
                         acceleration_limit=None, torque_limit=None, margin=0.9, rate=50.0,
                         grid_rate=10.0, steps=16, learning_rate=0.05,
                         gravity=(0.0, 0.0, -9.81))  # fmt: skip
    full = _design._optimise(chain, P, halving=False)
    assert full.rungs == ((17, 8),) and np.isfinite(full.history).all()
    best = np.minimum.accumulate(full.history, axis=1)  # no torque limit: loss = criterion
    alive = np.argsort(best[:, 2])[:2]  # after 2 steps (3 evaluations) the best quarter
    alive = alive[np.argsort(best[alive, 8])[:1]]  # after 8 steps the best sixteenth
    d = design_excitation(chain, key=jax.random.key(5), **kw)
    taken = np.full(8, 2)
    taken[np.argsort(best[:, 2])[:2]] = 8
    taken[alive] = 16
    np.testing.assert_array_equal(d.steps_taken, taken)
    # every start's value is its best over the evaluations it had, the same as without halving
    np.testing.assert_allclose(d.final_values, best[np.arange(8), taken], rtol=1e-9)
    np.testing.assert_allclose(d.start_values, full.history[:, 0], rtol=1e-12)
    assert d.best_start == int(alive[0])  # the only start left after the last rung
    np.testing.assert_allclose(d.value, best[alive[0], 16], rtol=1e-9)
    off = design_excitation(chain, key=jax.random.key(5), **kw, halving=False)
    np.testing.assert_array_equal(off.steps_taken, np.full(8, 16))
    np.testing.assert_allclose(off.final_values, best[:, 16], rtol=1e-9)
    with pytest.raises(TypeError, match="halving: expected True or False"):
        design_excitation(chain, key=jax.random.key(5), **kw, halving="yes")


def test_one_period_grid_has_the_criterion_of_the_whole_duration(chain):
    """Two whole periods repeat one: the criterion on one period's grid equals the criterion on
    both periods' samples (every criterion is a function of X_bᵀ X_b per row)."""
    P = _problem(chain, "condition_snr")
    t1 = _design._grid(20.0, 0.1, 5.0)
    np.testing.assert_allclose(t1, np.arange(50) / 5.0)
    np.testing.assert_allclose(_design._grid(15.0, 0.1, 5.0), np.linspace(0.0, 15.0, 76))
    t2 = np.concatenate([t1, t1 + 10.0])  # the same times over two periods
    ab = np.asarray(P.z[0]) @ np.asarray(P.basis).T  # (2 joints, 2 H), at rest at both ends
    a, b, q0 = ab[:, :3], ab[:, 3:], np.zeros(2)
    for kind in _design.CRITERIA:
        vals = []
        for t in (t1, t2):
            q, dq, ddq = (jnp.asarray(x) for x in fourier_trajectory(a, b, q0, 0.1, t))
            X, _ = _design._stacked(chain, q[None], dq[None], ddq[None], P.g)
            vals.append(float(_design._criterion_value(X[0][:, P.base], kind, P.scale)))
        np.testing.assert_allclose(vals[0], vals[1], rtol=1e-10, err_msg=kind)


def test_torque_limit_is_kept(chain):
    """With torque limits the output satisfies |rnea| <= margin * limit at every sample."""
    P = _problem(chain, "logdet", torque_limit=[60.0, 15.0])
    *_, t, q, dq, ddq = _design._output(chain, P, P.z[0] * 5.0, P.u[0])
    tau = np.asarray(mb.rnea(chain, q, dq, ddq, P.g))
    assert np.all(np.abs(tau) <= 0.9 * np.array([60.0, 15.0]) + 1e-9)
    with raises_argument(IdentifyError, "torque_limit", match="offset alone"):
        P = _problem(chain, "logdet", torque_limit=[1e-3, 1e-3])
        _design._output(chain, P, P.z[0], P.u[0])


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        (dict(duration=0.0), "duration: expected a positive"),
        (dict(duration=-1.0), "duration: expected a positive"),
        (dict(harmonics=0), "harmonics: expected an integer >= 1"),
        (dict(harmonics=1), "harmonics: 1 harmonics leave no freedom"),
        (dict(limits=None), "limits: the model has no joint limits"),
        (dict(limits={"lower": -1.0, "upper": 1.0}), "joint 'joint0'.*velocity limit"),
        (dict(limits={"velocity_limit": 1.0}), "joint 'joint0'.*no finite position limits"),
        (dict(limits={**LIM, "upper": [2.0, -1.5]}), "joint 'joint1' has lower"),
        (dict(limits={**LIM, "speed": 1.0}), "unknown key 'speed'"),
        (dict(criterion="aopt"), "criterion: expected one of"),
        (dict(margin=1.5), "margin: expected a fraction"),
        (dict(rate=0.5), "rate: expected above twice the band"),
        (dict(acceleration_limit=-1.0), "acceleration_limit: expected > 0"),
        (dict(torque_limit="effort"), "torque_limit='effort'"),
    ],
)
def test_bad_input(chain, kw, match):
    with pytest.raises(ValueError, match=match):
        design_excitation(chain, key=jax.random.key(0), **{**KW, **kw})


def test_bad_types(chain):
    with raises_argument(IdentifyTypeError, "harmonics"):
        design_excitation(chain, key=jax.random.key(0), **{**KW, "harmonics": 2.5})
    with raises_argument(IdentifyTypeError, "limits"):
        design_excitation(chain, key=jax.random.key(0), **{**KW, "limits": [1.0, 2.0]})


def _pin_limits(path, names):
    """The URDF's limits per joint as Pinocchio reads them (the independent reference)."""
    pin = pytest.importorskip("pinocchio")
    pm = pin.buildModelFromUrdf(str(path))
    idx = [pm.idx_qs[pm.getJointId(n)] for n in names]
    return {
        "lower": np.asarray(pm.lowerPositionLimit)[idx],
        "upper": np.asarray(pm.upperPositionLimit)[idx],
        "velocity_limit": np.asarray(pm.velocityLimit)[idx],
        "effort_limit": np.asarray(pm.effortLimit)[idx],
    }


@pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
def test_model_limits_used_by_default_match_pinocchio():
    path = ROBOTS / "panda_description/urdf/panda.urdf"
    model = mb.Model.from_urdf(path)
    ref = _pin_limits(path, model.joint_names)
    lo, hi, vel, _, _, _ = _design._resolve_limits(model, None, None, None)
    np.testing.assert_allclose(lo, ref["lower"])
    np.testing.assert_allclose(hi, ref["upper"])
    np.testing.assert_allclose(vel, ref["velocity_limit"])


# ------------------------------------------------------------------------------ the command
@pytest.fixture(autouse=True)
def _no_compilation_cache(monkeypatch):
    """In-process runs of the command must not point this process's JAX at a persistent cache."""
    monkeypatch.setenv("SPATIALJAX_NO_COMPILATION_CACHE", "1")


def _excite(argv, capsys):
    from spatialjax._cli import main

    rc = main(["excite", *argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


NO_LIMITS = """<robot name="r"><link name="base"/><link name="l1">
<inertial><mass value="1"/><origin xyz="0.5 0 0"/><inertia ixx="0.01" iyy="0.1" izz="0.1" ixy="0"
 ixz="0" iyz="0"/></inertial></link>
<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>
</joint></robot>"""


WITH_LIMITS = NO_LIMITS.replace(
    "</joint>", '<limit lower="-2" upper="2" velocity="1.5" effort="10"/></joint>'
)


def test_cli_no_cache_folder_for_a_refused_run(tmp_path, capsys, monkeypatch):
    """The compilation cache is enabled once design_excitation has checked the options."""
    monkeypatch.delenv("SPATIALJAX_NO_COMPILATION_CACHE")
    urdf = tmp_path / "r.urdf"
    urdf.write_text(WITH_LIMITS)
    cache = tmp_path / "cache"
    rc, _, err = _excite([str(urdf), "--duration", "10", "--harmonics", "1", "--cache-dir",
                          str(cache), "--out", str(tmp_path / "t.csv")], capsys)  # fmt: skip
    assert rc == 2 and "--harmonics: 1 harmonics leave no freedom" in err
    assert not cache.exists() and not (tmp_path / "t.csv").exists()


@pytest.mark.slow
def test_cli_cache_folder_written(tmp_path):
    """A run with the cache (a fresh process: JAX's cache settings are process-wide) creates
    the folder; whether JAX stores a program there depends on its compile time (programs
    under 0.1 s are not stored), so only the folder is checked."""
    import subprocess
    import sys

    urdf = tmp_path / "r.urdf"
    urdf.write_text(WITH_LIMITS)
    cache = tmp_path / "cache"
    argv = [sys.executable, "-m", "spatialjax", "excite", str(urdf), "--duration", "10",
            "--harmonics", "3", "--starts", "2", "--steps", "2", "--rate", "20", "--cache-dir",
            str(cache), "--out", str(tmp_path / "t.csv")]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "SPATIALJAX_NO_COMPILATION_CACHE"}
    proc = subprocess.run(argv, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert cache.is_dir()


def test_cli_bad_input(tmp_path, capsys):
    urdf = tmp_path / "r.urdf"
    urdf.write_text(NO_LIMITS)
    out = tmp_path / "t.csv"
    rc, _, err = _excite([str(urdf), "--duration", "0", "--out", str(out)], capsys)
    assert rc == 2 and "--duration 0: expected a length in s > 0" in err
    with pytest.raises(SystemExit) as e:
        _excite([str(urdf), "--duration", "10", "--harmonics", "0", "--out", str(out)], capsys)
    assert e.value.code == 2
    rc, _, err = _excite([str(urdf), "--duration", "10", "--out", str(out)], capsys)
    assert rc == 2 and "has no joint limits (no <limit> lower/upper/velocity)" in err
    out.write_text("keep")
    rc, _, err = _excite([str(urdf), "--duration", "10", "--out", str(out)], capsys)
    assert rc == 2 and "the file exists; pass --force" in err and out.read_text() == "keep"
    rc, _, err = _excite([str(urdf), "--duration", "10", "--lock", "jx=0", "--out",
                          str(tmp_path / "u.csv")], capsys)  # fmt: skip
    assert rc == 2 and "--lock: 'jx' is no movable joint" in err
    assert not (tmp_path / "u.csv").exists()


@pytest.mark.slow
@pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
def test_cli_panda(tmp_path, capsys):
    """The Panda (fingers locked by default: <mimic>): CSV inside every URDF limit, at rest."""
    path = ROBOTS / "panda_description/urdf/panda.urdf"
    out, rep = tmp_path / "t.csv", tmp_path / "r.json"
    argv = [str(path), "--duration", "10", "--starts", "2", "--steps", "3", "--rate", "20"]
    rc, text, err = _excite([*argv, "--out", str(out), "--report", str(rep)], capsys)
    assert rc == 0, err
    assert "panda_finger_joint2, panda_finger_joint1 locked at 0" in text
    header = out.read_text().splitlines()[0].split(",")
    arm = [f"panda_joint{k}" for k in range(1, 8)]
    assert header == ["t"] + [f"{p}_{j}" for p in ("q", "dq", "ddq") for j in arm]
    data = np.loadtxt(out, delimiter=",", skiprows=1)
    lim = _pin_limits(path, tuple(arm))
    q, dq, ddq = data[:, 1:8], data[:, 8:15], data[:, 15:22]
    assert np.all(q >= lim["lower"]) and np.all(q <= lim["upper"])
    assert np.all(np.abs(dq) <= lim["velocity_limit"])
    assert np.abs(dq[[0, -1]]).max() < 1e-9 and np.abs(ddq[[0, -1]]).max() < 1e-9
    report = json.loads(rep.read_text())
    assert (
        report["joints"] == arm
        and report["criterion"]["value"] < report["criterion"]["start_value"]
    )


@pytest.mark.slow
def test_float32(chain):
    d = design_excitation(mb.chain_model(2, dtype="float32"), key=jax.random.key(0), **KW)
    assert np.all(np.abs(d.dq) <= 0.9 * np.asarray(LIM["velocity_limit"]) + 1e-6)
    assert np.isfinite(d.value) and d.value < d.start_value


@pytest.mark.slow
@pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
@pytest.mark.parametrize("robot", ["panda", "ur5"])
def test_condition_twice_better_than_median_random(robot):
    """Default settings; Pinocchio regressor + friction, column-scaled, base columns: vs random."""
    pin = pytest.importorskip("pinocchio")
    import scipy.linalg

    rel, locked = {
        "panda": ("panda_description/urdf/panda.urdf",
                  {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}),
        "ur5": ("ur_description/urdf/ur5_robot.urdf", {}),
    }[robot]  # fmt: skip
    path = ROBOTS / rel
    model = mb.Model.from_urdf(path, locked_joints=locked or None, dtype="float64")
    pm = pin.buildModelFromUrdf(str(path))
    if locked:
        pm = pin.buildReducedModel(pm, [pm.getJointId(n) for n in locked], pin.neutral(pm))
    data = pm.createData()

    def stacked(q, dq, ddq):
        Y = np.stack([pin.computeJointTorqueRegressor(pm, data, q[k], dq[k], ddq[k]).copy()
                      for k in range(q.shape[0])])  # fmt: skip
        # sign 0 at rest
        F = np.asarray(_design._friction_regressor_at_rest(model, jnp.asarray(dq)))
        return np.concatenate([Y, F], -1).reshape(-1, Y.shape[-1] + F.shape[-1])

    def cond(q, dq, ddq, base):  # column-scaled, on the base columns
        Xb = stacked(q, dq, ddq)[:, base]
        sv = np.linalg.svd(Xb / np.linalg.norm(Xb, axis=0), compute_uv=False)
        return sv[0] / sv[-1]

    kw = dict(duration=20.0, rate=100.0, limits=None)
    d = design_excitation(model, key=jax.random.key(0), **kw)  # every other setting: the default
    assert d.criterion == "condition_snr" and d.starts == 64 and d.steps == 400
    P = _design._problem(model, key=jax.random.key(1), harmonics=5, base_frequency=0.1,
                         criterion="logdet", starts=100, acceleration_limit=None,
                         torque_limit=None, margin=0.9, grid_rate=10.0, steps=0,
                         learning_rate=0.05, gravity=(0.0, 0.0, -9.81), **kw)  # fmt: skip
    trajs = [_design._output(model, P, P.z[i], P.u[i])[5:] for i in range(100)]
    # Gautier's base columns from Pinocchio's regressor of 4 random trajectories (SciPy's QR
    # without pivoting): the design's, found from its own random starts, are the same
    X4 = np.concatenate([stacked(*tr) for tr in trajs[:4]])
    n4 = np.linalg.norm(X4, axis=0)
    live = n4 > np.sqrt(np.finfo(float).eps) * n4.max()  # the others are rounding noise
    r = np.abs(np.diag(scipy.linalg.qr(np.where(live, X4 / np.where(live, n4, 1.0), 0.0),
                                       mode="r")[0]))  # fmt: skip
    base = np.flatnonzero(live & (r > np.sqrt(10 * X4.shape[1] * np.finfo(float).eps)))
    np.testing.assert_array_equal(base, d.base_columns)
    random = [cond(*tr, base) for tr in trajs]
    designed = cond(d.q, d.dq, d.ddq, base)
    assert designed * 2 <= np.median(random), (designed, np.median(random))
    lim = _pin_limits(path, model.joint_names)
    assert np.all(d.q >= lim["lower"]) and np.all(d.q <= lim["upper"])
    assert np.all(np.abs(d.dq) <= lim["velocity_limit"])


def test_condition_of_an_unexcited_base_column_is_inf(chain, design):
    """A trajectory that leaves a base column at zero (the robot at rest): inf, not NaN."""
    q = np.zeros((11, 2))
    got = _design._condition(chain, jnp.asarray(q), jnp.asarray(q), jnp.asarray(q),
                             jnp.asarray([0.0, 0.0, -9.81]), design.base_columns)  # fmt: skip
    assert got == np.inf
