"""From notebook session s32_out_param: its cells as one script."""
import numpy as np
buf = np.full(8, -1.0)
acc = np.zeros(8)
a = np.linspace(0, 1, 8)
np.multiply(a, 3.0, out=buf)
np.add(acc, buf, out=acc)
np.sqrt(buf, out=buf)
np.clip(buf, 0.5, 1.5, out=buf)
both = acc + buf
