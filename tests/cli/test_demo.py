"""``spatialjax demo`` (whole robot): its output names the pieces and its numbers are plausible."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import robots_dir

from spatialjax import _cli as cli
from spatialjax import _util
from spatialjax import multibody as mb
from spatialjax._cli import demo_robot as demo

ROBOTS = robots_dir()


@pytest.mark.skipif(ROBOTS is None, reason="example-robot-data is not installed")
def test_fallback_chain_is_the_panda_without_its_hand():
    # the URDF loader (an independent parse of panda.urdf) gives the same joint frames and, for
    # links 1-6, the same inertias; link 7 differs by the merged hand
    urdf = mb.Model.from_urdf(
        str(ROBOTS / "panda_description/urdf/panda.urdf"),
        locked_joints={"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0},
    )
    chain = demo.panda_like_chain(jnp.float64)
    assert chain.parents == urdf.parents and chain.nv == 7
    np.testing.assert_allclose(chain.placements.E, urdf.placements.E, atol=1e-15)
    np.testing.assert_allclose(chain.placements.r, urdf.placements.r, atol=1e-15)
    np.testing.assert_allclose(chain.axes, urdf.axes, atol=0)
    # NumPy copies before slicing (each slice of a device array compiles a program)
    p_chain, p_urdf = np.asarray(chain.inertia.params), np.asarray(urdf.inertia.params)
    np.testing.assert_allclose(p_chain[:6], p_urdf[:6], rtol=1e-12, atol=1e-15)
    hand = float(p_urdf[6, 0] - p_chain[6, 0])  # the masses (column 0 of the 10-vector)
    np.testing.assert_allclose(hand, 0.73 + 2 * 0.015, rtol=1e-12)  # hand + two fingers


def test_panda_model_falls_back_without_example_robot_data(monkeypatch):
    import importlib.metadata

    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    model, source = demo.panda_model(jnp.float64)
    assert model.name == "panda_like_chain" and "example-robot-data is not installed" in source


def _percent(out, label):
    m = re.search(rf"^\s+{re.escape(label)}\s+([0-9.]+) %", out, re.M)
    assert m, f"no held-out error line for {label!r}"
    return float(m.group(1))


@pytest.mark.slow  # the whole demo: simulates, compiles and runs the robot fit
def test_robot_demo_tells_the_story(capsys):
    parser = cli.build_parser()
    args = parser.parse_args(["demo", "--no-cache", "--seed", "3"])
    assert args.payload is False
    assert cli.main(["demo", "--no-cache", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    for piece in (
        "Panda",
        "Gaz et al., IEEE RA-L 2019",
        "Swevers et al. 1997",
        "Held-out torque error",
        "Physically impossible links from least squares",
        "Link masses (kg): truth, URDF prior, least squares, fit",
        "total time",
    ):
        assert piece in out, piece
    prior, ls, fit = (_percent(out, k) for k in ("URDF prior", "least squares", "fit"))
    # fit is constrained and regularised, least squares is the unconstrained optimum of the
    # training error: on held-out data from the same well-excited trajectory they agree to within
    # the noise, so "fit <= least squares" holds to a few per cent, not exactly
    assert fit <= 1.03 * ls
    assert ls < prior and fit < prior
    m = re.search(r"fit: (\d+) of (\d+) links fully physically consistent", out)
    assert m and m.group(1) == m.group(2) == "7"
    m = re.search(r"impossible links from least squares: (\d+) of 7", out)
    assert m and int(m.group(1)) >= 1
    assert re.search(r"negative|essentially zero|triangle inequality", out)
    # the mass table: one row per link, truth and fit within a factor 1.5 for every link
    num = r"\s+([-0-9.]+)"
    rows = re.findall(r"^\s+(panda_link\d)" + 4 * num, out, re.M)
    assert len(rows) == 7
    for _, truth, _, _, fitted in rows:
        assert 1 / 1.5 < float(fitted) / float(truth) < 1.5


def test_demo_payload_flag_dispatches_to_the_payload_demo(monkeypatch):
    # the payload demo itself is tested in test_identification.py; here only the dispatch
    from spatialjax._cli import demo_payload

    seen = []
    monkeypatch.setattr(demo_payload, "run", lambda args: seen.append(args.payload) or 0)
    monkeypatch.setattr(demo, "run", lambda args: seen.append("robot") or 0)
    assert cli.main(["demo", "--payload", "--bodies", "3"]) == 0
    assert cli.main(["demo"]) == 0
    assert seen == [True, "robot"]


def test_robot_demo_rejects_bad_duration(capsys):
    assert cli.main(["demo", "--no-cache", "--duration", "2"]) == 2
    assert "--duration must be between" in capsys.readouterr().err


def test_compilation_cache_opt_out(monkeypatch, tmp_path):
    monkeypatch.setenv("SPATIALJAX_NO_COMPILATION_CACHE", "1")
    assert _util.enable_compilation_cache(str(tmp_path / "c")) is None
    assert not (tmp_path / "c").exists()
    assert jax.config.jax_compilation_cache_dir != str(tmp_path / "c")
