"""Raw buffers: memoryview of an array written through, np.frombuffer of a bytearray, struct packing of values."""
import struct
import numpy as np

a = np.arange(8.0) * 0.5
mv = memoryview(a)
mv[2] = 100.0
view2 = np.asarray(mv)[::2]
shape_info = (mv.format, mv.itemsize, mv.nbytes, mv.shape)
ba = bytearray(np.arange(4, dtype=np.int32).tobytes())
ints = np.frombuffer(ba, dtype=np.int32)
ba[0] = 9
packed = struct.pack("3d", *a[:3])
unpacked = np.array(struct.unpack("3d", packed)) * 2
scaled = a * 3 + ints.sum()
