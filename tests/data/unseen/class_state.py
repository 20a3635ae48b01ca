"""Classes with array attributes updated in methods (a particle system, an optimiser)."""
import numpy as np

class Particles:
    def __init__(self, n, seed):
        rng = np.random.default_rng(seed)
        self.pos = rng.random((n, 2))
        self.vel = np.zeros((n, 2))
        self.steps = 0

    def step(self, dt):
        centre = self.pos.mean(axis=0)
        self.vel += dt * (centre - self.pos)
        self.pos += dt * self.vel
        self.steps += 1

    def spread(self):
        return np.sqrt(((self.pos - self.pos.mean(axis=0)) ** 2).sum(axis=1)).mean()

class Momentum:
    def __init__(self, shape, lr=0.1, beta=0.9):
        self.v = np.zeros(shape)
        self.lr, self.beta = lr, beta

    def update(self, w, g):
        self.v = self.beta * self.v + g
        w -= self.lr * self.v
        return w

ps = Particles(20, 1)
for _ in range(5):
    ps.step(0.1)
spread = ps.spread()
opt = Momentum(3)
w = np.array([1.0, -2.0, 3.0])
for _ in range(10):
    w = opt.update(w, 2 * w)
