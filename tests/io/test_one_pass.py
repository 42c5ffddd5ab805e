"""One pass through ``identify``: a model file is parsed once into its description.

``spatialjax.io.read_description`` parses the file once; ``Model.from_description``
builds the model from it and the writers edit its bytes through its spans, so
that neither reads the file again (only the written file is read back, once, to
check it). The XML parsers are counted with a wrapper around
``xml.parsers.expat.ParserCreate`` (the readers' parser). The written files are
checked against the identified bodies given (the inputs) and against the
path-based writer's bytes; the logs' joints are matched once.
"""

from __future__ import annotations

import contextlib
import io
import xml.parsers.expat
from pathlib import Path

import jax
import numpy as np
import pytest
from helpers import FIXTURES, raises_argument

import spatialjax.identification as sid
import spatialjax.multibody as mb
from spatialjax import ArgumentError, ArgumentTypeError
from spatialjax.identification import IdentifyError, IdentifyTypeError
from spatialjax.identification.logs import robot_log
from spatialjax.io import ModelDescription, ModelFileError, read_description
from spatialjax.io._common import ModelInertials
from spatialjax.multibody import Model

FIX = FIXTURES
BRANCH = {"urdf": FIX / "branch.urdf", "mjcf": FIX / "branch.xml", "sdf": FIX / "branch.sdf"}


@pytest.fixture
def parsers(monkeypatch):
    """A list that gets one entry per XML parser created while the test runs."""
    created: list[int] = []
    original = xml.parsers.expat.ParserCreate

    def counting(*args, **kwargs):
        created.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(xml.parsers.expat, "ParserCreate", counting)
    return created


def _same_model(a: Model, b: Model) -> None:
    assert a.structure == b.structure
    np.testing.assert_array_equal(np.asarray(a.inertia.params), np.asarray(b.inertia.params))
    np.testing.assert_array_equal(np.asarray(a.placements.E), np.asarray(b.placements.E))
    np.testing.assert_array_equal(np.asarray(a.placements.r), np.asarray(b.placements.r))


@pytest.mark.parametrize("fmt", ["urdf", "mjcf", "sdf"])
def test_one_parse_gives_the_model_with_and_without_locked_joints(fmt, parsers):
    desc = read_description(BRANCH[fmt])
    assert len(parsers) == 1
    assert desc.format == fmt and desc.source == BRANCH[fmt].read_bytes()
    full = Model.from_description(desc, dtype="float64")
    locked = Model.from_description(desc, locked_joints={"j2": 0.3}, dtype="float64")
    assert len(parsers) == 1  # building the models reads nothing
    load = {"urdf": Model.from_urdf, "mjcf": Model.from_mjcf, "sdf": Model.from_sdf}[fmt]
    _same_model(full, load(BRANCH[fmt], dtype="float64"))
    _same_model(locked, load(BRANCH[fmt], locked_joints={"j2": 0.3}, dtype="float64"))
    assert "j2" not in locked.joint_names and "j2" in full.joint_names


def test_read_description_errors():
    with pytest.raises(ModelFileError, match=r"expected a URDF file \(root element <robot>\)"):
        read_description(BRANCH["mjcf"], "urdf")
    with raises_argument(ArgumentError, "model_name"):
        read_description(BRANCH["urdf"], model_name="x")
    with raises_argument(ArgumentError, "fmt"):
        read_description(BRANCH["urdf"], "xml")
    inertials_only = ModelDescription(str(BRANCH["urdf"]), "urdf")  # no tree
    with raises_argument(ArgumentTypeError, "description"):
        Model.from_description(inertials_only)
    with raises_argument(ArgumentTypeError, "description"):
        Model.from_description(str(BRANCH["urdf"]))
    model = Model.from_urdf(BRANCH["urdf"], dtype="float64")
    with raises_argument(IdentifyTypeError, "source"):
        sid.write_identified_model(inertials_only, model, model.inertia, "never.urdf")


def _identified(model: Model) -> np.ndarray:
    """Bodies that differ from the file's: mass ×1.3, first moment shifted, inertia ×1.2."""
    P = np.array(model.inertia.params, dtype=np.float64)
    P[:, 0] *= 1.3
    P[:, 1:4] = P[:, 1:4] * 1.3 + 0.01 * P[:, :1]
    P[:, 4:] *= 1.2
    return P


@pytest.mark.parametrize("fmt", ["urdf", "mjcf"])
def test_writer_edits_the_description_without_reading_the_source(fmt, tmp_path, parsers):
    desc = read_description(BRANCH[fmt])
    model = Model.from_description(desc, locked_joints={"j4": 0.2}, dtype="float64")
    P = _identified(model)
    jp = {"damping": np.full(len(model.joint_names), 0.25)}
    del parsers[:]
    out = tmp_path / f"fitted.{'urdf' if fmt == 'urdf' else 'xml'}"
    rep = sid.write_identified_model(desc, model, P, out, joint_params=jp)
    assert len(parsers) == 1  # the output, read back once; the source is not read again
    assert rep["format"] == fmt and rep["source"] == str(BRANCH[fmt])
    assert rep["max_reload_error"] < 1e-12 and rep["max_joint_error"] < 1e-15
    # the file's own reader gives the identified bodies and damping back (the inputs)
    back = Model.from_description(read_description(out), locked_joints={"j4": 0.2},
                                  dtype="float64")  # fmt: skip
    np.testing.assert_allclose(np.asarray(back.inertia.params), P, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(np.asarray(back.damping), 0.25, rtol=0, atol=0)
    # the same bytes as the writer given the path (which reads the source once)
    del parsers[:]
    again = tmp_path / f"again.{out.suffix}"
    sid.write_identified_model(BRANCH[fmt], model, P, again, joint_params=jp)
    assert len(parsers) == 2
    assert again.read_bytes() == out.read_bytes()


def test_writer_keeps_every_other_byte(tmp_path):
    desc = read_description(BRANCH["urdf"])
    model = Model.from_description(desc, dtype="float64")
    out = tmp_path / "same.urdf"
    rep = sid.write_identified_urdf(desc, model, np.asarray(model.inertia.params), out)
    assert out.read_bytes() == desc.source  # nothing moved: nothing rewritten
    assert [b["mode"] for b in rep["bodies"]] == ["single", "remainder", "single", "single"]


def test_writer_refuses_another_format_and_checks_the_model(tmp_path):
    urdf, mjcf = read_description(BRANCH["urdf"]), read_description(BRANCH["mjcf"])
    model = Model.from_description(urdf, dtype="float64")
    P = np.asarray(model.inertia.params)
    with raises_argument(IdentifyError, "source"):
        sid.write_identified_urdf(mjcf, model, P, tmp_path / "a.urdf")
    with raises_argument(IdentifyError, "source"):
        sid.write_identified_mjcf(urdf, model, P, tmp_path / "a.xml")
    with raises_argument(IdentifyError, "source"):
        sid.write_identified_model(read_description(BRANCH["sdf"]), model, P, tmp_path / "a.sdf")
    with raises_argument(IdentifyError, "model"):
        sid.write_identified_mjcf(mjcf, model, P, tmp_path / "a.xml")
    with raises_argument(IdentifyError, "out_path"):
        sid.write_identified_urdf(urdf, model, P, BRANCH["urdf"], overwrite=True)
    assert not list(tmp_path.iterdir())


def test_read_model_keeps_its_inertials_only_form(parsers):
    from spatialjax.io import read_model

    inertials = read_model(BRANCH["urdf"])
    assert isinstance(inertials, ModelInertials) and len(parsers) == 1


# ------------------------------------------------------------------ joints matched once
def _toy_log(model: Model, names, seconds=1.0):
    t = np.arange(0.0, seconds, 1e-3)
    n = len(names)
    q = 0.1 * np.sin(2 * np.pi * np.outer(t, 1.0 + np.arange(n)))
    return sid.RobotLog(t=t, q=q, tau=np.cos(q), joint_names=tuple(names))


def test_sampling_stage_takes_a_matched_log_as_it_is(monkeypatch):
    from spatialjax.identification.pipeline.options import IdentifyOptions, resolve
    from spatialjax.identification.pipeline.sampling import sampling_stage

    model = Model.from_urdf(BRANCH["urdf"], dtype="float64")
    matched = _toy_log(model, model.joint_names)
    opts = resolve(
        model, matched, IdentifyOptions(lowpass=None, decimate=1, holdout=0.0,
                                        sample_weighting="independent", ignore_limits=True)
    )  # fmt: skip
    calls = []
    original = robot_log.match_joints

    def counting(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(robot_log, "match_joints", counting)
    out = sampling_stage(model, matched, (), opts)
    assert not calls and out.raw[0] is matched  # matched once, by whoever made it
    shuffled = _toy_log(model, model.joint_names[::-1])  # another order: matched here
    out = sampling_stage(model, shuffled, (), opts)
    assert len(calls) == 1 and out.raw[0].joint_names == model.joint_names
    np.testing.assert_array_equal(out.raw[0].q, shuffled.q[:, ::-1])


# ---------------------------------------------------------------- one identify --out run
def _branch_log(tmp_path: Path) -> Path:
    from spatialjax._util import x64

    with x64():
        model = mb.Model.from_urdf(BRANCH["urdf"], dtype="float64")
        k1, k2 = jax.random.split(jax.random.PRNGKey(3))
        t, q, dq, ddq = sid.excitation_trajectory(model.nv, duration=3.0, rate=400.0, key=k1,
                                                  amplitude=0.3)  # fmt: skip
        log = sid.simulate_log(model, t, q, dq, ddq, key=k2, torque_noise=0.01)
    path = tmp_path / "branch.npz"
    log.save(path)
    return path


@pytest.mark.slow
@pytest.mark.parametrize("fmt, out", [("urdf", "fitted.urdf"), ("mjcf", "fitted.xml"),
                                      ("sdf", None)])  # fmt: skip
def test_identify_parses_the_model_once(fmt, out, tmp_path, parsers, monkeypatch):
    from spatialjax._cli.identify import main

    monkeypatch.setenv("SPATIALJAX_NO_COMPILATION_CACHE", "1")
    log = _branch_log(tmp_path)
    matches = []
    original = robot_log.match_joints

    def counting(*args, **kwargs):
        matches.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(robot_log, "match_joints", counting)
    monkeypatch.setattr(sid, "match_joints", counting)
    argv = [BRANCH[fmt], log, "--lock", "j4=0.1", "--joint-model", "none", "--holdout", "0",
            "--lowpass", "40", "--decimate", "2", "--ignore-limits", "--no-cache"]  # fmt: skip
    if out is not None:
        argv += ["--out", tmp_path / out]
    del parsers[:]
    with contextlib.redirect_stdout(io.StringIO()):
        status = main([str(a) for a in argv])
    assert status == 0
    # the model once (and the written file once, read back to check it)
    assert len(parsers) == (2 if out is not None else 1)
    assert len(matches) == 1  # the command line's match; the sampling stage takes its log
    if out is not None:
        back = Model.from_description(read_description(tmp_path / out),
                                      locked_joints={"j4": 0.1})  # fmt: skip
        assert (
            back.joint_names
            == Model.from_description(
                read_description(BRANCH[fmt]), locked_joints={"j4": 0.1}
            ).joint_names
        )


def test_the_command_builds_an_mjcf_free_joint_model_for_a_floating_log():
    """An MJCF's free joint is the floating base: the command builds it from the description
    (``Model.from_mjcf`` has no ``floating_base``)."""
    from spatialjax._cli.identify import _load_model
    from spatialjax._util import x64

    desc = read_description(FIX / "walker.xml")
    with x64():
        model = _load_model(desc, None, True)
        locked = _load_model(desc, {"knee": 0.2}, True)
    assert model.joint_types == ("free_flyer", "revolute", "revolute") and model.floating_base
    assert model.joint_names == ("<joint 0>", "hip", "knee")
    assert locked.joint_names == ("<joint 0>", "hip") and locked.floating_base
