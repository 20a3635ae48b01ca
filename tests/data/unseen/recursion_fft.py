"""Recursion on arrays: a radix-2 FFT and a merge sort, compared with NumPy's."""
import numpy as np

def fft(x):
    n = len(x)
    if n == 1:
        return x.astype(complex)
    even = fft(x[0::2])
    odd = fft(x[1::2])
    tw = np.exp(-2j * np.pi * np.arange(n // 2) / n) * odd
    return np.concatenate([even + tw, even - tw])

def merge_sort(a):
    if a.size <= 1:
        return a.copy()
    m = a.size // 2
    l, r = merge_sort(a[:m]), merge_sort(a[m:])
    out = np.empty_like(a)
    i = j = k = 0
    while i < l.size and j < r.size:
        if l[i] <= r[j]:
            out[k] = l[i]; i += 1
        else:
            out[k] = r[j]; j += 1
        k += 1
    out[k:] = np.concatenate([l[i:], r[j:]])
    return out

sig = np.cos(np.arange(16) * 0.7) + 0.5 * np.sin(np.arange(16) * 2.1)
F = fft(sig)
ok = np.allclose(F, np.fft.fft(sig))
data = np.array([5.0, -1.0, 3.5, 3.5, 0.0, 9.0, -7.0, 2.0, 1.0])
sorted_ = merge_sort(data)
