"""np.vectorize with otypes and signature, np.frompyfunc returning object arrays."""
import math
import numpy as np

def collatz_len(n):
    c = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        c += 1
    return c

vlen = np.vectorize(collatz_len, otypes=[np.int64])
lengths = vlen(np.arange(1, 15))
vgamma = np.vectorize(math.gamma)
g = vgamma(np.linspace(0.5, 4, 8))
pairdot = np.vectorize(lambda a, b: float(a @ b), signature="(n),(n)->()")
dots = pairdot(np.ones((3, 4)), np.arange(12.0).reshape(3, 4))
fact = np.frompyfunc(math.factorial, 1, 1)
facts = fact(np.arange(8))
facts_f = facts.astype(float)
