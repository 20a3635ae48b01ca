# Inviscid Burgers' equation with a Godunov flux: the time step comes from a CFL condition
# recomputed each step (a new float every step), fluxes with np.where/maximum/minimum,
# periodic boundaries by concatenation, and a total-variation history kept in a list
import numpy as np

nx = 400
x = np.linspace(0.0, 2.0 * np.pi, nx, endpoint=False)
dx = x[1] - x[0]
u = 1.5 + np.sin(x)
cfl = 0.45
t, t_end = 0.0, 0.25
tv = []
steps = 0


def godunov_flux(ul, ur):
    fl = 0.5 * ul ** 2
    fr = 0.5 * ur ** 2
    shock = ul > ur
    s = 0.5 * (ul + ur)
    f_shock = np.where(s > 0, fl, fr)
    f_rare = np.where(ul > 0, fl, np.where(ur < 0, fr, 0.0))
    return np.where(shock, f_shock, f_rare)


while t < t_end and steps < 500:
    dt = cfl * dx / np.max(np.abs(u))
    if t + dt > t_end:
        dt = t_end - t
    up = np.concatenate(([u[-1]], u, [u[0]]))
    f = godunov_flux(up[:-1], up[1:])
    u = u - dt / dx * (f[1:] - f[:-1])
    t += dt
    steps += 1
    tv.append(float(np.sum(np.abs(np.diff(u)))))

mass = u.sum() * dx
tv = np.array(tv)
monotone = bool(np.all(np.diff(tv) <= 1e-9))
