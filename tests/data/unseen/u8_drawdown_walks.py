# Random walks of prices: log-returns, cumulative sums, running maxima with
# maximum.accumulate, drawdowns, and per-walk statistics picked with argmax and fancy indexing
import numpy as np

rng = np.random.default_rng(11)
walks, days = 200, 750
rets = rng.normal(0.0003, 0.012, size=(walks, days))
rets[:, 0] = 0.0
logp = np.cumsum(rets, axis=1)
prices = 100.0 * np.exp(logp)
peak = np.maximum.accumulate(prices, axis=1)
dd = prices / peak - 1.0
worst = dd.min(axis=1)
worst_day = dd.argmin(axis=1)
peak_day = np.array([np.argmax(prices[i, : worst_day[i] + 1]) for i in range(walks)])
recovered = np.zeros(walks, dtype=bool)
for i in range(walks):
    after = prices[i, worst_day[i]:]
    recovered[i] = bool((after >= peak[i, worst_day[i]]).any())
sharpe = rets.mean(axis=1) / rets.std(axis=1, ddof=1) * np.sqrt(252)
top = np.argsort(sharpe)[-5:][::-1]
summary = {"worst": float(worst.min()), "recovered": int(recovered.sum()), "top": top.tolist()}
