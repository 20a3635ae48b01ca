"""Physics: periodic Laplacian with np.roll, meshgrid fields, complex plane waves."""
import numpy as np

n = 16
x = np.linspace(0, 2 * np.pi, n, endpoint=False)
X, Y = np.meshgrid(x, x, indexing="ij")
u = np.sin(X) * np.cos(2 * Y)
dx = x[1] - x[0]
for step in range(10):
    lap = (np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1) + np.roll(u, -1, 1) - 4 * u) / dx**2
    u = u + 0.01 * lap
wave = np.exp(1j * (3 * X - 2 * Y))
phase = np.angle(wave)
re_part = wave.real.sum()
amp = np.abs(wave * np.conj(wave))
kx = np.fft.fftfreq(n, d=dx) * 2 * np.pi
uh = np.fft.fft2(u)
smooth = np.fft.ifft2(uh * np.exp(-0.1 * (kx[:, None] ** 2 + kx[None, :] ** 2))).real
total = u.sum()
