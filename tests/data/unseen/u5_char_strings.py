"""np.char on string arrays, astype(str), bytes arrays, and numbers parsed from text."""
import numpy as np

names = np.array(["alpha", "Beta", "gamma ", " delta"])
clean = np.char.strip(np.char.lower(names))
caps = np.char.capitalize(clean)
lens = np.char.str_len(clean)
has_a = np.char.find(clean, "a") >= 0
joined = np.char.add(caps, "!")
nums = np.array(["1.5", "2.25", "-3", "4e2"])
vals = nums.astype(float) * 2
back = (vals / 2).astype(str)
code = np.array([b"ab", b"cd"], dtype="S2")
up = np.char.upper(code)
ints = np.arange(5).astype(str)
label = np.char.zfill(ints, 3)
weights = lens * vals[: len(lens)]
