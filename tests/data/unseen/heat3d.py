"""heat-3d with fresh arrays each step (allocations, no in-place)."""
import numpy as np

n, steps = 10, 4
A = np.fromfunction(lambda i, j, k: (i + j + (n - k)) * 10.0 / n, (n, n, n))
for t in range(steps):
    B = A.copy()
    B[1:-1, 1:-1, 1:-1] = (0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[:-2, 1:-1, 1:-1])
                           + 0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, :-2, 1:-1])
                           + 0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, 1:-1, :-2])
                           + A[1:-1, 1:-1, 1:-1])
    A = B
energy = float((A ** 2).sum())
centre = A[n // 2, n // 2, n // 2].item()
