"""Arrays through text and bytes: savetxt/loadtxt to StringIO, save/load to BytesIO, array2string, tobytes."""
import io
import numpy as np

x = np.linspace(0, 1, 6).reshape(2, 3) * 7
buf = io.StringIO()
np.savetxt(buf, x, fmt="%.4f")
text = buf.getvalue()
back = np.loadtxt(io.StringIO(text))
bio = io.BytesIO()
np.save(bio, x ** 2)
bio.seek(0)
loaded = np.load(bio)
s = np.array2string(x, precision=2)
raw = np.frombuffer((x * 2).tobytes(), dtype=np.float64).reshape(2, 3)
lst = (x + 1).tolist()
