"""The solvers' programs prepared ahead: a fixed base's fit, least squares and identifiability
compile while the regressor stage runs.

After the filter stage the shapes of the training data are known before their values:
``Filtered.training_rows`` samples, the model's joints and free bodies, every joint-model
column. ``prepare_ahead`` compiles (or loads) the three programs for those shapes in
background threads (``cpu_program.prepare``) while the regressor stage computes and
filters the regressor (NumPy): a cold ``identify`` then waits for the fit's compile,
started before the data it fits exist. Training data that turn out otherwise (a channel or
a column left out) miss these programs; the stages' own preparations compile theirs, as
without this.
"""

from __future__ import annotations

import numpy as np

from .consistent_fit import prepare_fit
from .filtering import Filtered
from .least_squares import TrainingData
from .options import IdentifyError, Options
from .prior import Prior
from .validation import prepare_identifiability_stage


def expected_training_data(model, filtered: Filtered, prior: Prior, opts: Options) -> TrainingData:
    """Zeros of the shapes a fixed base's training data will have when every channel and
    joint-model column is kept (``training_data``; its positions too, as the regressor
    stage gives them)."""
    N, nv, ne = filtered.training_rows(), model.nv, opts.joint_model.n_columns(model)
    n = 10 * int(np.count_nonzero(prior.free_mask))
    return TrainingData(
        Y=np.zeros((N, nv, n)), F=np.zeros((N, nv, ne)), tau=np.zeros((N, nv)),
        used=np.ones(nv, bool), friction_kept=np.ones(ne, bool), q=np.zeros((N, model.nq)),
    )  # fmt: skip


def prepare_ahead(model, filtered: Filtered, prior: Prior, opts: Options) -> None:
    """Start compiling a fixed base's fit, least squares and identifiability programs, in
    that order, for ``expected_training_data`` (module docstring)."""
    from ..fitting.robot_fit import prepare_least_squares_torques

    data = expected_training_data(model, filtered, prior, opts)
    try:
        prepare_fit(model, data, prior, opts)
    except IdentifyError:  # too few samples: the fit stage says so
        return
    ne = data.F.shape[-1]
    prepare_least_squares_torques(
        data.Y, data.tau, extra=data.F if ne else None, weights=np.ones(data.tau.shape)
    )
    prepare_identifiability_stage(model, data, prior, opts)
