"""RK4 integrator of a Lotka-Volterra system: a function returning tuples of arrays."""
import numpy as np

def rhs(x, y, a=1.1, b=0.4, c=0.4, d=0.1):
    return a * x - b * x * y, d * x * y - c * y

def rk4(x, y, h):
    k1x, k1y = rhs(x, y)
    k2x, k2y = rhs(x + h / 2 * k1x, y + h / 2 * k1y)
    k3x, k3y = rhs(x + h / 2 * k2x, y + h / 2 * k2y)
    k4x, k4y = rhs(x + h * k3x, y + h * k3y)
    return (x + h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x),
            y + h / 6 * (k1y + 2 * k2y + 2 * k3y + k4y))

x = np.linspace(5, 15, 6)
y = np.full(6, 5.0)
traj = [(x, y)]
for step in range(40):
    x, y = rk4(x, y, 0.05)
    traj.append((x, y))
xs = np.array([t[0] for t in traj])
peak = xs.max(axis=0)
