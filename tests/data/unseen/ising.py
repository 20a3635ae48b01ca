"""Ising model: checkerboard masks, rng draws, np.where flips, magnetisation per sweep."""
import numpy as np

rng = np.random.default_rng(42)
L = 8
spins = rng.choice(np.array([-1, 1], dtype=np.int64), size=(L, L))
ii, jj = np.indices((L, L))
black = (ii + jj) % 2 == 0
beta = 0.6
mags = []
for sweep in range(6):
    for mask in (black, ~black):
        nb = np.roll(spins, 1, 0) + np.roll(spins, -1, 0) + np.roll(spins, 1, 1) + np.roll(spins, -1, 1)
        dE = 2 * spins * nb
        accept = (dE <= 0) | (rng.random((L, L)) < np.exp(-beta * dE))
        spins = np.where(mask & accept, -spins, spins)
    mags.append(spins.mean())
energy = -(spins * (np.roll(spins, 1, 0) + np.roll(spins, 1, 1))).sum()
mags = np.array(mags)
