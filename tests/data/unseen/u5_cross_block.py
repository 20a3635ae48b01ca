"""Geometry: np.cross, np.block, np.c_, np.s_ and triangle normals."""
import numpy as np

pts = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]])
tris = np.array([[0, 1, 2], [0, 1, 3], [1, 2, 4], [0, 3, 4]])
e1 = pts[tris[:, 1]] - pts[tris[:, 0]]
e2 = pts[tris[:, 2]] - pts[tris[:, 0]]
n = np.cross(e1, e2)
area = 0.5 * np.linalg.norm(n, axis=1)
unit = n / np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-12)
A = np.eye(2) * 3
B = np.ones((2, 3))
M = np.block([[A, B], [B.T, np.zeros((3, 3))]])
cols = np.c_[area, area ** 2, np.arange(4)]
sl = np.s_[1:, ::2]
part = M[sl] * 2
M[sl] = part + 1
