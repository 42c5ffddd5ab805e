"""``import spatialjax`` pauses the garbage collector while it loads, and leaves it as it was."""

import subprocess
import sys

import pytest


@pytest.mark.parametrize("collector", ["enabled", "disabled"])
def test_import_leaves_the_collector_as_it_found_it(collector):
    code = "\n".join(
        [
            "import gc",
            "gc.disable()" if collector == "disabled" else "",
            "import spatialjax",
            "print(gc.isenabled(), hasattr(spatialjax, '_gc'))",
        ]
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.split() == [str(collector == "enabled"), "False"]
