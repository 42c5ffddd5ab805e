"""``spatialjax demo --payload``: identify a robot's payload from wrist force/torque readings.

A 1.6 kg gripper-like tool, moved in gravity by a robot wrist, is read by a wrist
force/torque sensor at the sensor frame B (wrench ``[n; f]``, noise of an ATI
Mini45-class sensor); its ten parameters are identified by plain weighted least
squares and by [`fit`][spatialjax.identification.fit] (constrained to ``J ≻ 0``).
Docs page ``identification-python.md#one-body-from-wrenches``.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from .demo import done, stage

G = 9.81  # m/s², along −z of the world frame
# Per-reading noise standard deviations of a six-axis wrist F/T sensor of the ATI Mini45
# class: roughly 0.05-0.1 N on forces and 0.002-0.005 N·m on torques (raw readings at kHz
# rates, before any filtering); the middle of those ranges. Order (n_x, n_y, n_z, f_x, f_y, f_z).
SIGMA = np.array([0.0035, 0.0035, 0.0035, 0.075, 0.075, 0.075])
DURATION = 10.0  # s of trajectory

METRICS = """\
  How to read the table:
    mass, CoM        mass in kg, centre of mass in mm in the sensor frame B.
    principal moments  rotational inertia about the CoM (g m^2); a real body has all three
                     >= 0 and each <= the sum of the other two (triangle inequality).
    consistent       fully physically consistent (pseudo-inertia J > 0): some mass
                     distribution has these parameters; "NO" means none does.
    geodesic         affine-invariant distance between the pseudo-inertias of the estimate
                     and the truth (Lee, Wensing & Park 2020): 0 is perfect, 0.1 is roughly
                     a 10 % error in the mass distribution; undefined if J is not > 0."""


def add_arguments(parser) -> None:
    parser.add_argument(
        "--payload",
        action="store_true",
        help="run the single-payload identification demo (a tool on a wrist force/torque "
        "sensor) instead of the whole-robot one; the options below marked 'payload' apply to it",
    )
    parser.add_argument(
        "--bodies",
        type=int,
        default=1,
        help="payload: number of payload variants fitted in one batch",
    )
    parser.add_argument(
        "--noise",
        type=float,
        default=1.0,
        help="payload: noise level as a multiple of an ATI Mini45-class sensor's (default 1)",
    )
    parser.add_argument(
        "--samples",
        type=int,
        default=2000,
        help=f"payload: sensor readings per payload, spread over a {DURATION:g} s trajectory "
        "(default 2000)",
    )
    parser.add_argument("--seed", type=int, default=5, help="random seed (default 5)")
    parser.add_argument(
        "--float32", action="store_true", help="payload: run in float32 (default float64)"
    )


def make_payloads(rng, n, dtype):
    """``n`` gripper-like tools in the sensor frame B (a ``RigidBodyInertia`` of batch ``(n,)``).

    B's z axis points out of the flange along the tool: a flange disc, a housing box and
    two fingers, sizes and masses varied by ±20 % per payload (about 1.6 kg in all).
    """
    import jax.numpy as jnp

    import spatialjax as sj

    s = rng.uniform(0.8, 1.2, size=(n, 4))

    def arr(x):
        return jnp.asarray(x, dtype)

    flange = sj.cylinder(arr(0.2 * s[:, 0]), arr(0.032), arr(0.010))
    housing = sj.box(arr(1.0 * s[:, 1]), arr(np.array([0.080, 0.060, 0.090]) * s[:, 1:2]))
    finger_a = sj.box(arr(0.2 * s[:, 2]), arr([0.015, 0.015, 0.060]))
    finger_b = sj.box(arr(0.2 * s[:, 3]), arr([0.015, 0.015, 0.060]))
    eye = jnp.eye(3, dtype=dtype)

    def at(part, x, y, z):
        # Plx(E, r): E = coordinate rotation, r = B's origin in the part frame
        return part.transform(sj.Plx(eye, arr([-x, -y, -z])))

    return (
        at(flange, 0.0, 0.0, 0.005)
        + at(housing, 0.008, 0.0, 0.055)
        + at(finger_a, 0.025, 0.0, 0.130)
        + at(finger_b, -0.025, 0.010, 0.130)
    )


def _rot(axis: int, angle):
    import jax.numpy as jnp

    c, s = jnp.cos(angle), jnp.sin(angle)
    o, i = jnp.zeros_like(angle), jnp.ones_like(angle)
    rows = {
        0: ((i, o, o), (o, c, -s), (o, s, c)),
        1: ((c, o, s), (o, i, o), (-s, o, c)),
        2: ((c, -s, o), (s, c, o), (o, o, i)),
    }[axis]
    return jnp.stack([jnp.stack(r, -1) for r in rows], -2)


def excitation(rng, n_bodies, n_samples, dtype):
    """Wrist motion in gravity: body twists ``v``, their derivatives ``a`` and ``g`` in B.

    ``R_WB(t) = Rz(ψ) Ry(θ) Rx(φ)`` and ``p_WB(t)`` sinusoids; exact derivatives
    (``jax.jvp``), ``[ω; v_o]`` in B coordinates as
    [`body_regressor`][spatialjax.identification.body_regressor] expects.

    Returns:
      ``v, a`` ``(n_bodies, n_samples, 6)`` and ``g`` ``(n_bodies, n_samples, 3)``:
      ``R_WBᵀ [0, 0, −9.81]``.
    """
    import jax
    import jax.numpy as jnp

    from .._smallmat import FULL, matmul

    t = jnp.asarray(np.linspace(0.0, DURATION, n_samples, endpoint=False), dtype)
    amp_rot = jnp.asarray(rng.uniform(0.9, 1.2, size=(n_bodies, 1, 3)), dtype)
    f_rot = jnp.asarray(rng.uniform(0.15, 0.4, size=(n_bodies, 1, 3)), dtype)
    amp_pos = 0.15
    f_pos = jnp.asarray(rng.uniform(0.2, 0.5, size=(n_bodies, 1, 3)), dtype)
    phase = jnp.asarray(rng.uniform(0, 2 * np.pi, size=(n_bodies, 1, 6)), dtype)
    two_pi = 2 * np.pi

    def pose(t):
        ang = amp_rot * jnp.sin(two_pi * f_rot * t[:, None] + phase[..., :3])
        R = matmul(matmul(_rot(2, ang[..., 0]), _rot(1, ang[..., 1])), _rot(0, ang[..., 2]))
        p = amp_pos * jnp.sin(two_pi * f_pos * t[:, None] + phase[..., 3:])
        return R, p

    def twist(t):
        (R, _), (Rd, pd) = jax.jvp(pose, (t,), (jnp.ones_like(t),))
        W = matmul(jnp.swapaxes(R, -1, -2), Rd)  # = skew(ω) in B
        w = jnp.stack([W[..., 2, 1], W[..., 0, 2], W[..., 1, 0]], -1)
        vo = jnp.einsum("...ji,...j->...i", R, pd, precision=FULL)
        return jnp.concatenate([w, vo], -1)

    v, a = jax.jvp(twist, (t,), (jnp.ones_like(t),))
    R, _ = pose(t)
    g = jnp.einsum("...ji,j->...i", R, jnp.asarray([0.0, 0.0, -G], dtype), precision=FULL)
    return v, a, g


def weighted_least_squares(Y, f, w):
    """Per-body ``argmin Σ w (Y π − f)²`` (normal equations, NumPy float64)."""
    Y, f, w = (np.asarray(x, np.float64) for x in (Y, f, w))
    A = np.einsum("...nij,...ni,...nik->...jk", Y, np.broadcast_to(w, f.shape), Y)
    b = np.einsum("...nij,...ni,...ni->...j", Y, np.broadcast_to(w, f.shape), f)
    return np.linalg.solve(A, b[..., None])[..., 0]


def _row(name, body, truth, seconds, sj):
    import jax.numpy as jnp

    rep = sj.physical_consistency(body)
    d = sj.geodesic_distance(truth, body) if bool(jnp.all(rep.pseudo_inertia_psd)) else None
    lam = np.asarray(rep.principal_moments) * 1e3
    c = np.asarray(body.com) * 1e3
    verdict = (
        "yes"
        if bool(rep.fully_consistent)
        else ("NO: triangle ineq." if not bool(rep.triangle_inequality) else "NO")
    )
    if not bool(rep.inertia_psd):
        verdict = "NO: I_c not PSD"
    dist = "-" if name == "truth" else ("undefined" if d is None else f"{float(d):.4f}")
    t = "" if seconds is None else f"{seconds * 1e3:8.1f}"
    print(
        f"  {name:<20} {float(body.mass):7.4f}  ({c[0]:6.2f}, {c[1]:6.2f}, {c[2]:6.2f})  "
        f"({lam[0]:6.3f}, {lam[1]:6.3f}, {lam[2]:6.3f})  {verdict:<18} {dist:>9}  {t}"
    )


def _bad_options(args) -> str | None:
    """The message for options out of range (exit status 2), or None."""
    if args.bodies < 1 or args.samples < 20:
        return "spatialjax demo: --bodies must be >= 1 and --samples >= 20"
    if not np.isfinite(args.noise) or args.noise < 0:
        return f"spatialjax demo: --noise must be >= 0, got {args.noise}"
    return None


def _simulate(rng, args, sigma, dtype):
    """``(truth, Y, f, w)``: payloads, regressor, noisy wrenches, weights; prints the signal."""
    import jax.numpy as jnp

    from spatialjax.identification import body_regressor

    from .._smallmat import FULL

    n = args.bodies
    truth = make_payloads(rng, n, dtype)
    v, a, g = excitation(rng, n, args.samples, dtype)
    Y = body_regressor(v, a, gravity=g)  # (n, samples, 6, 10): Y @ π = sensor wrench [n; f]
    clean = jnp.einsum("nsij,nj->nsi", Y, truth.params, precision=FULL)
    noise = jnp.asarray(rng.normal(size=clean.shape) * sigma, dtype)
    f = clean + noise
    w = jnp.asarray(1.0 / np.maximum(sigma, 1e-12) ** 2, dtype)
    # signal-to-noise per axis: RMS of the wrench (gravity included) and of its dynamic part
    Y0 = body_regressor(v, a)  # the same motion without gravity
    dyn = jnp.einsum("nsij,nj->nsi", Y0, truth.params, precision=FULL)
    rms = np.sqrt(np.mean(np.asarray(clean) ** 2, axis=(0, 1)))
    rms_dyn = np.sqrt(np.mean(np.asarray(dyn) ** 2, axis=(0, 1)))
    snr = rms / np.maximum(sigma, 1e-300)
    print(
        f"  signal: RMS force {np.linalg.norm(rms[3:]):.2f} N (dynamic part "
        f"{np.linalg.norm(rms_dyn[3:]):.2f} N), RMS torque {np.linalg.norm(rms[:3]):.3f} N·m "
        f"(dynamic part {np.linalg.norm(rms_dyn[:3]) * 1e3:.1f} mN·m); per-axis signal/noise "
        f"{snr[3:].min():.0f}-{snr[3:].max():.0f} (forces), {snr[:3].min():.0f}-{snr[:3].max():.0f}"
        " (torques)"
    )
    return truth, Y, f, w


def _identify(Y, f, w, args, dtype):
    """``(ls, res, t_ls, t_fit)``: least squares and ``fit`` (compiled, then timed), timed."""
    import jax
    import jax.numpy as jnp

    import spatialjax as sj
    from spatialjax.identification import fit

    t0 = stage("weighted least squares (NumPy normal equations)")
    pi_ls = weighted_least_squares(Y, f, w)
    t_ls = done(t0) / args.bodies
    ls = sj.RigidBodyInertia(jnp.asarray(pi_ls, dtype))

    t0 = stage("fit, first call: compiles, then runs")
    jax.block_until_ready(fit(Y, f, weights=w))
    done(t0)
    t0 = stage("fit, second call (compiled)")
    res = jax.block_until_ready(fit(Y, f, weights=w))
    t_fit = done(t0)
    return ls, res, t_ls, t_fit


def _print_one(truth, ls, res, t_ls, t_fit, chi2) -> None:
    """One payload: the table of truth, least squares and fit, the metrics and the verdict."""
    import spatialjax as sj
    from spatialjax.identification import FitStatus

    print()
    print(
        f"  {'':<20} {'mass kg':>7}  {'CoM mm':^26}  {'principal moments g m^2':^25}  "
        f"{'consistent':<18} {'geodesic':>9}  {'time ms':>8}"
    )
    _row("truth", truth[0], truth[0], None, sj)
    _row("least squares", ls[0], truth[0], t_ls, sj)
    _row("fit", res.inertia[0], truth[0], t_fit, sj)
    print()
    print(METRICS)
    status = int(res.status[0])
    print(
        f"\n  fit: {FitStatus.describe(status)} after {int(res.iterations[0])} iterations.\n"
        f"    residual / (6 N) = {chi2[0]:.3f}: the weighted residual per reading and axis, "
        "in units of the noise variance;\n"
        "      about 1 when the model explains the data down to the sensor noise.\n"
        f"    condition number {float(res.condition_number[0]):.3g}: how unevenly the "
        "trajectory excites the 10 parameters (sigma_max / sigma_min of\n"
        "      the whitened regressor); 1 is ideal, large values mean some parameter "
        "combinations are poorly determined."
    )
    if bool(sj.physical_consistency(ls[0]).fully_consistent):
        print(
            "\n  Why least squares and fit give the same body here: least squares is already "
            "physically consistent,\n  and fit's default prior is the least-squares body, "
            "where its small regulariser is minimal, so\n  the optimum does not move. With a "
            "real sensor and a well-excited 1.6 kg tool this is the usual case;\n  fit "
            "differs where least squares is not a body: short or poor excitation, more "
            "noise, lighter\n  payloads (try --samples 200 --noise 3 --bodies 200)."
        )
    else:
        print(
            "\n  Least squares and fit agree on mass and CoM: gravity makes them the best "
            "determined parameters\n  (the weight is far above the force noise). They "
            "differ in the rotational inertia, seen only\n  through small dynamic torques: "
            "the least-squares one is no body, fit's is the closest consistent\n  optimum."
        )


def _print_batch(truth, ls, res, t_ls, t_fit, chi2) -> None:
    """Several payloads: the share consistent and the median geodesic error of each estimate."""
    import spatialjax as sj

    n = ls.batch_shape[0]
    rep_ls = sj.physical_consistency(ls)
    ok_ls = np.asarray(rep_ls.fully_consistent)
    ok_fit = np.asarray(res.consistency.fully_consistent)
    d_fit = np.asarray(sj.geodesic_distance(truth, res.inertia))
    d_ls = np.asarray(sj.geodesic_distance(truth, sj.nearest_consistent(ls)))
    print()
    print(f"  {'':<24} {'consistent':>10}  {'median geodesic to truth':>26}  {'time':>10}")
    print(
        f"  {'least squares':<24} {ok_ls.mean():10.1%}  "
        f"{np.median(d_ls):20.4f} (*)     {t_ls * n * 1e3:7.1f} ms"
    )
    print(f"  {'fit':<24} {ok_fit.mean():10.1%}  {np.median(d_fit):26.4f}  {t_fit * 1e3:7.1f} ms")
    print(
        f"  (*) the {(~ok_ls).sum()} inconsistent least-squares bodies of {n} projected with "
        "nearest_consistent first"
    )
    if (~ok_ls).any():
        bad = ~ok_ls
        print(
            f"  on those {bad.sum()} payloads only: median geodesic least squares (projected) "
            f"{np.median(d_ls[bad]):.4f}, fit {np.median(d_fit[bad]):.4f}"
        )
    print(
        "  where least squares is consistent, fit returns it (its default prior is the "
        "least-squares body)"
    )
    print(
        "  geodesic: distance between pseudo-inertias, 0 is perfect, 0.1 is roughly a 10 % "
        "error in the mass distribution."
    )
    print(
        f"  fit converged on {np.asarray(res.converged).mean():.0%} of payloads, median "
        f"{np.median(np.asarray(res.iterations)):.0f} iterations, median residual / (6 N) "
        f"{np.median(chi2):.3f} (about 1: the model explains the data down to the noise)"
    )


def run(args) -> int:
    """The payload demo (see the module docstring); returns the exit status."""
    message = _bad_options(args)
    if message is not None:
        print(message, file=sys.stderr)
        return 2
    t_start = time.perf_counter()
    import jax

    if not args.float32:
        jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    dtype = jnp.float32 if args.float32 else jnp.float64
    rng = np.random.default_rng(args.seed)
    n = args.bodies
    sigma = args.noise * SIGMA
    print(
        f"spatialjax demo on {jax.devices()[0]} ({jnp.dtype(dtype).name}): {n} payload"
        f"{'s' if n > 1 else ''} on a robot wrist in gravity, {args.samples} readings over "
        f"{DURATION:g} s each;\n  sensor noise (ATI Mini45 class) x {args.noise:g}: "
        f"{sigma[3]:g} N on forces, {sigma[0]:g} N·m on torques (standard deviation per reading)"
    )
    truth, Y, f, w = _simulate(rng, args, sigma, dtype)
    ls, res, t_ls, t_fit = _identify(Y, f, w, args, dtype)
    chi2 = np.asarray(res.residual) / (6 * args.samples)
    show = _print_one if n == 1 else _print_batch
    show(truth, ls, res, t_ls, t_fit, chi2)
    print(f"\n  demo wall time {time.perf_counter() - t_start:.1f} s (fit's compilation included)")
    return 0
