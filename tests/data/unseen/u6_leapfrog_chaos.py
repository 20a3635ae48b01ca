"""A small star cluster by kick-drift-kick leapfrog: pairwise separations, softened inverse
cubes by a masked power, accelerations by matrix products, energy each step in a list."""
import numpy as np

rng = np.random.default_rng(5)
n, dt, soft = 20, 0.02, 0.08
mass = np.full((n, 1), 15.0 / n)
pos = rng.standard_normal((n, 3))
vel = 0.3 * rng.standard_normal((n, 3))
vel -= (mass * vel).sum(axis=0) / mass.sum()


def accelerations(pos):
    x, y, z = pos[:, 0:1], pos[:, 1:2], pos[:, 2:3]
    dx, dy, dz = x.T - x, y.T - y, z.T - z
    inv3 = dx ** 2 + dy ** 2 + dz ** 2 + soft ** 2
    inv3[inv3 > 0] = inv3[inv3 > 0] ** (-1.5)
    return np.hstack((dx * inv3 @ mass, dy * inv3 @ mass, dz * inv3 @ mass))


def kinetic(vel):
    return 0.5 * np.sum(mass * vel ** 2)


acc = accelerations(pos)
energy = [kinetic(vel)]
for step in range(50):
    vel += acc * dt / 2
    pos += vel * dt
    acc = accelerations(pos)
    vel += acc * dt / 2
    energy.append(kinetic(vel))
energy = np.array(energy)
centre = pos.mean(axis=0)
