# %%
import numpy as np
people = np.array([("ann", 31, 1.62), ("bob", 25, 1.80), ("cy", 31, 1.70)],
                  dtype=[("name", "U5"), ("age", "i4"), ("h", "f8")])
# %% fuse
people.sort(order=["age", "h"])
people["h"] *= 100
bmi_like = people["h"] / people["age"]
oldest = people[people["age"] == people["age"].max()]["name"]
rec = people[0]
# %%
print(people, bmi_like.round(6), oldest, rec["name"], type(rec).__name__)
