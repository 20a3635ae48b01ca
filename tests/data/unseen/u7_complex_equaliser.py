# A constant-modulus blind equaliser in complex64: each output sample is a reduction (a
# NumPy scalar) fed back into the taps through abs() and products on scalars
import numpy as np

rng = np.random.default_rng(3)
symbols = np.array([1 + 1j, -1 + 1j, -1 - 1j, 1 - 1j], dtype=np.complex64) / np.float32(np.sqrt(2))
sent = symbols[rng.integers(0, 4, 400)]
received = (sent + 0.05 * (rng.standard_normal(400) + 1j * rng.standard_normal(400))).astype(np.complex64)
taps = np.zeros(11, dtype=np.complex64)
taps[5] = 1
radius = np.float32(1.0)
step = np.float32(2e-3)
errors = np.zeros(380, dtype=np.complex64)
for k in range(380):
    window = received[k:k + 11]
    y = np.sum(np.conj(taps) * window)
    e = (radius - abs(y) ** 2) * y
    errors[k] = e
    taps += step * np.conj(e) * window
mse = float(np.mean(np.abs(errors[-100:]) ** 2))
