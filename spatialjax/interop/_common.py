"""Helpers shared by the converters: lazy imports, dtype default, pose coercion, block swap."""

from __future__ import annotations

import importlib
from types import ModuleType

import jax.numpy as jnp

from .._errors import ArgumentTypeError
from .._transforms import Plx, Plxb


def import_optional(name: str, extra: str) -> ModuleType:
    """Import ``name``, or raise an ImportError that says which extra installs it."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        raise ImportError(
            f"{name} is needed for this converter but is not installed "
            f"(pip install 'spatialjax[{extra}]')"
        ) from e


def default_dtype(dtype):
    """``dtype``, or JAX's default float dtype when ``None``."""
    return jnp.zeros(()).dtype if dtype is None else dtype


def as_plxb(X) -> Plxb:
    """A ``Plxb`` (a ``Plx`` is converted with ``to_plxb``); anything else is a TypeError."""
    if isinstance(X, Plxb):
        return X
    if isinstance(X, Plx):
        return X.to_plxb()
    raise ArgumentTypeError("X", f"expected a Plx or Plxb, got {type(X).__name__}")


def swap_halves(x):
    """``[a; b] -> [b; a]`` on the last axis (length 6)."""
    return jnp.concatenate([x[..., 3:], x[..., :3]], axis=-1)
