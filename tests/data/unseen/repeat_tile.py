"""np.repeat / np.tile / concatenate / stack / split in loops; list-of-arrays accumulation."""
import numpy as np

base = np.arange(4.0)
rep = np.repeat(base, 3)
rep2 = np.repeat(base.reshape(2, 2), [1, 2], axis=0)
til = np.tile(base, (2, 3))
chunks = []
for k in range(5):
    chunks.append(base * k + np.sin(base))
stacked = np.stack(chunks)
cat = np.concatenate(chunks)
vs = np.vstack(chunks[:2])
hs = np.hstack([c[:2] for c in chunks])
parts = np.split(cat, 4)
sums = [p.sum() for p in parts]
halves = np.array_split(np.arange(7), 3)
col = np.column_stack([base, base ** 2])
acc = np.zeros(4)
for p in parts:
    acc = acc + p[:4] if p.size >= 4 else acc
dstk = np.dstack([base, base]).shape
