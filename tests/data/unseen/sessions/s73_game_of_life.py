# %%
import numpy as np

def life_step(board):
    nbrs = sum(np.roll(np.roll(board, i, 0), j, 1)
               for i in (-1, 0, 1) for j in (-1, 0, 1) if (i, j) != (0, 0))
    return ((nbrs == 3) | (board & (nbrs == 2))).astype(board.dtype)
board = np.zeros((8, 8), dtype=int)
board[1, 2] = board[2, 3] = board[3, 1] = board[3, 2] = board[3, 3] = 1
# %% fuse
history = [board.sum()]
for _ in range(4):
    board = life_step(board)
    history.append(board.sum())
alive = np.argwhere(board)
# %%
print(history, alive.tolist())
