"""
How many clusters? A first fit
==============================

A Dirichlet-process mixture of Gaussians on the bundled demo data (1,500 points in 2-D from
six clusters): the number of clusters is not given, the posterior says it.
"""

import matplotlib.pyplot as plt
import numpy as np

from dpclust import DPMixture
from dpclust.datasets import load_demo
from dpclust.metrics import nmi

X, y = load_demo()
# 200 iterations of each of the four chains: a quick look.  DPMixture() alone runs them
# until they pass the convergence rule (about a minute here).
model = DPMixture(n_iter=200, random_state=0).fit(X)
print(f"clusters found: {model.n_clusters_}, NMI against the truth: {nmi(model.labels_, y):.3f}")

# %%
# The point estimate, and how sure the posterior is of each point (``certainty_``: the
# posterior probability that the point is with its cluster's other points).
fig, axes = plt.subplots(1, 2, figsize=(10, 4.5), sharex=True, sharey=True)
axes[0].scatter(X[:, 0], X[:, 1], c=model.labels_, s=6, cmap="tab10")
axes[0].set_title(f"point estimate: {model.n_clusters_} clusters")
sc = axes[1].scatter(X[:, 0], X[:, 1], c=model.certainty_, s=6, cmap="viridis", vmin=0, vmax=1)
axes[1].set_title("certainty of each point")
fig.colorbar(sc, ax=axes[1])
fig.tight_layout()

# %%
# The chains: the number of clusters along the iterations, one line per chain
# (``trace_.n_clusters`` is of shape (n_chains, n_iter)).
fig, ax = plt.subplots(figsize=(8, 3))
ax.plot(np.asarray(model.trace_.n_clusters).T, lw=1)
ax.set_xlabel("iteration")
ax.set_ylabel("clusters")
fig.tight_layout()
plt.show()
