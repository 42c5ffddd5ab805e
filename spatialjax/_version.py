"""``spatialjax.__version__``, read once from the installed distribution's metadata.

The version is written in one place, ``pyproject.toml``; a source tree used
without installing it (``PYTHONPATH``) reports ``0+unknown``.
"""

from importlib import metadata

try:
    __version__: str = metadata.version("spatialjax")
except metadata.PackageNotFoundError:  # pragma: no cover - source tree not installed
    __version__ = "0+unknown"
