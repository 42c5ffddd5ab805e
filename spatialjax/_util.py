"""Helpers shared across spatialjax's packages, as public names in a private module.

``x64``, ``collector_paused``, ``bucket`` (padded batch sizes), atomic file writes
(``write_atomic``, ``temp_beside``, ``replace_keeping_mode``), ``cache_folder``,
``enable_compilation_cache``, ``use_executable_folder``, ``restore_executable_folder`` and
``executable_folder``.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import shutil
from pathlib import Path
from typing import Any

__all__ = [
    "CACHE_DIR",
    "bucket",
    "cache_folder",
    "collector_paused",
    "enable_compilation_cache",
    "executable_folder",
    "replace_keeping_mode",
    "restore_executable_folder",
    "temp_beside",
    "use_executable_folder",
    "write_atomic",
    "x64",
]

#: Default folder of the persistent JAX compilation cache (``~`` expanded when used).
CACHE_DIR = os.path.join("~", ".cache", "spatialjax", "jax")


def x64() -> contextlib.AbstractContextManager[Any]:
    """A context in which JAX computes in float64 (``jax.enable_x64``, or the older location)."""
    import jax

    ctx: Any = getattr(jax, "enable_x64", None)
    if ctx is not None:
        return ctx(True)
    return importlib.import_module("jax.experimental").enable_x64()  # older JAX


@contextlib.contextmanager
def collector_paused(*, freeze: bool = False):
    """No cyclic garbage collection inside the block, the collector's state restored after.

    For blocks that import modules: imports make next to no garbage, and the
    collections their allocations set off walk jax's and SciPy's objects again and
    again (``benchmarks/README.md``, "identify in a fresh process"). ``freeze``: what
    exists at the end is then moved out of later collections (``gc.freeze``), for a
    process that is the command itself.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
        if enabled:
            gc.enable()


def bucket(n: int) -> int:
    """Padded batch size (8, 32, 128, ...): one compilation serves batches of similar size.

    Examples:
      >>> [bucket(n) for n in (1, 8, 9, 33)]
      [8, 8, 32, 128]
    """
    b = 8
    while b < n:
        b *= 4
    return b


def temp_beside(path, tag: str) -> Path:
    """The temporary file ``.<name>.spatialjax-<tag>.tmp`` beside ``path`` (links resolved)."""
    path = Path(os.path.realpath(path))
    return path.with_name(f".{path.name}.spatialjax-{tag}.tmp")


def replace_keeping_mode(tmp, path) -> None:
    """Rename ``tmp`` over ``path`` (its target, for a link), keeping an old file's mode."""
    path = Path(os.path.realpath(path))
    if path.exists():
        shutil.copymode(path, tmp)
    os.replace(tmp, path)


def write_atomic(path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, then rename it over ``path``.

    A symbolic link is followed (its target is rewritten, the link kept) and an
    existing file keeps its permission bits. A failure raises the ``OSError``
    subclass it was, naming ``path`` as given (not the temporary file).
    """
    given = str(path)
    tmp = temp_beside(path, "fix")
    try:
        if not tmp.parent.is_dir():
            raise FileNotFoundError(
                2, f"cannot write {given!r}: no such folder {str(Path(given).parent)!r}"
            )
        try:
            tmp.write_bytes(data)
            replace_keeping_mode(tmp, path)
        except OSError as e:
            raise type(e)(e.errno, f"cannot write {given!r}: {e.strerror}") from None
    finally:
        tmp.unlink(missing_ok=True)


def cache_folder(path: str | None = None) -> str | None:
    """The compilation cache's folder: ``path`` (default ``CACHE_DIR``), ``~`` expanded;
    None when the environment variable ``SPATIALJAX_NO_COMPILATION_CACHE`` is set (to
    anything but ``0``). Nothing is created."""
    if os.environ.get("SPATIALJAX_NO_COMPILATION_CACHE", "") not in ("", "0"):
        return None
    return os.path.expanduser(path or CACHE_DIR)


def enable_compilation_cache(path: str | None = None) -> str | None:
    """Point JAX's persistent compilation cache at ``path`` (default ``CACHE_DIR``, created).

    Programs that take 0.1 s or more to compile are kept; identification's
    one-shot programs also keep their executables in ``path/executables``
    (``executable_folder``).

    Returns:
      The folder used, or None when the environment variable
      ``SPATIALJAX_NO_COMPILATION_CACHE`` is set (to anything but ``0``).
    """
    folder = cache_folder(path)
    if folder is None:
        return None
    import jax

    os.makedirs(folder, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", folder)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.1)
    _EXECUTABLES[0] = os.path.join(folder, "executables")
    return folder


def use_executable_folder(path: str | None = None) -> str | None:
    """Set ``executable_folder`` to ``path/executables`` before ``enable_compilation_cache``
    (default ``CACHE_DIR``; off with ``SPATIALJAX_NO_COMPILATION_CACHE``): programs
    prepared early load what is kept there. Nothing is created until an executable is
    written, which a program does once it has run.

    Returns:
      The folder it replaces (``restore_executable_folder`` puts it back).
    """
    folder = cache_folder(path)
    before = _EXECUTABLES[0]
    _EXECUTABLES[0] = None if folder is None else os.path.join(folder, "executables")
    return before


def restore_executable_folder(folder: str | None) -> None:
    """Put back the ``executable_folder`` that ``use_executable_folder`` returned."""
    _EXECUTABLES[0] = folder


_EXECUTABLES: list[str | None] = [None]


def executable_folder() -> str | None:
    """The folder of the compiled executables kept by ``enable_compilation_cache`` (None: off).

    Identification's one-shot programs (``fitting.program.cpu_program``) keep
    their compiled executables there, so that a later process loads them
    without tracing, lowering or compiling again.
    """
    return _EXECUTABLES[0]
