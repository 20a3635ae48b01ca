# PageRank by power iteration on a dense adjacency matrix: out-degree normalisation with
# np.divide(where=, out=), dangling nodes, a while loop on an L1 change, and the ranking
import numpy as np

rng = np.random.default_rng(2)
n = 150
adj = (rng.random((n, n)) < 0.04).astype(np.float64)
np.fill_diagonal(adj, 0.0)
adj[7, :] = 0.0          # a dangling page
outdeg = adj.sum(axis=1)
P = np.zeros_like(adj)
np.divide(adj, outdeg[:, None], out=P, where=outdeg[:, None] > 0)
dangling = outdeg == 0
d = 0.85
r = np.full(n, 1.0 / n)
it = 0
delta = 1.0
while delta > 1e-12 and it < 200:
    r_new = d * (r @ P) + d * r[dangling].sum() / n + (1 - d) / n
    delta = np.abs(r_new - r).sum()
    r = r_new
    it += 1
order = np.argsort(-r, kind="stable")[:10]
total = r.sum()
