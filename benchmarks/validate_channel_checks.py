"""Torque-channel checks on correct and broken logs: false alarms before and after issue 32.

Issue 32 ("torque channels without false alarms"): on correct logs, the scale check judged a
ratio of two noise-sized numbers where the URDF puts a link's centre of mass on its joint axis
(the prior predicts almost no torque there), and an unfiltered log's noisy accelerations read as
wrong units. The check now judges scale and sign only where the data can
(``spatialjax/identification/_channels.py``), and names swapped columns.

Per robot (example-robot-data's Panda, UR10, UR5, TIAGo's torso and arm, xArm7, Unitree Z1) and
seed, a log simulated by Pinocchio (``tests/helpers.py: pinocchio_log``: ``pin.rnea`` of links
20-30 % off the URDF, viscous and Coulomb friction 1-3 % of the effort limit, torque noise 0.5 %
of it, 20-bit encoders, no velocity column, 20 s of a 5-harmonic 0.1 Hz Fourier trajectory at
the robot's rate) goes through ``identify_robot`` up to its torque stage (``progress`` stops it:
nothing is fitted), filtered (``lowpass=10``, decimated to about 100 Hz) and raw (``lowpass=None``,
``q`` differentiated twice). Counted per run: the channels the *old* rule flagged (the forward
slope ``k`` alone: ``k ≤ 0``, ``k > 3`` or ``k < 1/3``; the same ``k``, so the same warnings
the released code printed), the new verdicts, the warnings. Broken logs (two columns swapped;
one channel × 0.01 and another × −1) of three robots check that real faults are still named.
The TIAGo hardware log of ``tests/fixtures/tiago`` (100 Hz) is checked with ``lowpass=5`` (the
README's command) and raw.

Usage::

    nice -n 5 python benchmarks/validate_channel_checks.py              # ~10 min on 2 busy cores
    python benchmarks/validate_channel_checks.py --robots ur10 --seeds 1
    python benchmarks/validate_channel_checks.py --robots panda,ur10 --seeds 1 \
        --encoder-bits 16 --name channel_checks_16bit_cpu     # noise-dominated raw predictions
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import sys
import time
from pathlib import Path

import jax

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402
from _harness.report import write_json_and_text  # noqa: E402

import spatialjax.identification.pipeline as pipeline  # noqa: E402
import spatialjax.multibody as mb  # noqa: E402
from spatialjax import identification as sid  # noqa: E402
from spatialjax.identification.output.report import jsonable  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the simulator the tests use
from helpers import pinocchio_log, robots_dir  # noqa: E402

ROBOTS = {
    # name: (URDF under example-robot-data's robots folder, locked joints, rate in Hz)
    "panda": ("panda_description/urdf/panda.urdf",
              ("panda_finger_joint1", "panda_finger_joint2"), 1000.0),
    "ur10": ("ur_description/urdf/ur10_robot.urdf", (), 500.0),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", (), 500.0),
    "tiago": ("tiago_description/robots/tiago_no_hand.urdf",
              ("head_1_joint", "head_2_joint", "wheel_left_joint", "wheel_right_joint"), 200.0),
    "xarm7": ("xarm_description/urdf/xarm7.urdf", (), 1000.0),
    "z1": ("z1_description/urdf/z1.urdf", ("jointGripper",), 500.0),
}  # fmt: skip
#: broken logs: (robot, swapped pair, channel × 0.01, channel × −1)
BROKEN = (
    ("ur10", ("elbow_joint", "wrist_1_joint"), "shoulder_lift_joint", "elbow_joint"),
    ("panda", ("panda_joint2", "panda_joint4"), "panda_joint6", "panda_joint2"),
    ("xarm7", ("joint3", "joint6"), "joint2", "joint3"),
)
TIAGO = ROOT / "tests" / "fixtures" / "tiago"
TIAGO_LOCK = ("head_1_joint", "head_2_joint", "wheel_left_joint", "wheel_right_joint")


class _Stop(Exception):
    pass


def torque_stage(model, log, **kw):
    """``(checks, text, lines)`` of ``identify_robot``'s torque stage; nothing is fitted."""
    got = {}
    real = pipeline.check_channels

    def spy(*a, **k):
        got["checks"] = real(*a, **k)
        return got["checks"]

    def progress(stage, text, lines):
        if stage == "torques":
            got["text"], got["lines"] = text, list(lines)
            raise _Stop

    pipeline.check_channels = spy
    try:
        sid.identify_robot(model, log, progress=progress, **kw)
    except _Stop:
        pass
    finally:
        pipeline.check_channels = real
    return got["checks"], got["text"], got["lines"]


def old_flag(c) -> bool:
    """The released rule: the forward slope alone, ``k ≤ 0`` or more than 3× off."""
    k = c.scale
    return bool(np.isfinite(k) and (k <= 0 or k > 3 or k < 1 / 3)) and not c.excluded


def record(label, checks, text, lines) -> dict:
    return {
        "run": label,
        "stage": text,
        "old_flagged": [c.joint for c in checks if old_flag(c)],
        "new_flagged": [c.joint for c in checks if c.scale_flagged and not c.excluded],
        "swapped": [c.joint for c in checks if c.swapped_with is not None],
        "not_judged": [c.joint for c in checks if not c.judged and not c.excluded],
        "warnings": [ln for ln in lines if ln.startswith("warning: ")],
        "channels": [c.to_dict() for c in checks],
    }


def settings(rate):
    return (("filtered", {"lowpass": 10.0, "decimate": max(1, int(rate // 100))}),
            ("raw", {"lowpass": None}))  # fmt: skip


def load(robot):
    urdf, locked, rate = ROBOTS[robot]
    path = str(robots_dir() / urdf)
    model = mb.Model.from_urdf(path, locked_joints=dict.fromkeys(locked, 0.0) or None,
                               dtype="float64")  # fmt: skip
    return path, locked, rate, model


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--robots", default=",".join(ROBOTS), help=f"comma list of {list(ROBOTS)}")
    ap.add_argument("--seeds", type=int, default=3, help="seeds per robot (default 3)")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    ap.add_argument("--name", default=None, help="file stem (default channel_checks_<platform>)")
    ap.add_argument("--encoder-bits", type=int, default=20, help="encoder resolution (20 bits)")
    args = ap.parse_args(argv)
    robots = [r.strip() for r in args.robots.split(",") if r.strip()]
    if not robots or any(r not in ROBOTS for r in robots):
        ap.error(f"--robots: expected names from {list(ROBOTS)}, got {args.robots!r}")
    if robots_dir() is None:
        ap.error("example-robot-data is not installed")
    dev = jax.devices()[0]
    stem = args.name or f"channel_checks_{dev.platform}"
    lines: list[str] = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    t_all = time.perf_counter()
    say(f"device: {dev} ({dev.platform}); jax {jax.__version__}; {platform.machine()}, "
        f"{os.cpu_count()} CPUs (shared); load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    say(f"{args.seeds} seed(s); {args.encoder_bits}-bit encoders")
    runs = []
    say("\ncorrect logs: channels flagged by the old rule -> by the new one (not judged)")
    for robot in robots:
        path, locked, rate, model = load(robot)
        for seed in range(args.seeds):
            t, q, tau, names = pinocchio_log(path, locked, seed=seed, rate=rate,
                                             encoder_bits=args.encoder_bits)  # fmt: skip
            log = sid.RobotLog(t=t, q=q, tau=tau, joint_names=names)
            for fl, kw in settings(rate):
                r = record(f"{robot} seed {seed} {fl}", *torque_stage(model, log, **kw))
                runs.append(r)
                say(f"  {r['run']:24s} old {r['old_flagged'] or '-'} -> new "
                    f"{r['new_flagged'] or '-'}; not judged {r['not_judged'] or '-'}; "
                    f"{len(r['warnings'])} warning(s)")  # fmt: skip
                for w in r["warnings"]:
                    say(f"      {w[:160]}")
    say("\nbroken logs: swapped columns; one channel x 0.01 and another x -1")
    broken = []
    for robot, (a, b), small, flip in BROKEN:
        if robot not in robots:
            continue
        path, locked, rate, model = load(robot)
        t, q, tau, names = pinocchio_log(path, locked, seed=2, rate=rate,
                                         encoder_bits=args.encoder_bits)  # fmt: skip
        log = sid.RobotLog(t=t, q=q, tau=tau, joint_names=names)
        ia, ib = names.index(a), names.index(b)
        sw = log.tau.copy()
        sw[:, [ia, ib]] = sw[:, [ib, ia]]
        un = log.tau.copy()
        un[:, names.index(small)] *= 0.01
        un[:, names.index(flip)] *= -1.0
        for what, lg in (("swap", sw), ("units", un)):
            bad = dataclasses.replace(log, tau=lg)
            for fl, kw in settings(rate):
                r = record(f"{robot} {what} {fl}", *torque_stage(model, bad, **kw))
                r["expected"] = sorted((a, b)) if what == "swap" else sorted((small, flip))
                got = r["swapped"] if what == "swap" else r["new_flagged"]
                r["found"] = sorted(got) == r["expected"]
                broken.append(r)
                say(f"  {r['run']:24s} expected {r['expected']}: "
                    f"{'found' if r['found'] else 'MISSED'}; old rule flagged "
                    f"{r['old_flagged'] or '-'}")  # fmt: skip
                for w in r["warnings"]:
                    say(f"      {w[:160]}")
    say("\nTIAGo hardware log (tests/fixtures/tiago)")
    model = mb.Model.from_urdf(
        TIAGO / "tiago_no_hand.urdf", locked_joints=dict.fromkeys(TIAGO_LOCK, 0.0), dtype="float64"
    )
    log = sid.load_log(TIAGO / "tiago_log.npz")
    tiago = []
    for fl, kw in (("lowpass 5", {"lowpass": 5.0}), ("raw", {"lowpass": None})):
        r = record(f"tiago log {fl}", *torque_stage(model, log, **kw))
        tiago.append(r)
        say(f"  {r['run']:24s} old {r['old_flagged']} -> new {r['new_flagged']}")
        for w in r["warnings"]:
            say(f"      {w[:160]}")
    n_old = sum(len(r["old_flagged"]) for r in runs)
    n_new = sum(len(r["new_flagged"]) + len(r["swapped"]) for r in runs)
    n_ch = sum(len(r["channels"]) for r in runs)
    say(f"\ncorrect logs: {len(runs)} runs, {n_ch} channels; false scale/sign flags: old rule "
        f"{n_old}, new {n_new}; broken logs named: "
        f"{sum(r['found'] for r in broken)} of {len(broken)}; "
        f"{time.perf_counter() - t_all:.0f} s")  # fmt: skip
    payload = {"device": str(dev), "runs": runs, "broken": broken, "tiago": tiago,
               "seeds": args.seeds, "robots": robots,
               "encoder_bits": args.encoder_bits}  # fmt: skip
    write_json_and_text(args.out, stem, jsonable(payload), lines)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
