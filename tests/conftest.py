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
QUICK_FILES = frozenset({
    # the IR, the graph, the partitions and the costs
    "test_bytecode.py", "test_compile_log.py", "test_wsp.py", "test_partition.py", "test_costs.py", "test_budget.py", "test_ilp_tighten.py",
    "test_robinson_ilp.py", "test_merge_decision.py", "test_exact_share.py", "test_contraction_rules.py",
    "test_contraction_view.py", "test_capabilities.py",
    # capture
    "test_capture.py", "test_capture_budget.py", "test_capture_names.py", "test_capture_golden.py",
    "test_capture_cached.py", "test_capture_close.py", "test_capture_session.py", "test_listed_assignment.py",
    "test_unrecorded_dtypes.py", "test_method_signatures.py", "test_global_draws.py", "test_batch_cut.py",
    "test_workload_capture.py", "test_workloads.py", "test_unseen_sessions.py", "test_unseen5.py",
    # running, checking, the sizes recorded from the data
    "test_recorded_sizes.py", "test_check.py", "test_scalar_math.py", "test_compile_budget.py", "test_free_cores.py",
    # the front ends: the CLI, the magic, the report, the explorer, sweeps, the extension's build, the docs
    "test_cli.py", "test_jupyter.py", "test_progressive.py", "test_explorer_budget.py", "test_report.py",
    "test_sweep.py", "test_extension.py", "test_docs.py", "test_notices.py", "test_palette.py", "test_waterfall.py",
    # one browser test (the lab and the browser start once)
    "test_exact_share_browser.py",
})
QUICK_TESTS = frozenset({
    # one notebook
    "test_notebooks.py::test_runs_and_shows_the_report[03-algorithms]",
    "test_notebooks.py::test_every_fusionlab_import_in_the_notebooks_and_benchmarks_resolves",
    # the kernels, the driver and the kernel cache
    "test_numba.py::test_compare_has_numpy_first_and_a_row_per_choice",
    "test_numba.py::test_lent_draws_are_never_copied",
    "test_numba.py::test_a_block_numba_rejects_falls_back_with_a_warning",
    "test_driver.py::test_thread_count_and_schedule_never_change_results[2-4]",
    "test_kernel_cache.py::test_a_cached_driver_runs_in_a_process_whose_pool_was_never_started[python]",
    "test_scans.py::test_scans_with_their_maps_equal_numpy[ADD_ACCUMULATE-float64-(10000,)-axis0]",
    "test_gather.py::test_gather_instruction_rules",
    "test_hof.py::test_every_fusion_rule_preserves_the_value",
    "test_timemodel.py::test_monotone_on_workloads[softmax]",
    # property tests (the quick profile: 10 examples each)
    "test_agreement_random.py::test_random_combinator_programs_agree_under_every_algorithm",
    "test_filters.py::test_random_filter_programs_equal_numpy_under_every_algorithm",
    "test_deadbases.py::test_random_loops_with_a_sync_per_iteration_equal_plain_numpy",
})


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "quick: part of the quick tier, `make check` (tests/conftest.py)")
    config.addinivalue_line("markers", "bounds_checked: kernels made by the test (its default KernelCache, the "
                            "processes it starts) compile bounds-checked (tests/kernels.py)")
    if os.environ.get("FUSIONLAB_COMPILE_LOG"):   # where the time goes to Numba (tests/compile_log.py)
        from compile_log import install_from_environment
        install_from_environment()


@pytest.fixture(autouse=True)
def _bounds_checked_kernels(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """``FUSIONLAB_BOUNDSCHECK=1`` while a test marked ``bounds_checked`` runs: every
    KernelCache it makes by default, and every process it starts, compiles bounds-checked."""
    if request.node.get_closest_marker("bounds_checked") is not None:
        monkeypatch.setenv("FUSIONLAB_BOUNDSCHECK", "1")


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
