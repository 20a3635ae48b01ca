"""int64 / uint64 mixing and overflow: the promotions a user stumbles on."""
import numpy as np

u = np.arange(10, dtype=np.uint64)
i = np.arange(-5, 5, dtype=np.int64)
mixed = u + i                      # float64 under NumPy's rules
uu = u * np.uint64(3)
big = np.array([2**62, 2**62], dtype=np.int64)
with np.errstate(over="ignore"):
    wrapped = big * 2
u8 = np.arange(250, 256, dtype=np.uint8)
u8w = u8 + np.uint8(10)
i8 = np.array([-128, 127], dtype=np.int8)
i8n = -i8
i8a = np.abs(i8)
u32 = np.arange(5, dtype=np.uint32) - np.uint32(2)
ushift = u >> np.uint64(1)
sum_u8 = u8.sum()
sum_u8_dtype = u8.sum(dtype=np.uint8)
mean_u8 = u8.mean()
