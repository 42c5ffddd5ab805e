"""``cpu_program``: XLA:CPU options for top-level calls, the plain ``jit`` inside traces.

The identification programs compile with their own options only where JAX allows
them (a top-level call with concrete CPU arrays); inside a caller's ``jit``,
``vmap`` or ``grad`` the same function is traced plainly. Either way the values
are those of the function itself.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from spatialjax.identification.fitting.program import cpu_program


def _poly(x, *, power):
    return jnp.sum(x**power) + jnp.prod(jnp.cos(x))


def _ref(x, power):  # NumPy, the function's closed form
    return np.sum(x**power) + np.prod(np.cos(x))


def test_top_level_calls_use_the_options_and_traced_calls_the_plain_jit():
    # a function of this test's own: JAX shares a function's compiled programs between jit
    # wrappers, so another test's program of _poly (run first on this worker when pytest-xdist
    # reorders the tests) would already have filled the cache counted below
    def poly(x, *, power):
        return _poly(x, power=power)

    prog = cpu_program(
        poly, static_argnames=("power",), compiler_options={"xla_backend_optimization_level": 0}
    )
    x = jnp.asarray([0.3, -1.2, 2.0])
    np.testing.assert_allclose(prog(x, power=3), _ref(np.asarray(x), 3), rtol=1e-14)
    assert prog.tuned._cache_size() == 1 and prog.plain._cache_size() == 0
    # inside jit, vmap and grad the wrapper hands the tracers to the plain jit
    np.testing.assert_allclose(
        jax.jit(lambda y: prog(y, power=3))(x), _ref(np.asarray(x), 3), rtol=1e-14
    )
    xs = jnp.stack([x, 2 * x])
    np.testing.assert_allclose(
        jax.vmap(lambda y: prog(y, power=2))(xs),
        [_ref(np.asarray(r), 2) for r in np.asarray(xs)],
        rtol=1e-14,
    )
    g = jax.grad(lambda y: prog(y, power=2))(x)
    xn = np.asarray(x)
    dprod = np.array([-np.sin(xn[i]) * np.prod(np.cos(np.delete(xn, i))) for i in range(3)])
    np.testing.assert_allclose(g, 2 * xn + dprod, rtol=1e-13)
    # traced calls are the plain program (no options in the caller's jaxpr), and the tuned
    # one was compiled once, by the top-level call
    (eqn,) = [e for e in jax.make_jaxpr(lambda y: prog(y, power=3))(x).eqns]
    assert eqn.primitive.name in ("pjit", "jit") and eqn.params["compiler_options_kvs"] == ()
    assert prog.tuned._cache_size() == 1


def test_unknown_options_fall_back_to_the_plain_jit():
    prog = cpu_program(
        _poly, static_argnames=("power",), compiler_options={"xla_no_such_option": 1}
    )
    x = jnp.asarray([0.5, 1.5])
    np.testing.assert_allclose(prog(x, power=2), _ref(np.asarray(x), 2), rtol=1e-14)
    assert prog.plain._cache_size() == 1 and prog.tuned._cache_size() == 0


def test_compile_seconds_counts_compiling_only():
    """A fresh program's first call compiles (> 0, within the call's time); a second call and a
    block with no JAX work measure 0; nested traces are counted once."""
    import time

    from spatialjax.identification.fitting.program import compile_seconds

    inner = jax.jit(lambda x: jnp.sin(x) * 2.0)
    outer = jax.jit(lambda x: inner(x).sum() + jnp.linalg.norm(x))  # traces `inner` inside
    x = jnp.linspace(0.0, 1.0, 37)
    t0 = time.perf_counter()
    with compile_seconds() as first:
        outer(x).block_until_ready()
    wall = time.perf_counter() - t0
    assert 0.0 < first.value <= wall
    with compile_seconds() as second:
        outer(x).block_until_ready()
    assert second.value == 0.0
    with compile_seconds() as idle:
        pass
    assert idle.value == 0.0


def _own_program():
    """A ``cpu_program`` of a function of its own (no other test shares its compiled programs).

    Its executables' key names the function by its qualified name, the same for every call
    of this helper: each test uses its own static ``power``, so that none runs another
    test's executable."""

    def poly(x, *, power):
        return _poly(x, power=power)

    return cpu_program(
        poly, static_argnames=("power",), compiler_options={"xla_backend_optimization_level": 0}
    )


def test_a_prepared_call_runs_the_program_compiled_in_the_background():
    from spatialjax.identification.fitting import program

    prog = _own_program()
    x = jnp.asarray([0.3, -1.2, 2.0])
    before = len(program._PENDING)
    prog.prepare(jnp.zeros(3), power=3)  # values do not matter, types and statics do
    assert len(program._PENDING) == before + 1
    y = prog(x, power=3)
    # the call took the prepared executable: neither jit wrapper compiled
    assert prog.tuned._cache_size() == 0 and prog.plain._cache_size() == 0
    np.testing.assert_allclose(y, _ref(np.asarray(x), 3), rtol=1e-14)
    assert y.dtype == jnp.float64
    # another static value, or other shapes, are not what was prepared: compiled as before
    np.testing.assert_allclose(prog(x, power=2), _ref(np.asarray(x), 2), rtol=1e-14)
    assert prog.tuned._cache_size() == 1


def test_a_preparation_compiles_with_the_callers_thread_settings():
    # x64 is on for the suite; a caller that turns it off in its own thread (a context
    # manager: thread-local) gets a float32 program, as its own call would trace
    prog = _own_program()
    with jax.enable_x64(False):
        x = jnp.asarray([0.3, -1.2, 2.0])
        prog.prepare(jnp.zeros(3, jnp.float32), power=7)
        y = prog(x, power=7)
    assert y.dtype == jnp.float32 and prog.tuned._cache_size() == 0
    np.testing.assert_allclose(y, _ref(np.asarray(x, np.float64), 7), rtol=1e-6)


def test_a_failed_preparation_leaves_the_call_to_compile():
    def picky(x):
        if x.shape[0] == 3:  # a trace that fails for this shape only
            raise ValueError("not this shape")
        return jnp.sum(x)

    prog = cpu_program(picky, static_argnames=(), compiler_options={})
    prog.prepare(jnp.zeros(3))
    np.testing.assert_allclose(prog(jnp.ones(4)), 4.0)
    with pytest.raises(ValueError, match="not this shape"):  # raised by the call itself
        prog(jnp.ones(3))


def _x64_sensitive():
    """A ``cpu_program`` whose output dtype is the trace's default float: float64 under x64."""

    def plus_one(x):
        return jnp.sum(x) + jnp.ones(())

    return cpu_program(plus_one, static_argnames=(), compiler_options={})


def test_the_settings_reach_the_compile_thread_through_jax_config_where_jax_lacks_them(
    monkeypatch,
):
    # jax before 0.8 has no top-level jax.enable_x64: the setting's own context manager
    # (jax._src.config) carries the caller's value to the compile thread all the same
    monkeypatch.delattr(jax, "enable_x64", raising=False)
    from jax._src import config as jax_config

    prog = _x64_sensitive()
    with jax_config.enable_x64(False):
        prog.prepare(jnp.zeros(3, jnp.float32))
        y = prog(jnp.ones(3, jnp.float32))
    assert y.dtype == jnp.float32 and float(y) == 4.0
    assert prog.tuned._cache_size() == 0 and prog.plain._cache_size() == 0


def test_a_setting_the_compile_thread_cannot_take_makes_the_call_compile(monkeypatch):
    from spatialjax.identification.fitting import program

    monkeypatch.setattr(program, "_setting_context", lambda name: None)
    prog = _x64_sensitive()
    with jax.enable_x64(False):  # this thread's value; the compile thread would trace with x64
        prog.prepare(jnp.zeros(4, jnp.float32))
        y = prog(jnp.ones(4, jnp.float32))
    assert y.dtype == jnp.float32 and float(y) == 5.0
    assert max(prog.tuned._cache_size(), prog.plain._cache_size()) == 1  # the call compiled


def test_compile_seconds_counts_this_threads_compiles_and_waits_only():
    import threading
    import time

    from spatialjax.identification.fitting.program import compile_seconds

    other = jax.jit(lambda x: jnp.cos(x) * 3.0 + jnp.sin(x))
    done = threading.Event()

    def elsewhere():
        other(jnp.linspace(0.0, 1.0, 41)).block_until_ready()  # traced and compiled there
        done.set()

    with compile_seconds() as measured:
        t = threading.Thread(target=elsewhere)
        t.start()
        t.join()
        time.sleep(0.01)
    assert done.is_set() and measured.value == 0.0
    # a prepared program this thread waits for counts
    prog = _own_program()
    with compile_seconds() as waited:
        prog.prepare(jnp.zeros(3), power=4)
        prog(jnp.ones(3), power=4)
    assert waited.value > 0.0
