"""The notebooks run with the slow checks (`pytest -m slow`, the second step of `.ci/run`).

nbmake collects each notebook as one item, which no decorator can mark: this hook marks them
`slow` before `-m` selects (it runs first), so `pytest -m "not slow"` leaves them out.
"""

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.path.suffix == ".ipynb":
            item.add_marker(pytest.mark.slow)
