"""Every URDF of example-robot-data that Pinocchio loads, fixed and floating base.

For each file both libraries load (Pinocchio's ``buildModelFromUrdf``, with a
``JointModelFreeFlyer`` root for the floating case, and :meth:`Model.from_urdf`),
one random state is compared: the mass matrix against ``crba``, the inverse
dynamics against ``rnea``, the forward dynamics (ABA) against ``aba`` (the URDF's
passive damping, which Pinocchio reads but does not apply, subtracted from ``τ``)
and the last body's frame Jacobian in the three references against
``getFrameJacobian``. Files Pinocchio rejects are not ours to check; files
:meth:`Model.from_urdf` rejects must be refused with a :class:`ModelFileError`
naming an unsupported feature, never any other exception. Slow: one compile per
robot.
"""

from __future__ import annotations

import glob
import warnings

import jax
import numpy as np
import pytest
from helpers import random_states, rel_error, robots_dir, swap_pin_rows

import spatialjax.multibody as mb
from spatialjax.io import ModelFileError

pin = pytest.importorskip("pinocchio")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(robots_dir() is None, reason="example-robot-data is not installed"),
]

REFS = {"world": "WORLD", "local": "LOCAL", "local_world_aligned": "LOCAL_WORLD_ALIGNED"}


@jax.jit
def _everything(model, q, v, tau):
    frame = model.body_names[-1]
    return (
        mb.mass_matrix(model, q),
        mb.rnea(model, q, v, tau),
        mb.forward_dynamics(model, q, v, tau),
        {r: mb.frame_jacobian(model, q, frame, r) for r in REFS},
        model.q_to_pinocchio(q),
    )


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
def test_every_example_robot_data_urdf_matches_pinocchio(floating):
    files = sorted(glob.glob(str(robots_dir() / "**" / "*.urdf"), recursive=True))
    assert len(files) > 20
    compared, refused, worst = [], [], {}
    rng = np.random.default_rng(11)
    for path in files:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pm = (
                    pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
                    if floating
                    else pin.buildModelFromUrdf(path)
                )
        except (RuntimeError, ValueError):
            continue  # urdfdom rejects the file
        if pm.nv == 0:
            continue
        try:
            model = mb.Model.from_urdf(path, floating_base=floating, dtype="float64")
        except ModelFileError as e:
            refused.append((path, str(e)))
            continue
        assert model.nv == pm.nv, path
        q, v, tau = (np.asarray(x[0]) for x in random_states(model, 1, rng))
        H, t, a, J, qp = (jax.tree.map(np.asarray, x) for x in _everything(model, q, v, 10 * tau))
        perm = model.v_permutation()
        pd = pm.createData()
        vp, tp = v[perm], 10 * tau[perm]
        M = pin.crba(pm, pd, qp).copy()
        M = np.triu(M) + np.triu(M, 1).T
        tol = {}
        errs = {
            "mass_matrix": rel_error(H[np.ix_(perm, perm)], M),
            "rnea": rel_error(t[perm], pin.rnea(pm, pd, qp, vp, tp)),
        }
        # ABA's round-off grows with the mass matrix's condition number (tiny finger
        # links reach 1e8); a singular one (massless leaves) is flagged NaN by ours
        cond = np.linalg.cond(M)
        if cond < 1e10:
            ref = pin.aba(pm, pd, qp, vp, tp - pm.damping * vp)
            errs["aba"] = rel_error(a[perm], ref)
            tol["aba"] = max(1e-10, 1e-14 * cond)
        pin.computeJointJacobians(pm, pd, qp)
        pin.updateFramePlacements(pm, pd)
        fid = pm.getFrameId(model.body_names[-1])
        for ours, theirs in REFS.items():
            Jp = pin.getFrameJacobian(pm, pd, fid, getattr(pin.ReferenceFrame, theirs))
            errs[f"jacobian {ours}"] = rel_error(J[ours][:, perm], swap_pin_rows(Jp))
        for k, e in errs.items():
            worst[k] = max(worst.get(k, 0.0), e)
            assert e <= tol.get(k, 1e-10), (path, k, e)
        compared.append(path)
    print(f"{len(compared)} robots compared, {len(refused)} refused; worst: {worst}")
    for path, msg in refused:
        print(f"refused {path}: {msg}")
        assert "unsupported" in msg or "not supported" in msg, (path, msg)
    assert len(compared) >= 20
