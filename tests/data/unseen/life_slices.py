"""Cellular automaton with padded slices (no wrap) on bool arrays, and a 1-D rule-30 automaton."""
import numpy as np

board = np.zeros((10, 10), dtype=bool)
board[1, 2] = board[2, 3] = board[3, 1] = board[3, 2] = board[3, 3] = True
for _ in range(6):
    p = np.pad(board, 1).astype(np.uint8)
    n = (p[:-2, :-2] + p[:-2, 1:-1] + p[:-2, 2:] + p[1:-1, :-2] + p[1:-1, 2:]
         + p[2:, :-2] + p[2:, 1:-1] + p[2:, 2:])
    board = (n == 3) | (board & (n == 2))
cells = np.argwhere(board)
row = np.zeros(31, dtype=np.int8)
row[15] = 1
rows = [row]
for _ in range(12):
    l, c, r = np.roll(row, 1), row, np.roll(row, -1)
    row = (l ^ (c | r)).astype(np.int8)
    rows.append(row)
tri = np.vstack(rows)
