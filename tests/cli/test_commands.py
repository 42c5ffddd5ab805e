"""The ``spatialjax`` command line: ``--help`` and ``info``."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers import ROOT

import spatialjax
from spatialjax import _cli as cli


def _run(*args):
    """Run ``python -m spatialjax`` on this tree (the console script calls the same ``main``)."""
    cmd = [sys.executable, "-m", "spatialjax", *args]
    root = str(ROOT)
    path = os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])
    env = dict(os.environ, JAX_PLATFORMS="cpu", COLUMNS="200", PYTHONPATH=path)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)


def test_help_subprocess_lists_subcommands():
    proc = _run("--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: spatialjax")
    text = " ".join(proc.stdout.split())  # argparse may wrap long help lines
    for name, (_, help_) in cli.SUBCOMMANDS.items():
        assert f"{name} " in text
        assert " ".join(help_.split()) in text


def test_info_subprocess():
    proc = _run("info")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert f"spatialjax {spatialjax.__version__}" in out
    assert "devices:" in out and "cpu" in out.lower()
    # the conventions table states the orderings users most often get wrong
    assert "[w; v]" in out and "[n; f]" in out
    assert "[w, x, y, z]" in out
    assert "E = R_AB.T" in out
    assert "Plx(E1 E2, E2^T r1 + r2)" in out
    assert "Plxb(E1 E2, r1 + E1 r2)" in out


def test_main_info_in_process(capsys):
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith(f"spatialjax {spatialjax.__version__}, jax ")
    assert "motion vector" in out


def test_main_without_command_prints_help(capsys):
    assert cli.main([]) == 0
    assert "usage: spatialjax" in capsys.readouterr().out


def test_main_help_and_unknown_command_exit_like_argparse(capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--help"])
    assert exc.value.code == 0
    assert "info" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        cli.main(["no-such-command"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


def test_console_script_entry_point_is_the_cli_command():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"] == {"spatialjax": "spatialjax._cli:command"}


def test_only_the_command_that_owns_its_process_freezes_what_its_imports_made(monkeypatch, capsys):
    import gc
    import sys

    frozen = []
    monkeypatch.setattr(gc, "freeze", lambda: frozen.append(True))
    assert gc.isenabled()
    assert cli.main(["info"]) == 0  # a test, a notebook: the collector as it was
    assert frozen == [] and gc.isenabled()
    monkeypatch.setattr(sys, "argv", ["spatialjax", "info"])
    assert cli.command() == 0  # the script, `python -m spatialjax`
    assert frozen == [True] and gc.isenabled()
    gc.disable()  # a caller that had turned collection off keeps it off
    try:
        assert cli.main(["info"]) == 0 and not gc.isenabled()
    finally:
        gc.enable()
    capsys.readouterr()


def test_every_option_has_help_text():
    """``spatialjax SUBCOMMAND --help`` documents every option (``demo --method`` had none)."""
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, p in sub.choices.items():
        for action in p._actions:
            if action.dest in ("help",) or name == "bench":
                continue
            assert action.help, f"spatialjax {name}: {action.option_strings or action.dest}"


def test_every_subcommand_module_has_the_interface():
    import importlib

    for name, (module, help_) in cli.SUBCOMMANDS.items():
        mod = importlib.import_module(module)
        assert callable(mod.add_arguments) and callable(mod.run), name
        assert help_ and help_ == help_.strip()


def test_identify_preloads_scipy_linalg_unless_the_log_is_left_unfiltered():
    from spatialjax._cli import identify

    parser = cli.build_parser()
    args = parser.parse_args(["identify", "robot.urdf", "log.csv"])
    assert identify.preload(args) == ("scipy.linalg",)
    args = parser.parse_args(["identify", "robot.urdf", "log.csv", "--lowpass", "none"])
    assert identify.preload(args) == ()


def test_commands_run_with_one_blas_thread_and_restore_it(monkeypatch, capsys):
    """A command's run sees every BLAS that NumPy and SciPy loaded on one thread; the setting
    is back as it was afterwards (a test process, or a caller of ``main``, keeps its own)."""
    import numpy as np  # noqa: F401  (its BLAS loaded)
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_info

    def blas_threads():
        return sorted(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")

    before = blas_threads()
    seen = []
    info = cli.importlib.import_module("spatialjax._cli.info")
    monkeypatch.setattr(info, "run", lambda args: seen.append(blas_threads()) or 0)
    assert cli.main(["info"]) == 0
    assert seen and seen[0] and set(seen[0]) == {1}
    assert blas_threads() == before
