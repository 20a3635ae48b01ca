# stresses: recursion (a Fibonacci of arrays: ~20,000 calls, each making a temporary).
# small: DEPTH=8
import numpy as np

DEPTH = 20
base = np.linspace(0.0, 1.0, 16)


def fib(k):
    if k < 2:
        return base * (k + 1)
    return fib(k - 1) + fib(k - 2) * 0.5


f = fib(DEPTH)
