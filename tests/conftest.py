import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# The suite's kernels compile into a cache of this checkout's own (git ignores it), shared by
# the test processes (pytest-xdist's workers, the notebooks' kernels, the CLI runs): a clean
# clone starts cold, as CI does, and the user's ~/.cache/fusionlab is not touched. The cache
# is safe across processes (test_kernel_cache.py); a test that needs a cold cache makes its own.
os.environ.setdefault("FUSIONLAB_CACHE", str(Path(__file__).resolve().parent.parent / ".test-cache"))

settings.register_profile(
    "default", deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", deadline=None, max_examples=600, suppress_health_check=[HealthCheck.too_slow]
)
# CI checks a submission with the same examples every time (a new finding shows up in a
# developer's run, whose seed is random, not as a failure nobody can reproduce at landing)
settings.register_profile(
    "ci", deadline=None, max_examples=60, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
# `make check`: the property tests at a small example count (each still runs its explicit examples)
settings.register_profile(
    "quick", deadline=None, max_examples=10, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
default = "ci" if os.environ.get("CI", "").lower() == "true" else "default"
settings.load_profile(os.environ.get("FUSIONLAB_HYPOTHESIS", default))

# the programs under tests/data are inputs, not test modules: --doctest-modules would import
# (run) each at collection, and some raise on purpose (a session cell failing half-way)
collect_ignore_glob = ["data/*"]


#: The quick tier (`make check`, docs/testing.md): files run whole, and single tests of the
#: files too slow to run whole (test names as pytest writes them, parameters included).
QUICK_FILES = frozenset()
QUICK_TESTS = frozenset()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "quick: part of the quick tier, `make check` (tests/conftest.py)")


@pytest.hookimpl(tryfirst=True)   # before pytest-xdist's own hook reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(str(item.fspath))
        if path.suffix == ".py" and path.parent.name == "browser":
            # one JupyterLab server and one browser per test run: every browser test in one process
            item.add_marker(pytest.mark.xdist_group("browser"))
        name = path.name
        if item.nodeid.startswith("fusionlab/") or name in QUICK_FILES or \
                f"{name}::{item.name}" in QUICK_TESTS:   # doctests: every module's examples
            item.add_marker(pytest.mark.quick)
