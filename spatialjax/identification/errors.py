"""The identification's argument errors: ``IdentifyError(argument, detail)`` names the argument.

``argument`` is the Python keyword (``"lowpass"``, ``"validate[1]"``), ``detail`` the message
without it; another argument named in ``detail`` is written between backticks so that ``render``
shows each caller's own name for it (the command line's ``--lowpass``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import numpy as np

from .._errors import ArgumentError

#: A reference to another argument inside a detail: ```name```.
_REFERENCE = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`")

__all__ = ["IdentifyError", "IdentifyTypeError", "TooShortError", "positive"]


class IdentifyError(ArgumentError):
    """An input of the identification that cannot be used, naming the argument.

    A [spatialjax.ArgumentError][spatialjax.ArgumentError] (so a ``ValueError``) whose detail
    may name other arguments.

    Attributes:
      argument: the keyword (``"lowpass"``, ``"holdout"``, ``"log"``,
        ``"validate[1]"``, ``"prior"``, ...).
      detail: the message without the argument's name (other arguments it
        names as Python keywords).
      template: ``detail`` as given, other arguments between backticks.

    Examples:
      >>> e = IdentifyError("decimate", "5 without a low-pass would alias noise; give `lowpass`")
      >>> e.argument, str(e)
      ('decimate', 'decimate: 5 without a low-pass would alias noise; give lowpass')
      >>> e.render(lambda name: "--" + name)
      '--decimate: 5 without a low-pass would alias noise; give --lowpass'
    """

    def __init__(self, argument: str, detail: str):
        self.template = detail
        super().__init__(argument, _REFERENCE.sub(r"\1", detail))

    def __reduce__(self):
        return type(self), (self.argument, self.template)

    def render(self, name: Callable[[str], str]) -> str:
        """The message with every argument (its own and those it refers to) as ``name`` gives it."""
        detail = _REFERENCE.sub(lambda m: name(m.group(1)), self.template)
        return f"{name(self.argument)}: {detail}"

    def about(self, argument: str | None = None, *, context: str = "") -> IdentifyError:
        """The same error (same class) for another ``argument`` and/or with ``context`` appended."""
        detail = f"{self.template} {context}" if context else self.template
        cls = next(
            c for c in (IdentifyTypeError, TooShortError, IdentifyError) if isinstance(self, c)
        )
        return cls(self.argument if argument is None else argument, detail)


class IdentifyTypeError(IdentifyError, TypeError):
    """An argument of the wrong type (an ``IdentifyError`` and a ``TypeError``)."""


class TooShortError(IdentifyError):
    """A log (or a part of it) with too few samples for what is asked: the filter's edges."""


def positive(x, argument: str) -> float:
    """``x`` as a float: a real number (not a bool), finite and ``> 0``.

    Raises:
      IdentifyTypeError: ``x`` is not a number.
      IdentifyError: ``x`` is not finite or not positive.
    """
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)):
        raise IdentifyTypeError(argument, f"expected a number, got {type(x).__name__} {x!r}")
    if not (math.isfinite(x) and x > 0):
        raise IdentifyError(argument, f"expected a finite number > 0, got {x!r}")
    return float(x)
