"""``spatialjax demo``: identify every link of a Panda arm and its joint friction from torques.

Simulated data with a known truth (links perturbed from the URDF, Panda-sized friction,
Gaz et al., RA-L 2019), identified by
[`identify_robot`][spatialjax.identification.identify_robot] with its defaults.
"""

from __future__ import annotations

import dataclasses
import sys
import time

import numpy as np

from .._rotations import rot_axis
from .._util import CACHE_DIR, enable_compilation_cache
from .demo import done, stage

#: Panda joint position limits (rad), from the Franka Emika datasheet (= panda.urdf).
PANDA_Q_LIMITS = np.array(
    [
        [-2.8973, 2.8973],
        [-1.7628, 1.7628],
        [-2.8973, 2.8973],
        [-3.0718, -0.0698],
        [-2.8973, 2.8973],
        [-0.0175, 3.7525],
        [-2.8973, 2.8973],
    ]
)
#: Panda joint speed limits (rad/s), same source.
PANDA_DQ_LIMITS = np.array([2.175, 2.175, 2.175, 2.175, 2.61, 2.61, 2.61])

# The Panda's joints in its parent link (URDF <origin>: roll about x in rad, then xyz in m) and
# its link inertials (mass kg, CoM m, inertia about the CoM kg m² as ixx ixy ixz iyy iyz izz),
# from example-robot-data's panda.urdf: the fallback robot when that package is absent.
_PANDA_JOINTS = (
    (0.0, (0.0, 0.0, 0.333)),
    (-np.pi / 2, (0.0, 0.0, 0.0)),
    (np.pi / 2, (0.0, -0.316, 0.0)),
    (np.pi / 2, (0.0825, 0.0, 0.0)),
    (-np.pi / 2, (-0.0825, 0.384, 0.0)),
    (np.pi / 2, (0.0, 0.0, 0.0)),
    (np.pi / 2, (0.088, 0.0, 0.0)),
)
_PANDA_LINKS = (
    (4.970684, (0.003875, 0.002081, -0.04762),
     (0.70337, -0.000139, 0.006772, 0.70661, 0.019169, 0.009117)),
    (0.646926, (-0.003141, -0.02872, 0.003495),
     (0.007962, -0.003925, 0.010254, 0.02811, 0.000704, 0.025995)),
    (3.228604, (0.027518, 0.039252, -0.066502),
     (0.037242, -0.004761, -0.011396, 0.036155, -0.012805, 0.01083)),
    (3.587895, (-0.05317, 0.104419, 0.027454),
     (0.025853, 0.007796, -0.001332, 0.019552, 0.008641, 0.028323)),
    (1.225946, (-0.011953, 0.041065, -0.038437),
     (0.035549, -0.002117, -0.004037, 0.029474, 0.000229, 0.008627)),
    (1.666555, (0.060149, -0.014117, -0.010517),
     (0.001964, 0.000109, -0.001158, 0.004354, 0.000341, 0.005433)),
    (0.735522, (0.010517, -0.004252, 0.061597),
     (0.012516, -0.000428, -0.001196, 0.010027, -0.000741, 0.004815)),
)  # fmt: skip

DURATION = 25.0  # s of excitation
RATE = 1000.0  # Hz, the controller's logging rate
RELATIVE = 0.3  # geodesic distance of the true links from the URDF
TORQUE_NOISE = 0.03  # N·m, per sample (joint torque sensors of a Panda-class arm)
ENCODER_BITS = 18
HOLDOUT = 0.2
FRICTION_RANGES = {"viscous": (0.05, 0.6), "coulomb": (0.2, 1.0), "offset": (-0.2, 0.2)}


def add_arguments(parser) -> None:
    """The robot demo's own options (``--seed`` is shared with the payload demo)."""
    parser.add_argument(
        "--duration",
        type=float,
        default=DURATION,
        help=f"robot demo: seconds of 1 kHz excitation to simulate (default {DURATION:g})",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="robot demo: do not use the persistent JAX compilation cache in "
        f"{CACHE_DIR} (also: environment SPATIALJAX_NO_COMPILATION_CACHE=1)",
    )
    parser.add_argument(
        "--cache-dir",
        default=None,
        help=f"robot demo: folder of the persistent compilation cache (default {CACHE_DIR})",
    )


def panda_like_chain(dtype=None):
    """A Panda-like 7-joint arm: ``chain_model`` with the Panda's joint frames and inertials."""
    import jax.numpy as jnp

    import spatialjax as sj
    from spatialjax import multibody as mb

    base = mb.chain_model(7, dtype=dtype)
    dt = base.dtype
    E = np.stack([rot_axis(0, r) for r, _ in _PANDA_JOINTS])
    p = np.array([xyz for _, xyz in _PANDA_JOINTS])
    m = np.array([link[0] for link in _PANDA_LINKS])
    c = np.array([link[1] for link in _PANDA_LINKS])
    i6 = np.array([link[2] for link in _PANDA_LINKS])
    Ic = np.stack(
        [[[a, b, d], [b, e, f], [d, f, g]] for a, b, d, e, f, g in i6]
    )  # ixx ixy ixz iyy iyz izz
    inertia = sj.RigidBodyInertia.from_mass_com_inertia(
        jnp.asarray(m, dt), jnp.asarray(c, dt), jnp.asarray(Ic, dt)
    )
    return dataclasses.replace(
        base,
        name="panda_like_chain",
        placements=sj.Plxb(jnp.asarray(E, dt), jnp.asarray(p, dt)),
        inertia=inertia,
    )


def panda_model(dtype=None):
    """``(model, source)``: example-robot-data's Panda (fingers locked) or the fallback chain."""
    import importlib.metadata
    from pathlib import Path

    from spatialjax import multibody as mb

    try:
        dist = importlib.metadata.distribution("example-robot-data")
        urdf = None
        for f in dist.files or []:
            if str(f).endswith("panda_description/urdf/panda.urdf"):
                urdf = Path(str(dist.locate_file(f)))
        if urdf is not None and urdf.is_file():
            locked = {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}
            model = mb.Model.from_urdf(str(urdf), locked_joints=locked, dtype=dtype)
            return model, f"example-robot-data's panda.urdf (fingers locked, hand merged): {urdf}"
    except importlib.metadata.PackageNotFoundError:
        pass
    return (
        panda_like_chain(dtype),
        "a Panda-like 7-joint chain built in code (example-robot-data is not installed: "
        "the Panda's joint frames and link inertials, no hand)",
    )


def _why_impossible(rep, mass: float, prior_mass: float) -> str:
    """Plain-words reason why a link with consistency report ``rep`` is no body."""
    lam = np.asarray(rep.principal_moments)
    if not bool(rep.finite):
        return "it has non-finite parameters"
    if abs(mass) < 1e-3 * prior_mass:
        return (
            f"its mass is essentially zero ({mass:.1e} kg) while it has rotational inertia: "
            "no body has that"
        )
    if mass <= 0:
        return f"negative mass ({mass:.3g} kg)"
    if not bool(rep.inertia_psd):
        return f"a principal moment of inertia about its CoM is negative ({lam[0]:.3g} kg m^2)"
    if not bool(rep.triangle_inequality):
        return (
            f"its principal moments {lam[0]:.3g}, {lam[1]:.3g}, {lam[2]:.3g} kg m^2 violate "
            f"the triangle inequality (the two smallest sum to less than the largest)"
        )
    return "it fails the consistency test"


def simulate(model, *, seed: int, duration: float):
    """``(log, truth, friction)``: the simulated hardware log, true links and true friction."""
    import jax

    from spatialjax import identification as sid

    key = jax.random.key(seed)
    k_traj, k_body, k_noise = jax.random.split(key, 3)
    rng = np.random.default_rng(seed)
    friction = np.column_stack(
        [rng.uniform(*FRICTION_RANGES[k], size=model.nv) for k in FRICTION_RANGES]
    )
    truth = sid.perturb_inertia(model.inertia, RELATIVE, k_body)
    t, q, dq, ddq = sid.excitation_trajectory(
        model.nv,
        duration=duration,
        rate=RATE,
        key=k_traj,
        q_limits=PANDA_Q_LIMITS,
        dq_limits=PANDA_DQ_LIMITS,
        amplitude=1.5,
        dtype=model.dtype,
    )
    log = sid.simulate_log(
        model,
        t,
        q,
        dq,
        ddq,
        key=k_noise,
        inertia=truth,
        friction=friction,
        torque_noise=TORQUE_NOISE,
        encoder_resolution=2 * np.pi / 2**ENCODER_BITS,
    )
    return log, truth, friction


def identify_with_demo_settings(model, log, *, holdout: float = HOLDOUT):
    """``identify_robot`` with its defaults and the demo's held-out fraction."""
    from spatialjax import identification as sid

    return sid.identify_robot(model, log, holdout=holdout)


def _print_setup(model, source: str, cache: str | None, duration: float) -> None:
    """The robot, the truth and the log the demo simulates."""
    import jax

    print(
        f"spatialjax demo: whole-robot inertial identification of a Panda arm ({model.nv} joints) "
        f"on {jax.devices()[0]}, float64\n"
        f"  robot: {source}\n"
        f"  compilation cache: {cache or 'off'}"
    )
    print(
        f"  truth: every link's inertia perturbed from the URDF (geodesic distance {RELATIVE}, "
        "always a physically consistent body);\n"
        "    joint friction tau_f = Fv dq + Fc sign(dq) + offset with Fv in "
        f"{FRICTION_RANGES['viscous'][0]}-{FRICTION_RANGES['viscous'][1]} N·m·s/rad, Fc in "
        f"{FRICTION_RANGES['coulomb'][0]}-{FRICTION_RANGES['coulomb'][1]} N·m, offset within "
        f"±{FRICTION_RANGES['offset'][1]} N·m\n"
        "    (the magnitudes Gaz et al., IEEE RA-L 2019, identified on a real Panda)"
    )
    print(
        f"  log: {duration:g} s Fourier-series excitation (Swevers et al. 1997; 5 harmonics "
        f"of 0.1 Hz, inside the joint position and speed limits)\n"
        f"    at {RATE:g} Hz, torque noise {TORQUE_NOISE} N·m, {ENCODER_BITS}-bit encoders, "
        "velocities and accelerations not logged (as on hardware)"
    )


def _print_samples(rep_) -> None:
    """How many samples trained and were held out, and their weight."""
    n_s = rep_["samples"]
    print(f"  filter: {rep_['filter']['reason']}")
    print(
        f"  training: {n_s['train']} samples; held out: {n_s['holdout']} samples (the last "
        f"{100 * HOLDOUT:g} % of the log, filtered on its own); data weighted by "
        f"{min(rep_['effective_samples'].values()):.0f}-"
        f"{max(rep_['effective_samples'].values()):.0f} effective samples per joint"
    )


def _print_errors(rep_) -> None:
    """Step 1: the held-out torque error of the URDF prior, least squares and fit."""
    print(
        "\n  1. Held-out torque error |tau_predicted - tau_measured| / |tau_measured| (last 20 %):"
    )
    notes = {
        "URDF prior": "the URDF as it is: its links, its joints' damping and friction",
        "least squares": "ordinary least squares, links + joint model",
        "fit": "consistent fit, URDF as log-det prior, links + joint model",
    }
    keys = {"URDF prior": "prior", "least squares": "least_squares", "fit": "fit"}
    heldout = {k: rep_["errors"][v]["holdout"]["overall"] for k, v in keys.items()}
    for k, e in heldout.items():
        print(f"     {k:<14} {100 * e:6.2f} %   ({notes[k]})")
    e_ls, e_fit = heldout["least squares"], heldout["fit"]
    print(
        "     Least squares and fit predict the torques about equally well: both explain the data"
        " down to the\n     noise. The torques cannot tell them apart; the links can."
        if abs(e_fit - e_ls) <= 0.05 * e_ls
        else f"     fit / least squares error ratio {e_fit / e_ls:.2f}."
    )


def _print_impossible(model, ls, fit, rep_) -> None:
    """Step 2: the links least squares makes physically impossible, and why; fit's links."""
    import spatialjax as sj

    rep = sj.physical_consistency(ls)
    bad = [i for i in range(model.nbodies) if not bool(rep.fully_consistent[i])]
    print(
        f"\n  2. Physically impossible links from least squares: {len(bad)} of {model.nbodies}"
        + (":" if bad else ".")
    )
    for i in bad:
        print(
            f"     {model.body_names[i]} (mass {float(ls.mass[i]):.3f} kg): "
            f"{_why_impossible(rep[i], float(ls.mass[i]), float(model.inertia.mass[i]))}"
        )
    if bad:
        print(
            f"     Why: the torques determine only {rep_['identifiability']['rank']} of the "
            f"{rep_['identifiability']['n_columns']} parameters (rank of the regressor with the "
            "joint model);\n"
            "     least squares sets the rest to whatever is smallest (minimum norm), with no "
            "notion of a body.\n"
            "     Such a model fits the torques, but a simulator or controller using it "
            "behaves unphysically."
        )
    ok = np.asarray(sj.physical_consistency(fit).fully_consistent)
    st = rep_["fit_status"]
    print(
        f"     fit: {int(ok.sum())} of {model.nbodies} links fully physically consistent "
        f"(pseudo-inertia J > 0); {'converged' if st['converged'] else 'NOT converged'} "
        f"in {st['iterations']} Newton iterations, prior weight gamma = {rep_['gamma']:g}."
    )


def _print_masses(model, truth, ls, fit) -> None:
    """Step 3: every link's mass, true, in the URDF, from least squares and from fit."""
    import jax.numpy as jnp

    print("\n  3. Link masses (kg): truth, URDF prior, least squares, fit")
    print(f"     {'link':<14} {'truth':>7} {'URDF':>7} {'l.sq.':>7} {'fit':>7}   fit error")
    for i in range(model.nbodies):
        mt, mp = float(truth.mass[i]), float(model.inertia.mass[i])
        ml, mf = float(ls.mass[i]), float(fit.mass[i])
        print(
            f"     {model.body_names[i]:<14} {mt:7.3f} {mp:7.3f} {ml:7.3f} {mf:7.3f}   "
            f"{100 * (mf - mt) / mt:+6.1f} %"
        )
    tm, pm = float(jnp.sum(truth.mass)), float(jnp.sum(model.inertia.mass))
    print(
        f"     {'total':<14} {tm:7.3f} {pm:7.3f} {float(jnp.sum(ls.mass)):7.3f} "
        f"{float(jnp.sum(fit.mass)):7.3f}"
    )
    print(
        "     The first link turns about the vertical: gravity never acts on its mass, so the "
        "data cannot see it\n     and the fit keeps the URDF value; least squares returns "
        "whatever the minimum norm gives."
    )


def run(args) -> int:
    """The robot demo (see the module docstring); returns the exit status."""
    if not (np.isfinite(args.duration) and 8.0 <= args.duration <= 600.0):
        print(
            f"spatialjax demo: --duration must be between 8 and 600 s, got {args.duration}",
            file=sys.stderr,
        )
        return 2
    t_start = time.perf_counter()
    import jax

    cache = None if args.no_cache else enable_compilation_cache(args.cache_dir)
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    import spatialjax as sj

    model, source = panda_model(jnp.float64)
    _print_setup(model, source, cache, args.duration)
    t0 = stage("simulating the log (inverse dynamics of the true robot + friction + noise)")
    log, truth, friction = simulate(model, seed=args.seed, duration=args.duration)
    done(t0, 1)
    t0 = stage(
        "filtering (the cut-off chosen from the log's spectrum), differentiating, regressors "
        "(filtered like the torques), decimating, least squares and fit (compiles on a first "
        "run)"
    )
    r = identify_with_demo_settings(model, log)
    done(t0, 1)
    report = r.report.to_dict()  # the report's JSON form
    _print_samples(report)
    _print_errors(report)
    ls = sj.RigidBodyInertia(jnp.asarray(r.params["least_squares"]))
    fit = sj.RigidBodyInertia(jnp.asarray(r.params["fit"]))
    _print_impossible(model, ls, fit, report)
    _print_masses(model, truth, ls, fit)
    fr_err = np.abs(r.joint_parameters["fit"][:, 1:] - friction)
    print(
        f"\n  Friction (fit vs truth, all joints): viscous within {fr_err[:, 0].max():.3f} "
        f"N·m·s/rad, Coulomb within {fr_err[:, 1].max():.3f} N·m, offset within "
        f"{fr_err[:, 2].max():.3f} N·m."
    )
    print(f"\n  total time {time.perf_counter() - t_start:.1f} s (compilation included)")
    return 0
