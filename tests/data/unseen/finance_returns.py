"""Finance notebook: log returns, rolling means via cumsum differences, drawdowns, Sharpe."""
import numpy as np

rng = np.random.default_rng(7)
prices = 100 * np.exp(np.cumsum(rng.normal(0.0005, 0.01, size=120)))
rets = prices[1:] / prices[:-1] - 1
logret = np.diff(np.log(prices))
w = 10
cs = np.cumsum(np.insert(prices, 0, 0.0))
rolling = (cs[w:] - cs[:-w]) / w
peak = np.maximum.accumulate(prices)
drawdown = prices / peak - 1
max_dd = drawdown.min()
sharpe = np.sqrt(252) * rets.mean() / rets.std(ddof=1)
signal = np.where(prices[w - 1:] > rolling, 1, -1)
pnl = (signal[:-1] * rets[w - 1:]).cumsum()
wins = int((rets > 0).sum())
vol = np.sqrt((logret ** 2).sum() / (len(logret) - 1))
