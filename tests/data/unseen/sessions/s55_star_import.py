# %%
from numpy import *
import numpy as np
# %% fuse
t = linspace(0, pi, 7)
y = sqrt(abs(sin(t))) + zeros(7)
m = mean(y)
s = sum(y)
mx = max(y)
# %%
print(round(float(m), 10), round(float(s), 10), mx, type(mx).__name__)
