# %%
import numpy as np
registry = []
# %% fuse
class Layer:
    bias = np.zeros(3)
    def __init__(self, w):
        self.w = w
        registry.append(self)
    def __call__(self, x):
        return np.tanh(self.w @ x + Layer.bias)
L = Layer(np.eye(3) * 0.5)
Layer.bias += 0.1
h = L(np.ones(3))
# %% fuse
class Layer:
    bias = np.zeros(3)
    def __init__(self, w):
        self.w = w
        registry.append(self)
    def __call__(self, x):
        return np.tanh(self.w @ x + Layer.bias)
L2 = Layer(np.eye(3) * 0.25)
h2 = L2(h)
# %%
print(len(registry), h2.round(10), registry[0].bias)
