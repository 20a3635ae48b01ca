"""try/finally restoring print options and error state; exceptions caught inside a loop."""
import numpy as np

old = np.get_printoptions()
try:
    np.set_printoptions(precision=3, suppress=True)
    text = np.array2string(np.array([1.23456, 1e-9, 100.0]) * 2)
    fmt = f"{np.float64(2.0 / 3):.4f} | {np.array([1.5, 2.5])}"
finally:
    np.set_printoptions(**old)
after = np.array2string(np.linspace(0, 1, 3), separator=", ")
results = []
errors = 0
for k in range(-2, 3):
    try:
        m = np.array([[1.0, k], [k, 4.0]])
        if k == 2:
            raise np.linalg.LinAlgError("singular")
        results.append(np.linalg.solve(m, np.ones(2)))
    except np.linalg.LinAlgError:
        errors += 1
        continue
stack = np.vstack(results)
