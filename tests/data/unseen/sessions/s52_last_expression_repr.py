# %%
import numpy as np
from dataclasses import dataclass

@dataclass
class Stats:
    mean: float
    spread: np.ndarray
# %% fuse
data = np.array([[1.0, 2.0], [3.0, 5.0], [0.0, 1.0]])
st = Stats(data.mean(), data.max(axis=0) - data.min(axis=0))
st
# %%
print(st.spread * 2, type(st.mean).__name__)
