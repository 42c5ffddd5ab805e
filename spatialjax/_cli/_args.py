"""Argument types and checks shared by the ``spatialjax`` commands, and their errors.

Option types raise ``argparse.ArgumentTypeError``; checks across options or the file
system raise ``UsageError`` (exit status 2).
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

__all__ = [
    "InputError",
    "NamedValues",
    "UsageError",
    "check_outputs",
    "count",
    "flag_names",
    "lock",
    "name_number",
    "no_repeats",
    "number",
    "positive",
    "same_file",
]


class UsageError(Exception):
    """A bad option or option combination (exit status 2, message on stderr)."""


class InputError(Exception):
    """A model, log or output that cannot be used (exit status 2, message on stderr)."""


# ------------------------------------------------------------------------- option types
def number(text: str, option: str) -> float:
    """``text`` as a finite float (``option`` names it for the caller)."""
    try:
        x = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return x


def positive(option: str) -> Callable[[str], float]:
    """The type of an option that takes a finite number ``> 0``."""

    def parse(text: str) -> float:
        x = number(text, option)
        if not x > 0:
            raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}")
        return x

    parse.__name__ = option
    return parse


def count(option: str, low: int) -> Callable[[str], int]:
    """The type of an option that takes an integer ``>= low``."""

    def parse(text: str) -> int:
        try:
            k = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected an integer >= {low}, got {text!r}"
            ) from None
        if k < low:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {text!r}")
        return k

    parse.__name__ = option
    return parse


def or_words(parse: Callable[[str], Any], **words: Any) -> Callable[[str], Any]:
    """The type of an option that takes one of ``words`` (case-insensitive) or ``parse``'s value.

    ``or_words(positive("--lowpass"), auto="auto", none=None)``.
    """

    def parse_or_word(text: str) -> Any:
        key = text.strip().lower()
        if key in words:
            return words[key]
        try:
            return parse(text)
        except argparse.ArgumentTypeError as e:
            named = " or ".join(repr(w) for w in words)
            raise argparse.ArgumentTypeError(
                f"expected {named} or {str(e).removeprefix('expected ')}"
            ) from None

    parse_or_word.__name__ = getattr(parse, "__name__", "value")
    return parse_or_word


def name_number(text: str, value: str, unit: str = "") -> tuple[str, float]:
    """``NAME=<value>`` with a finite number: ``(name, number)``."""
    name, sep, num = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME={value}{unit}, got {text!r}")
    try:
        x = float(num)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected NAME={value} with a number {value}, got {text!r}"
        ) from None
    if not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"expected a finite {value}, got {text!r}")
    return name.strip(), x


def lock(text: str) -> tuple[str, float]:
    """``--lock NAME=VALUE``: a joint name and the position it is locked at (rad or m)."""
    return name_number(text, "VALUE", " (rad or m)")


lock.__name__ = "--lock"


class NamedValues(argparse.Action):
    """A repeatable ``NAME=VALUE`` option (its ``type`` gives ``(name, value)``) kept as
    ``{name: value}``; a name given twice is a usage error naming the option."""

    def __call__(self, parser, namespace, values, option_string=None):
        name, value = values  # pyright: ignore[reportGeneralTypeIssues]  (type= gives a pair)
        given = dict(getattr(namespace, self.dest, None) or {})
        if name in given:
            parser.error(f"argument {option_string}: {name!r} is given twice")
        given[name] = value
        setattr(namespace, self.dest, given)


def flag_names(parser: argparse.ArgumentParser) -> dict[str, str]:
    """``{dest: flag}`` of ``parser``'s options (the longest ``--`` spelling of each)."""
    out = {}
    for action in parser._actions:
        flags = [s for s in action.option_strings if s.startswith("--")]
        if flags and action.dest != "help":
            out[action.dest] = max(flags, key=len)
    return out


# ---------------------------------------------------------------------------- checks
def same_file(a, b) -> bool:
    """Whether two paths name one file (an existing one, or the same absolute path)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def no_repeats(pairs: Iterable[tuple[str, float]], option: str) -> None:
    """Refuse a ``NAME=VALUE`` option that gives one name twice.

    Raises:
      UsageError: ``--lock: joint 'j1' is given twice``.
    """
    names = [name for name, _ in pairs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise UsageError(f"{option}: joint {dup[0]!r} is given twice")


def check_outputs(outputs: dict[str, str | None], inputs: dict[str, str], force: bool) -> None:
    """Refuse output paths that would overwrite an input, a folder or (without --force) a file.

    Args:
      outputs: option -> path (``None``: not given), e.g. ``{"--out": ..., "--report": ...}``.
      inputs: what -> path of the input files, e.g. ``{"MODEL": ..., "LOG": ...}``.
      force: ``--force``: an existing file may be replaced.

    Raises:
      UsageError: naming the option and the path.
    """
    for opt, p in outputs.items():
        if p is None:
            continue
        for what, inp in inputs.items():
            if same_file(p, inp):
                raise UsageError(f"{opt} {p}: that is the {what} file; choose another path")
        if Path(p).is_dir():
            raise UsageError(f"{opt} {p}: is a folder; give a file name")
        if Path(p).exists() and not force:
            raise UsageError(f"{opt} {p}: the file exists; pass --force to replace it")
        parent = Path(p).parent
        if not parent.is_dir():
            raise UsageError(f"{opt} {p}: the folder {parent} does not exist")
    given = [(opt, p) for opt, p in outputs.items() if p is not None]
    for i, (opt_a, a) in enumerate(given):
        for opt_b, b in given[i + 1 :]:
            if same_file(a, b):
                raise UsageError(f"{opt_a} and {opt_b} name the same file {a}")
