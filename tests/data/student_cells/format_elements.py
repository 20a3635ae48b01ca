# stresses: a list comprehension formatting every element (a scalar read per element,
# strings built from them).
# small: N=30
import numpy as np

N = 5_000
x = np.sqrt(np.arange(N, dtype=float))
lines = [f"{i}: {x[i]:.3f}" for i in range(N)]
report = "\n".join(lines[:5])
