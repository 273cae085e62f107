"""
A table of mixed columns, with holes
====================================

Numbers, yes/no answers and categories in one table, with empty cells: ``family="auto"``
reads each column's kind, and the holes are integrated out, not filled in.
"""

import numpy as np
import pandas as pd

from dpclust import DPMixture
from dpclust.metrics import nmi

rng = np.random.default_rng(0)
group = rng.integers(0, 3, size=400)
df = pd.DataFrame({
    "age": rng.normal([30, 45, 60], 5)[group].round(),
    "income": rng.normal([20, 40, 35], 6)[group],
    "smoker": np.where(rng.random(400) < np.array([0.1, 0.5, 0.2])[group], "yes", "no"),
    "region": np.array(["north", "south", "east"])[(group + rng.integers(0, 2, 400)) % 3],
})
holes = rng.random(df.shape) < 0.15          # 15 % of the cells missing at random
df = df.mask(holes)
print(df.head())

model = DPMixture(family="auto", n_iter=200, random_state=0).fit(df)
print(model.family_.describe())
print(f"{model.n_clusters_} clusters, NMI against the generating groups "
      f"{nmi(model.labels_, group):.3f}")
