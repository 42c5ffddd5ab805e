"""Executables kept on disk by ``cpu_program`` (``_util.executable_folder``).

With the compilation cache enabled (the command line's default), identification's
one-shot programs keep their compiled executables, and a later process loads them
instead of tracing, lowering and compiling. A loaded executable must compute what
a compiled one does, even as the first linear-algebra program of its process; a
changed program must never load another's executable; a damaged or unwritable
folder must cost a compile, not the run.
"""

import dataclasses
import json
import os
import shutil
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from helpers import robots_dir

from spatialjax import _util
from spatialjax.identification.fitting import program
from spatialjax.identification.fitting.program import cpu_program

# Runs in a fresh process: least squares first (an eigendecomposition: LAPACK, which
# jaxlib binds only when it lowers such an op, so a loaded executable runs before any
# binding), then the whole-robot fit and identifiability (the regressors are NumPy).
_SCRIPT = r"""
import json, sys
import jax
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp, numpy as np
from spatialjax import _util
if sys.argv[3] == "kept":
    _util.enable_compilation_cache(sys.argv[1])
else:  # JAX's persistent cache alone, every program kept
    jax.config.update("jax_compilation_cache_dir", sys.argv[1])
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
# a first program compiled with JAX's cache on, as the command line's first steps are: JAX
# decides once per process that its cache is used, and a kept program compiles later
jax.jit(lambda x: jnp.sin(x) * 2.0)(jnp.arange(3.0)).block_until_ready()
compiles = []
original = jax.stages.Lowered.compile
def counted(self, *a, **k):
    compiles.append(1)
    return original(self, *a, **k)
jax.stages.Lowered.compile = counted
import spatialjax.identification as sid
import spatialjax.multibody as mb
from spatialjax.identification.pipeline.host_regressor import host_regressors

model = mb.Model.from_urdf(sys.argv[2], dtype="float64")
rng = np.random.default_rng(7)
N, nv = 200, model.nv
q, v, a = (rng.uniform(-1, 1, (N, nv)) for _ in range(3))
jm = mb.JointModel(("viscous", "coulomb"))
Y, F = host_regressors(model, q, v, a, np.array([0.0, 0.0, -9.81]), jm)
pi = np.asarray(model.inertia.params).reshape(-1)
tau = Y @ pi + F @ np.tile([0.3, 0.2], nv) + 0.01 * rng.standard_normal((N, nv))
x_ls, phi_ls = sid.least_squares_torques(jnp.asarray(Y), jnp.asarray(tau), extra=jnp.asarray(F))
prior = model.inertia
fit = sid.fit_torques(jnp.asarray(Y), jnp.asarray(tau), prior=prior,
                      extra=jnp.asarray(F), extra_nonnegative=np.ones(F.shape[-1], bool))
ident = sid.identifiability(jnp.asarray(Y), extra=jnp.asarray(F), prior=prior)
out = {"Y": Y.tolist(), "x_ls": np.asarray(x_ls).tolist(), "phi_ls": np.asarray(phi_ls).tolist(),
       "fit": np.asarray(fit.inertia.params).tolist(), "extra": np.asarray(fit.extra).tolist(),
       "rank": int(ident.rank), "tau": tau.tolist(), "F": F.tolist(), "compiles": len(compiles)}
print(json.dumps(out))
"""


def _run(folder, mode="kept") -> dict:
    robots = robots_dir()
    if robots is None:
        pytest.skip("needs example-robot-data (the test extra)")
    urdf = robots / "ur_description/urdf/ur5_robot.urdf"
    env = {k: v for k, v in os.environ.items() if k != "SPATIALJAX_NO_COMPILATION_CACHE"}
    r = subprocess.run(
        [sys.executable, "-c", _SCRIPT, str(folder), str(urdf), mode],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 0, (r.returncode, r.stderr[-3000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_a_later_process_loads_the_executables_and_computes_the_same(tmp_path):
    first = _run(tmp_path)
    kept = os.listdir(tmp_path / "executables")
    # least squares, fit, identifiability
    assert first["compiles"] >= 3 and len(kept) >= 3
    second = _run(tmp_path)
    assert second["compiles"] == 0  # every program loaded: nothing traced or compiled
    assert sorted(os.listdir(tmp_path / "executables")) == sorted(kept)
    for k in ("Y", "x_ls", "phi_ls", "fit", "extra", "rank"):
        np.testing.assert_array_equal(second[k], first[k], err_msg=k)
    # and the loaded least squares is least squares (NumPy's, on the same rows)
    Y, F, tau = (np.asarray(second[k]) for k in ("Y", "F", "tau"))
    X = np.concatenate([Y, F], -1).reshape(-1, Y.shape[-1] + F.shape[-1])
    x_np = np.linalg.lstsq(X, tau.reshape(-1), rcond=None)[0]
    x = np.concatenate([second["x_ls"], second["phi_ls"]])
    np.testing.assert_allclose(X @ x, X @ x_np, rtol=1e-9, atol=1e-9 * np.abs(X @ x_np).max())


@pytest.mark.slow  # five fresh processes that compile the fit (25 s)
def test_programs_first_loaded_from_jax_cache_are_kept_whole(tmp_path):
    """An executable that XLA:CPU loaded from JAX's persistent cache serialises without its
    kernels; the kept copy is compiled afresh, and checked by loading it back, instead."""
    plain = _run(tmp_path, mode="jax-cache")  # fills JAX's cache (same folder as "kept")
    kept = _run(tmp_path)  # compiles its copies: not from JAX's cache
    loaded = _run(tmp_path)  # loads them
    assert loaded["compiles"] == 0
    # another version of spatialjax (other keys) over the same cache: the kept programs
    # compile again, and JAX's cache, which a kept compile never reads nor fills, has none
    # of them to hand back without kernels
    shutil.rmtree(tmp_path / "executables")
    again = _run(tmp_path)
    reloaded = _run(tmp_path)
    assert reloaded["compiles"] == 0
    for k in ("Y", "x_ls", "phi_ls", "fit", "extra", "rank"):
        for run in (kept, loaded, again, reloaded):
            np.testing.assert_array_equal(run[k], plain[k], err_msg=k)


def _scaled(x, *, k):
    return jnp.linalg.eigh(x @ x.T + k * jnp.eye(x.shape[0]))[0]


def _kept_call(monkeypatch, tmp_path, prog, *args, **kwargs):
    monkeypatch.setattr(_util, "_EXECUTABLES", [str(tmp_path)])
    monkeypatch.setattr(program, "_LOADED", {})
    return prog(*args, **kwargs)


def test_a_damaged_entry_is_compiled_again_and_replaced(monkeypatch, tmp_path):
    prog = cpu_program(_scaled, static_argnames=("k",), compiler_options={})
    x = jnp.asarray(np.random.default_rng(0).standard_normal((3, 3)))
    ref = np.linalg.eigvalsh(np.asarray(x) @ np.asarray(x).T + 2.0 * np.eye(3))
    np.testing.assert_allclose(_kept_call(monkeypatch, tmp_path, prog, x, k=2.0), ref, rtol=1e-12)
    (entry,) = tmp_path.iterdir()
    entry.write_bytes(b"not an executable")
    np.testing.assert_allclose(_kept_call(monkeypatch, tmp_path, prog, x, k=2.0), ref, rtol=1e-12)
    assert entry.read_bytes() != b"not an executable"  # written again
    # loaded (this process's copy dropped): the same values
    np.testing.assert_allclose(_kept_call(monkeypatch, tmp_path, prog, x, k=2.0), ref, rtol=1e-12)


def test_a_prepared_executable_is_kept_and_a_kept_one_is_prepared_by_loading(monkeypatch, tmp_path):
    prog = cpu_program(_scaled, static_argnames=("k",), compiler_options={})
    x = jnp.asarray(np.random.default_rng(1).standard_normal((3, 3)))
    ref = np.linalg.eigvalsh(np.asarray(x) @ np.asarray(x).T + 3.0 * np.eye(3))
    monkeypatch.setattr(_util, "_EXECUTABLES", [str(tmp_path)])
    monkeypatch.setattr(program, "_LOADED", {})
    monkeypatch.setattr(program, "_PENDING", {})
    prog.prepare(jnp.zeros((3, 3)), k=3.0)
    np.testing.assert_allclose(prog(x, k=3.0), ref, rtol=1e-12)
    (entry,) = tmp_path.iterdir()  # compiled in the background, kept once it ran
    assert prog.tuned._cache_size() == 0 and prog.plain._cache_size() == 0
    # another process's preparation loads the entry: a damaged one is compiled again
    monkeypatch.setattr(program, "_LOADED", {})
    prog.prepare(jnp.zeros((3, 3)), k=3.0)
    (future,) = program._PENDING.values()
    assert future.result()[1] is False  # loaded, not compiled
    np.testing.assert_allclose(prog(x, k=3.0), ref, rtol=1e-12)
    entry.write_bytes(b"not an executable")
    monkeypatch.setattr(program, "_LOADED", {})
    prog.prepare(jnp.zeros((3, 3)), k=3.0)
    np.testing.assert_allclose(prog(x, k=3.0), ref, rtol=1e-12)
    assert entry.read_bytes() != b"not an executable"  # written again


def test_an_unwritable_folder_costs_the_copy_not_the_call(monkeypatch, tmp_path):
    prog = cpu_program(_scaled, static_argnames=("k",), compiler_options={})
    blocked = tmp_path / "file"
    blocked.write_text("a file where the folder would be")
    x = jnp.eye(2)
    out = _kept_call(monkeypatch, blocked / "executables", prog, x, k=1.0)
    np.testing.assert_allclose(out, [2.0, 2.0], rtol=1e-14)


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class _Tree:
    value: jax.Array
    parents: tuple = dataclasses.field(metadata={"static": True})

    def __repr__(self):  # a short repr, as Model's structure has: the key must not use it
        return "_Tree(...)"


def test_the_key_changes_with_everything_that_changes_the_program():
    def key(static=None, dyn=None, options=()):
        dyn = (jnp.zeros(3),) if dyn is None else dyn
        return program._executable_key(_scaled, static or {"k": 1.0}, dyn, options)

    base = key()
    assert base == key()  # stable
    assert key(static={"k": 2.0}) != base
    assert key(dyn=(jnp.zeros(4),)) != base  # shape
    assert key(dyn=(jnp.zeros(3, jnp.float32),)) != base  # dtype
    assert key(options=(("xla_backend_optimization_level", 0),)) != base
    # a tree's static data, compared in full (not through its repr)
    a = key(dyn=(_Tree(jnp.zeros(3), (-1, 0, 1)),))
    b = key(dyn=(_Tree(jnp.zeros(3), (-1, 0, 0)),))
    assert a is not None and b is not None and a != b
    # another function of the same shapes
    assert program._executable_key(_poly_other, {"k": 1.0}, (jnp.zeros(3),), ()) != base


def _poly_other(x, *, k):
    return jnp.sum(x) * k


def test_overlapping_bypasses_end_with_the_last_one():
    """Kept compiles of two threads overlap; JAX's cache decision is restored once, at the end."""
    from jax._src import compilation_cache

    original = compilation_cache.is_cache_used
    setting = jax.config.values["jax_enable_compilation_cache"]
    first, second = program._persistent_cache_bypassed(), program._persistent_cache_bypassed()
    first.__enter__()
    assert compilation_cache.is_cache_used(None) is False
    second.__enter__()
    first.__exit__(None, None, None)
    assert compilation_cache.is_cache_used(None) is False  # the second is still compiling
    assert jax.config.values["jax_enable_compilation_cache"] is False
    second.__exit__(None, None, None)
    assert compilation_cache.is_cache_used is original
    assert jax.config.values["jax_enable_compilation_cache"] == setting
