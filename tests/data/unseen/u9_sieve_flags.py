# A sieve of Eratosthenes on a bool array with strided slice assignment inside a Python loop
# that reads array elements as conditions, then prime gaps, twin primes and a prime-counting table
import numpy as np

N = 20000
is_p = np.ones(N + 1, dtype=bool)
is_p[:2] = False
i = 2
while i * i <= N:
    if is_p[i]:
        is_p[i * i::i] = False
    i += 1
primes = np.flatnonzero(is_p)
gaps = np.diff(primes)
twins = primes[:-1][gaps == 2]
pi_x = np.cumsum(is_p)
ratio = pi_x[1000::1000] / (np.arange(1000, N + 1, 1000) / np.log(np.arange(1000, N + 1, 1000)))
largest_gap = int(gaps.max())
where_gap = int(primes[np.argmax(gaps)])
