import os

from hypothesis import HealthCheck, settings

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
default = "ci" if os.environ.get("CI", "").lower() == "true" else "default"
settings.load_profile(os.environ.get("FUSIONLAB_HYPOTHESIS", default))

# the programs under tests/data are inputs, not test modules: --doctest-modules would import
# (run) each at collection, and some raise on purpose (a session cell failing half-way)
collect_ignore_glob = ["data/*"]
