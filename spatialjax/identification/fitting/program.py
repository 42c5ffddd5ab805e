"""``cpu_program``: a jitted function with XLA:CPU compile options where allowed, whose
compiled executables a later process can load (``_util.executable_folder``) and which can
be compiled ahead, in a background thread (``prepare``); ``compile_seconds``: the time JAX
spends compiling inside a block.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import functools
import hashlib
import inspect
import os
import pickle
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ... import _util
from ..._checks import is_concrete, on_cpu


@functools.cache
def _supported(options: tuple[tuple[str, object], ...]) -> bool:
    """Whether this jaxlib knows ``options`` (checked once on a trivial program)."""
    try:
        jax.jit(jnp.negative, compiler_options=dict(options)).lower(1.0).compile()
    except Exception:  # an XLA without one of the options: compile with the defaults
        return False
    return True


def _full_precision(fn: Callable) -> Callable:
    """``fn`` traced with every matrix product at ``smallmat.FULL`` (float32 operands
    multiplied in float32 on a GPU or TPU, not TensorFloat-32 or bfloat16)."""

    @functools.wraps(fn)
    def traced(*args, **kwargs):
        with jax.default_matmul_precision("highest"):
            return fn(*args, **kwargs)

    return traced


def cpu_program(
    fn: Callable, *, static_argnames: Sequence[str], compiler_options: Mapping[str, Any]
) -> Callable:
    """``jax.jit(fn)`` that uses ``compiler_options`` for top-level calls on CPU.

    Calls inside a trace, on an accelerator or with a jaxlib that lacks the
    options use the plain ``jax.jit(fn)``; both give the same results to rounding.
    While ``_util.executable_folder()`` is set (the command line's compilation
    cache), a top-level call keeps its compiled executable there, and a later
    process loads it instead of tracing and compiling (``_top_level_call``); ``call.prepare``
    compiles one ahead, in a background thread.
    """
    names = tuple(static_argnames)
    exact = _full_precision(fn)
    plain = jax.jit(exact, static_argnames=names)
    tuned = jax.jit(exact, static_argnames=names, compiler_options=dict(compiler_options))
    key = tuple(sorted(compiler_options.items()))
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        leaves = jax.tree_util.tree_leaves(args)
        top = is_concrete(leaves) and on_cpu(leaves)
        if top and (_util.executable_folder() is not None or _PENDING or _LOADED):
            program = functools.partial(_tuned_if_supported, tuned, plain, key)
            return _top_level_call(fn, program, signature, names, key, args, kwargs)
        return (tuned if top and _supported(key) else plain)(*args, **kwargs)

    def prepare(*args, **kwargs) -> None:
        """Start compiling (or loading) the executable of ``call(*args, **kwargs)`` in a
        background thread and return; a later top-level call whose arguments have the same
        types, shapes and static values waits for it instead of compiling.

        The values of the arrays do not matter (zeros do). Calls inside a trace or off
        the CPU are not prepared; a preparation that fails leaves the call to compile.
        """
        leaves = jax.tree_util.tree_leaves(args)
        if is_concrete(leaves) and on_cpu(leaves):
            program = functools.partial(_tuned_if_supported, tuned, plain, key)
            _prepare(fn, program, signature, names, key, args, kwargs)

    call.plain, call.tuned, call.prepare = plain, tuned, prepare  # pyright: ignore[reportAttributeAccessIssue]
    call.cache_size = lambda: plain._cache_size() + tuned._cache_size()  # pyright: ignore[reportAttributeAccessIssue]
    return call


#: XLA:CPU options of the solvers' programs (``fit``, ``fit_torques``,
#: ``least_squares_torques``, ``identifiability``): XLA:CPU's loop emitters, which compile
#: many small kernels (ops on 4×4 blocks per body) about twice as fast as its MLIR fusion
#: emitters, and no LLVM optimisation: their run time is O(p³) linear algebra in library
#: calls and milliseconds of small kernels, so optimising buys nothing measurable while it
#: costs most of the compile time. Results equal to the last bit or two (figures:
#: ``benchmarks/bench_identify_cold.py``).
SOLVER_OPTIONS = {"xla_cpu_use_fusion_emitters": False, "xla_backend_optimization_level": 0}

# ------------------------------------------------------------------ kept executables
_LOADED: dict[str, Any] = {}  # key -> compiled executable, this process
#: key -> the future ``(executable, fresh)`` of a ``prepare`` (fresh: compiled, not yet kept)
_PENDING: dict[str, concurrent.futures.Future] = {}
_WORKER: list[concurrent.futures.ThreadPoolExecutor] = []
#: guards ``_BYPASSED``: the compiles under way with JAX's persistent cache switched off, and
#: what to restore when the last one ends (``_persistent_cache_bypassed``)
_BYPASS = threading.Lock()
_BYPASSED: dict[str, Any] = {"count": 0}


@functools.cache
def _source_fingerprint() -> str:
    """SHA-256 of every ``.py`` file of the installed spatialjax (its path and bytes)."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    digest = hashlib.sha256()
    for folder, _, files in sorted(os.walk(root)):
        for name in sorted(f for f in files if f.endswith(".py")):
            path = os.path.join(folder, name)
            digest.update(os.path.relpath(path, root).encode())
            with open(path, "rb") as f:
                digest.update(f.read())
    return digest.hexdigest()


@functools.cache
def _lapack_ready() -> None:
    """Bind XLA:CPU's LAPACK kernels, as lowering a linear-algebra op does.

    jaxlib binds them when it first lowers such an op; an executable loaded
    from disk before any such lowering would call unbound kernels (a crash).
    JAX's own binding call where this version has it (microseconds), else the
    lowering of a small Cholesky factorisation (0.1 s).
    """
    try:
        from jax._src.lax.linalg import initialize_lapack
    except ImportError:  # pragma: no cover - another JAX layout
        jax.jit(jnp.linalg.cholesky).lower(jax.ShapeDtypeStruct((2, 2), jnp.float32))
    else:
        initialize_lapack()


@functools.cache
def _versions() -> tuple[str, ...]:
    """jax's, jaxlib's and NumPy's versions, and the host: its CPU's instruction sets.

    XLA:CPU compiles for the host's instruction sets, so an executable from
    another machine sharing the folder (a network home) must not load here.
    """
    import platform
    from importlib.metadata import version

    flags = ""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line for line in f if line.startswith(("flags", "Features"))), "")
    except OSError:  # not Linux: the processor's name stands for it
        flags = platform.processor()
    host = hashlib.sha256(f"{platform.machine()} {flags}".encode()).hexdigest()
    return jax.__version__, version("jaxlib"), np.__version__, host


def _setting(name: str):
    """The current value of a JAX setting (``jax.config``)."""
    return jax.config.values[name]


def _executable_key(fn, static: dict, dynamic, options) -> str | None:
    """The key of one program: what it computes and what it runs on (None: not keyable).

    The function's name, the spatialjax source, the static arguments and the
    dynamic ones' tree structure (with its static data: a model's joints) and
    types (pickled: every detail, not a repr), the compile options, jax, jaxlib
    and NumPy, the host's CPU, the device, the JAX settings that change a
    trace, and ``XLA_FLAGS``.
    """
    leaves, tree = jax.tree_util.tree_flatten(dynamic)
    try:
        types = [str(jax.typeof(x)) for x in leaves]
        # where the arguments are, and where uncommitted ones go
        placed = [sorted(d.id for d in x.devices()) for x in leaves if isinstance(x, jax.Array)]
        blob = pickle.dumps(
            (
                fn.__module__,
                fn.__qualname__,
                _source_fingerprint(),
                sorted(static.items()),
                tree,
                types,
                options,
                _versions(),
                jax.devices()[0].device_kind,
                placed,
                str(_setting("jax_default_device")),
                bool(_setting("jax_enable_x64")),
                str(_setting("jax_default_matmul_precision")),
                str(_setting("jax_numpy_dtype_promotion")),
                os.environ.get("XLA_FLAGS", ""),
            )
        )
    except Exception:  # an argument that does not pickle: no key, the plain path
        return None
    return hashlib.sha256(blob).hexdigest()


def _tuned_if_supported(tuned, plain, options):
    """The jitted function to compile: ``tuned`` if this jaxlib knows its options."""
    return tuned if _supported(options) else plain


def _split(signature, names, args, kwargs):
    """``(static, dyn_args, dyn_kwargs)``: the call's static arguments by name, and the rest
    (what the executable takes)."""
    positional = list(signature.parameters)[: len(args)]
    static = {n: a for n, a in zip(positional, args, strict=True) if n in names}
    static |= {k: v for k, v in kwargs.items() if k in names}
    dyn_args = tuple(a for n, a in zip(positional, args, strict=True) if n not in names)
    dyn_kwargs = {k: v for k, v in kwargs.items() if k not in names}
    return static, dyn_args, dyn_kwargs


#: JAX settings that change a trace (thread-local values), by name and the name of their
#: context manager (``jax.enable_x64``; before jax 0.8 only in ``jax._src.config``)
_TRACE_SETTINGS = (
    ("jax_enable_x64", "enable_x64"),
    ("jax_default_matmul_precision", "default_matmul_precision"),
    ("jax_numpy_dtype_promotion", "numpy_dtype_promotion"),
    ("jax_default_device", "default_device"),
)


def _setting_context(name: str) -> Any:
    """The context manager that sets JAX's setting ``name`` in this thread (None: none)."""
    ctx: Any = getattr(jax, name, None)
    if ctx is None:
        try:
            from jax._src import config as jax_config
        except ImportError:  # pragma: no cover - another JAX layout
            return None
        ctx = getattr(jax_config, name, None)
    return ctx if callable(ctx) else None


def _prepare(fn, program, signature, names, options, args, kwargs) -> None:
    """Submit ``_obtain`` of this call's executable to the background thread (once per key),
    with this thread's JAX settings (``with jax.enable_x64(True)`` holds in this thread only)."""
    static, dyn_args, dyn_kwargs = _split(signature, names, args, kwargs)
    key = _executable_key(fn, static, (dyn_args, dyn_kwargs), options)
    if key is None or key in _LOADED or key in _PENDING:
        return
    if not _WORKER:
        # two: identify's fit compiles beside its least squares and identifiability (XLA
        # releases the GIL)
        _WORKER.append(concurrent.futures.ThreadPoolExecutor(2, "spatialjax-compile"))
    settings = {name: _setting(name) for name, _ in _TRACE_SETTINGS}
    _PENDING[key] = _WORKER[0].submit(
        _obtain, program, args, kwargs, _util.executable_folder(), key, settings
    )


def cancel_prepared() -> None:
    """Drop the preparations not yet started (``prepare``), as when the run that asked for
    them stops early: the process neither compiles them nor waits for them at exit. One
    under way finishes and stays available to a call that wants it."""
    for key, future in list(_PENDING.items()):
        if future.cancel():
            del _PENDING[key]


def _obtain(program, args, kwargs, folder: str | None, key: str, settings: dict):
    """``(executable, fresh)`` of a call: loaded from ``folder`` where kept there, else
    compiled (``fresh``: to be kept once it has run), under the caller's ``settings``.

    Raises (the call then compiles for itself) where a setting cannot be given this
    thread the caller's value: a program traced with another would compute otherwise.
    """
    with contextlib.ExitStack() as stack:
        for name, ctx_name in _TRACE_SETTINGS:
            ctx = _setting_context(ctx_name)
            if ctx is not None:
                stack.enter_context(ctx(settings[name]))
            if _setting(name) != settings[name]:
                raise RuntimeError(f"{name} is not the caller's in the compile thread")
        return _obtain_here(program, args, kwargs, folder, key)


def _obtain_here(program, args, kwargs, folder: str | None, key: str):
    """``(executable, fresh)`` in this thread: the entry kept in ``folder`` where it loads,
    else compiled (with JAX's cache bypassed where it will be kept)."""
    if folder is None:
        return _lowered(program, args, kwargs).compile(), False
    try:
        with open(os.path.join(folder, key + ".bin"), "rb") as f:
            return _load(f.read()), False
    except Exception:  # missing, damaged or from another build: compiled
        return _compile_bypassing(program, args, kwargs), True


#: held while a compile thread traces and lowers (Python, under the GIL): the programs
#: prepared first (the fit, the longest compile) reach XLA's compiler, which runs without
#: the GIL, before the next one's trace starts competing for the interpreter
_TRACING = threading.Lock()


def _lowered(program, args, kwargs):
    """``program().lower(*args, **kwargs)``, one thread at a time (``_TRACING``)."""
    with _TRACING:
        return program().lower(*args, **kwargs)


def _top_level_call(fn, program, signature, names, options, args, kwargs):
    """``program()(*args, **kwargs)`` through an executable prepared, kept on disk or both.

    A prepared one (``prepare``) is waited for. Otherwise, with a folder set,
    one kept there is loaded when it runs (no trace, lowering or compile), else
    compiled afresh. A fresh one is written (atomically, ``<key>.bin``) once a
    copy read back from its bytes has computed the same outputs, bit for bit.
    """
    static, dyn_args, dyn_kwargs = _split(signature, names, args, kwargs)
    key = _executable_key(fn, static, (dyn_args, dyn_kwargs), options)
    if key is None:
        return program()(*args, **kwargs)
    folder = _util.executable_folder()
    path = None if folder is None else os.path.join(folder, key + ".bin")

    def run(compiled):
        return jax.block_until_ready(compiled(*dyn_args, **dyn_kwargs))

    try:
        if key in _LOADED:
            return run(_LOADED[key])
        compiled = fresh = None
        pending = _PENDING.pop(key, None)
        if pending is not None:
            waited = time.time()
            try:
                compiled, fresh = pending.result()
            except Exception:  # the preparation failed or was cancelled: as if there were none
                compiled = None
            if _OPEN:
                _record(waited, time.time())
        if compiled is None:
            if folder is None:
                return program()(*args, **kwargs)
            compiled, fresh = _obtain_here(program, args, kwargs, folder, key)
        try:
            out = run(compiled)
        except Exception:  # a loaded or prepared executable that does not run
            if path is None:
                return program()(*args, **kwargs)
            if fresh:
                raise
            compiled, fresh = _compile_bypassing(program, args, kwargs), True
            out = run(compiled)
        if fresh and path is not None:
            _keep(compiled, out, run, path)
        _LOADED[key] = compiled
        return out
    except (TypeError, ValueError):  # arguments the executable does not take (devices, layout)
        return program()(*args, **kwargs)


def _load(blob: bytes):
    """The executable of an entry's bytes, on the devices it was compiled for."""
    from jax.experimental import serialize_executable

    payload, in_tree, out_tree, ids = pickle.loads(blob)
    _lapack_ready()
    by_id = {d.id: d for d in jax.devices()}
    return serialize_executable.deserialize_and_load(
        payload, in_tree, out_tree, execution_devices=[by_id[i] for i in ids]
    )


def _compile_bypassing(program, args, kwargs):
    """``program()`` compiled for ``args`` with JAX's persistent cache bypassed: an
    executable XLA:CPU loaded from it serialises without its kernels (a kept copy would not
    run)."""
    lowered = _lowered(program, args, kwargs)
    with _persistent_cache_bypassed():
        return lowered.compile()


@contextlib.contextmanager
def _persistent_cache_bypassed() -> Iterator[None]:
    """JAX's persistent cache neither read nor written by the compiles inside the block.

    JAX decides once per process whether its cache is used (``is_cache_used``, read at
    each compile), so switching ``jax_enable_compilation_cache`` off after a first
    compile does not bypass it: that decision is answered "no" while any such block is
    open (blocks of several threads overlap; the last one to end restores it). Other
    threads' compiles in the same moments skip the cache too (they compile).
    """
    try:
        from jax._src import compilation_cache
    except ImportError:  # pragma: no cover - another JAX layout: the setting alone
        compilation_cache = None
    with _BYPASS:
        if _BYPASSED["count"] == 0:
            _BYPASSED["setting"] = bool(_setting("jax_enable_compilation_cache"))
            _BYPASSED["used"] = getattr(compilation_cache, "is_cache_used", None)
            jax.config.update("jax_enable_compilation_cache", False)
            if _BYPASSED["used"] is not None:
                compilation_cache.is_cache_used = lambda backend: False  # pyright: ignore[reportOptionalMemberAccess]
        _BYPASSED["count"] += 1
    try:
        yield
    finally:
        with _BYPASS:
            _BYPASSED["count"] -= 1
            if _BYPASSED["count"] == 0:
                if _BYPASSED["used"] is not None:
                    compilation_cache.is_cache_used = _BYPASSED["used"]  # pyright: ignore[reportOptionalMemberAccess]
                jax.config.update("jax_enable_compilation_cache", _BYPASSED["setting"])


def _keep(compiled, out, run, path: str) -> None:
    """Write ``compiled`` to ``path`` if a copy read back from its bytes gives ``out``."""
    from jax.experimental import serialize_executable

    try:
        shardings = jax.tree.leaves((compiled.input_shardings, compiled.output_shardings))
        ids = sorted({d.id for s in shardings for d in s.device_set})
        blob = pickle.dumps((*serialize_executable.serialize(compiled), ids))
        again = run(_load(blob))
        same = jax.tree.map(
            lambda a, b: np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True), out, again
        )
        if all(jax.tree.leaves(same)):
            os.makedirs(os.path.dirname(path), exist_ok=True)
            _util.write_atomic(path, blob)
    except Exception:  # not serialisable, not the same, or a read-only or full folder: not kept
        pass


_COMPILE_EVENTS = "/jax/core/compile/"  # tracing to a jaxpr, lowering to MLIR, XLA compile
#: the spans collected by each open block, with the thread that opened it
_OPEN: list[tuple[int, list[tuple[float, float]]]] = []


def _record(start: float, end: float) -> None:
    """A compile span (or a wait for a prepared program) of this thread, in ``time.time()``."""
    me = threading.get_ident()
    for thread, spans in list(_OPEN):
        if thread == me:
            spans.append((start, end))


def _on_span(event, start_time, end_time, **_):
    if _OPEN and event.startswith(_COMPILE_EVENTS):
        _record(start_time, end_time)


def _on_duration(event, duration_secs, **_):
    if _OPEN and event == _COMPILE_EVENTS + "backend_compile_duration":
        _record(0.0, duration_secs)


@functools.cache
def _listening() -> bool:
    """Register one listener for the process; ``True`` where it receives time spans (jax ≥ 0.5)."""
    monitoring = jax.monitoring
    if hasattr(monitoring, "register_event_time_span_listener"):
        monitoring.register_event_time_span_listener(_on_span)
        return True
    monitoring.register_event_duration_secs_listener(_on_duration)  # pragma: no cover
    return False  # pragma: no cover


class CompileSeconds:
    """What ``compile_seconds`` measured: ``value``, set when its block exits."""

    value: float = 0.0


@contextlib.contextmanager
def compile_seconds() -> Iterator[CompileSeconds]:
    """Measure the wall time JAX spends tracing, lowering and compiling inside the block.

    The union of the time spans of JAX's ``/jax/core/compile/`` events in this
    thread (nested traces count once) and of its waits for programs that
    ``prepare`` compiles in the background, within the block's own span; before
    jax 0.5, the sum of the XLA compile durations.
    """
    out = CompileSeconds()
    spans: list[tuple[float, float]] = []
    with_spans = _listening()
    entry = (threading.get_ident(), spans)
    _OPEN.append(entry)
    opened = time.time()  # JAX's spans are in time.time()
    try:
        yield out
    finally:
        _OPEN.remove(entry)
        closed = time.time()
        if not with_spans:  # pragma: no cover - jax before 0.5: disjoint durations
            out.value = sum(end for _, end in spans)
        else:
            total, reach = 0.0, opened
            for start, end in sorted(spans):  # the union of the spans, clipped to the block
                end = min(end, closed)
                if end > reach:
                    total += end - max(start, reach)
                    reach = end
            out.value = total
