"""Float to integer casts out of range (an image scaled without clipping), negative to unsigned, NaN to bool."""
import numpy as np

x = np.linspace(-2, 300, 40)
u8 = (x * 1.2).astype(np.uint8)
i8 = (x - 100).astype(np.int8)
u16 = (-x).astype(np.uint16)
i32 = (x * 1e7).astype(np.int32)
trunc = (x - 150.5).astype(np.int64)
f = np.where(x > 100, np.nan, x)
b = f.astype(bool)
back = u8.astype(np.float32) / 255
