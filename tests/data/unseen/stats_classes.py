"""A small class hierarchy with properties, __repr__ and operator overloading on ndarray fields."""
import numpy as np

class Vec:
    def __init__(self, data):
        self.data = np.asarray(data, dtype=float)
    def __add__(self, other):
        return Vec(self.data + (other.data if isinstance(other, Vec) else other))
    def __mul__(self, k):
        return Vec(self.data * k)
    __rmul__ = __mul__
    def __len__(self):
        return len(self.data)
    def __getitem__(self, i):
        return self.data[i]
    @property
    def norm(self):
        return float(np.sqrt((self.data ** 2).sum()))
    def __repr__(self):
        return f"Vec({np.round(self.data, 2).tolist()})"

class Unit(Vec):
    def __init__(self, data):
        super().__init__(data)
        self.data = self.data / self.norm

u = Unit([3.0, 4.0, 0.0])
w = 2 * u + Vec([1, 1, 1])
text = repr(w)
n = w.norm
items = [w[i] for i in range(len(w))]
arr = w.data
