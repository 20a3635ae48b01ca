"""From notebook session s14_recarray: its cells as one script."""
import numpy as np
names = np.array(["ana", "bo", "cy", "dee"])
ages = np.array([23, 35, 41, 19])
heights = np.array([1.62, 1.80, 1.75, 1.58])
people = np.rec.fromarrays([names, ages, heights], names="name,age,height")
older = people[people.age > 20]
bmi_like = people.height * 10 + people.age / 10
mean_age = people.age.mean()
