# %%
import numpy as np

class Account:
    def __init__(self, balance):
        self.__balance = np.asarray(balance, dtype=float)

    def apply(self, rates):
        self.__balance = self.__balance * (1 + rates)
        return self.__balance.sum()

ns_made = {}
exec("import numpy as np\ndef made(v):\n    return np.cumsum(v) * 2\n", ns_made)
made = ns_made["made"]
# %% fuse
acct = Account([100.0, 250.0, 40.0])
total = acct.apply(np.array([0.01, 0.02, -0.5]))
again = acct.apply(np.full(3, 0.1))
cs = made(np.arange(5.0))
# %%
print(round(float(total), 10), round(float(again), 10), cs)
