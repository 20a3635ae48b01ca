"""Particle deposit (cloud-in-cell) with np.add.at and np.bincount(weights), repeated indices."""
import numpy as np

rng = np.random.default_rng(3)
n_cells = 10
pos = rng.random(50) * n_cells
mass = rng.random(50) + 0.5
left = np.floor(pos).astype(np.intp)
frac = pos - left
rho = np.zeros(n_cells)
np.add.at(rho, left, mass * (1 - frac))
np.add.at(rho, (left + 1) % n_cells, mass * frac)
rho2 = np.bincount(left, weights=mass * (1 - frac), minlength=n_cells) \
    + np.bincount((left + 1) % n_cells, weights=mass * frac, minlength=n_cells)
counts = np.zeros(n_cells, dtype=int)
counts[left] += 1          # repeated indices: only one increment each
counts2 = np.bincount(left, minlength=n_cells)
total = rho.sum()
same = np.allclose(rho, rho2)
