"""The errors spatialjax raises on bad input, each naming the argument it is about.

Both carry ``argument`` and ``detail`` and print as ``"argument: detail"``; docs page
``conventions.md#errors``.
"""

from __future__ import annotations


class ArgumentError(ValueError):
    """A bad value, shape or range of one argument.

    Attributes:
      argument: the argument's name (``"q"``, ``"lowpass"``, ``"log"``).
      detail: what was expected and what was received, without the argument's name.

    Examples:
      >>> e = ArgumentError("dt", "expected a finite number > 0, got -1.0")
      >>> str(e), e.argument
      ('dt: expected a finite number > 0, got -1.0', 'dt')
    """

    def __init__(self, argument: str, detail: str):
        self.argument = argument
        self.detail = detail
        super().__init__(f"{argument}: {detail}")

    def __reduce__(self):
        return type(self), (self.argument, self.detail)


class ArgumentTypeError(TypeError):
    """An argument of the wrong kind or dtype (an integer array, a string for a number).

    Attributes:
      argument: the argument's name.
      detail: what was expected and what was received, without the argument's name.
    """

    def __init__(self, argument: str, detail: str):
        self.argument = argument
        self.detail = detail
        super().__init__(f"{argument}: {detail}")

    def __reduce__(self):
        return type(self), (self.argument, self.detail)


# shown as spatialjax.ArgumentError in tracebacks and reprs (the public name)
ArgumentError.__module__ = "spatialjax"
ArgumentTypeError.__module__ = "spatialjax"
