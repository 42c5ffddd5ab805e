"""``write_identified_urdf``: identified composite bodies written back into a URDF.

The reference for every written file is Pinocchio: ``buildModelFromUrdf`` on
the output, reduced with ``buildReducedModel`` at the same locked joint
values, must give the identified bodies (built here from Pinocchio's own
reduced model of the input plus known consistent bodies); spatialjax's
``Model.from_urdf`` must agree too. Outside the ``<inertial>`` elements the
output is byte-identical to the input.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers import FIXTURES, raises_argument, random_inertia_params
from helpers import robots_dir as _robots_dir

import spatialjax.multibody as mb
from spatialjax.identification import IdentifyError, IdentifyTypeError
from spatialjax.identification.output.model_writer import write_identified_urdf

pin = pytest.importorskip("pinocchio")

FIX = FIXTURES
ROBOTS = _robots_dir()
needs_robots = pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
PANDA_LOCKED = {"panda_finger_joint1": 0.01, "panda_finger_joint2": 0.03}
TOY_LOCKED = {"j3": 0.3}
INERTIAL = re.compile(rb"[ \t]*<inertial>.*?</inertial>[ \t]*\n?", re.S)


def _panda():
    return str(ROBOTS / "panda_description/urdf/panda.urdf")


def _pin_params(path, locked):
    """Bodies of Pinocchio's reduced model (joint i+1 = spatialjax body i), ``(nb, 10)``."""
    pm = pin.buildModelFromUrdf(str(path))
    q0 = pin.neutral(pm)
    for name, value in locked.items():
        q0[pm.idx_qs[pm.getJointId(name)]] = value
    pm = pin.buildReducedModel(pm, [pm.getJointId(n) for n in locked], q0)
    return np.array([pm.inertias[i].toDynamicParameters() for i in range(1, pm.njoints)])


def _without_inertials(data: bytes) -> bytes:
    return INERTIAL.sub(b"", data)


def _check_reload(out, locked, expected, atol=1e-12):
    np.testing.assert_allclose(_pin_params(out, locked), expected, rtol=0, atol=atol)
    back = mb.Model.from_urdf(out, locked_joints=locked, dtype="float64")
    np.testing.assert_allclose(np.asarray(back.inertia.params), expected, rtol=0, atol=atol)


@needs_robots
def test_panda_remainder_keeps_the_hand(tmp_path):
    path = _panda()
    prior = _pin_params(path, PANDA_LOCKED)
    delta = 0.1 * random_inertia_params(np.random.default_rng(0), prior.shape[0])
    ident = prior + delta  # a sum of consistent bodies is consistent
    model = mb.Model.from_urdf(path, locked_joints=PANDA_LOCKED, dtype="float64")
    out = tmp_path / "fitted.urdf"
    rep = write_identified_urdf(path, model, ident, out)
    _check_reload(out, PANDA_LOCKED, ident)
    assert rep["max_reload_error"] < 1e-13
    modes = [b["mode"] for b in rep["bodies"]]
    assert modes == ["single"] * 6 + ["remainder"]
    last = rep["bodies"][-1]
    assert last["link"] == "panda_link7" and last["remainder_consistent"] is True
    assert {"panda_hand", "panda_leftfinger", "panda_rightfinger"} <= set(last["links_kept"])
    assert rep["untouched"] == ["panda_link0"]
    src, new = Path(path).read_bytes(), out.read_bytes()
    assert _without_inertials(new) == _without_inertials(src)
    # the hand's and fingers' inertials are byte-identical; link0 (world-fixed) too
    blocks_src, blocks_new = INERTIAL.findall(src), INERTIAL.findall(new)
    assert len(blocks_src) == len(blocks_new) == 13
    unchanged = [a == b for a, b in zip(blocks_src, blocks_new, strict=True)]
    assert unchanged == [True] + [False] * 7 + [True] * 5


@needs_robots
def test_panda_light_link7_takes_the_whole_composite(tmp_path):
    path = _panda()
    prior = _pin_params(path, PANDA_LOCKED)
    ident = prior.copy()
    # link7 as one 0.4 kg body: less than the hand (0.73 kg) alone, so no remainder exists
    ident[6] = 0.4 * random_inertia_params(np.random.default_rng(1), 1)[0] / 1.0
    ident[6] *= 0.4 / ident[6, 0]
    model = mb.Model.from_urdf(path, locked_joints=PANDA_LOCKED, dtype="float64")
    out = tmp_path / "fitted.urdf"
    rep = write_identified_urdf(path, model, ident, out)
    _check_reload(out, PANDA_LOCKED, ident)
    last = rep["bodies"][-1]
    assert last["mode"] == "composite" and last["remainder_consistent"] is False
    assert last["remainder_margins"]["mass"] < 0
    assert set(last["links_cleared"]) == {"panda_hand", "panda_leftfinger", "panda_rightfinger"}
    assert "removed" in last["note"]
    text = out.read_text()
    for name in ("panda_hand", "panda_leftfinger", "panda_rightfinger"):
        body = re.search(rf'<link name="{name}">(.*?)</link>', text, re.S).group(1)
        assert "<inertial>" not in body
    assert _without_inertials(out.read_bytes()) == _without_inertials(Path(path).read_bytes())


@needs_robots
def test_writing_the_prior_back_changes_no_byte(tmp_path):
    path = _panda()
    model = mb.Model.from_urdf(path, locked_joints=PANDA_LOCKED, dtype="float64")
    out = tmp_path / "same.urdf"
    write_identified_urdf(path, model, model.inertia, out)
    assert out.read_bytes() == Path(path).read_bytes()


def test_toy_composite_remainder_and_missing_inertials(tmp_path):
    path = FIX / "toy_attached.urdf"
    prior = _pin_params(path, TOY_LOCKED)  # bodies a, b (+c, +e locked), f
    assert prior.shape == (3, 10) and prior[2, 0] == 0.0  # f has no inertial
    rng = np.random.default_rng(2)
    extra = random_inertia_params(rng, 3)
    ident = np.empty_like(prior)
    ident[0] = extra[0] * (1.5 / extra[0, 0])  # 1.5 kg < the 2 kg tool: composite
    ident[1] = prior[1] + 0.3 * extra[1]  # b's own body = 0.3 * extra: remainder
    ident[2] = 0.2 * extra[2]  # f: single, inserted
    model = mb.Model.from_urdf(path, locked_joints=TOY_LOCKED, dtype="float64")
    out = tmp_path / "toy_fitted.urdf"
    rep = write_identified_urdf(path, model, ident, out)
    _check_reload(out, TOY_LOCKED, ident)
    a, b, f = rep["bodies"]
    assert (a["link"], a["mode"], a["links_cleared"]) == ("a", "composite", ["tool"])
    assert (b["link"], b["mode"], b["links_kept"]) == ("b", "remainder", ["c", "e"])
    assert (f["link"], f["mode"]) == ("f", "single")
    assert rep["untouched"] == ["base"]
    text = out.read_text()
    assert re.search(r'<link name="tool">\s*</link>', text)  # its inertial removed
    # b: the remainder (0.3 * extra[1]) was inserted; its mass is written exactly
    b_el = re.search(r'<link name="b">(.*?)</link>', text, re.S).group(1)
    m_b = float(re.search(r'<mass value="([^"]+)"', b_el).group(1))
    assert m_b == pytest.approx(0.3 * extra[1, 0], rel=1e-12)
    src = path.read_bytes().replace(b'<link name="b"/>', b'<link name="b"></link>')
    assert _without_inertials(out.read_bytes()) == _without_inertials(src)


def test_refuses_to_overwrite_and_never_the_input(tmp_path):
    src = tmp_path / "toy.urdf"
    shutil.copy(FIX / "toy_attached.urdf", src)
    model = mb.Model.from_urdf(src, locked_joints=TOY_LOCKED, dtype="float64")
    ident = np.asarray(model.inertia.params).copy()
    ident[2] = random_inertia_params(np.random.default_rng(3), 1)[0]
    out = tmp_path / "out.urdf"
    out.write_text("keep me")
    with pytest.raises(FileExistsError, match="exists; pass overwrite=True"):
        write_identified_urdf(src, model, ident, out)
    assert out.read_text() == "keep me"
    write_identified_urdf(src, model, ident, out, overwrite=True)
    _check_reload(out, TOY_LOCKED, ident)
    before = src.read_bytes()
    for ow in (False, True):
        with raises_argument(IdentifyError, "out_path"):
            write_identified_urdf(src, model, ident, src, overwrite=ow)
    assert src.read_bytes() == before


def test_bad_arguments(tmp_path):
    src = FIX / "toy_attached.urdf"
    model = mb.Model.from_urdf(src, locked_joints=TOY_LOCKED, dtype="float64")
    good = np.asarray(model.inertia.params).copy()
    good[2] = random_inertia_params(np.random.default_rng(4), 1)[0]
    out = tmp_path / "o.urdf"
    with raises_argument(IdentifyError, "inertia"):
        write_identified_urdf(src, model, good[:2], out)
    nan = good.copy()
    nan[1, 4] = np.nan
    with raises_argument(IdentifyError, "inertia"):
        write_identified_urdf(src, model, nan, out)
    with raises_argument(IdentifyError, "inertia"):
        write_identified_urdf(src, model, np.asarray(model.inertia.params), out)
    other = FIX / "arm.urdf"
    with raises_argument(IdentifyError, "model"):
        write_identified_urdf(other, model, good, out)
    with raises_argument(IdentifyError, "source"):
        write_identified_urdf(FIX / "branch.xml", model, good, out)
    # the parameters passed where the model goes (regression: AttributeError 'frame_names')
    with raises_argument(IdentifyTypeError, "model"):
        write_identified_urdf(src, good, good, out)
    assert not out.exists()
