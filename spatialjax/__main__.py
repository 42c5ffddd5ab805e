"""``python -m spatialjax``: the same command line as the ``spatialjax`` script."""

import sys

from ._cli import command

if __name__ == "__main__":
    sys.exit(command())
