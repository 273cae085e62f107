"""
How many clusters? The prior on partitions
==========================================

The Dirichlet process's concentration sets how readily new clusters open; a Gamma prior on
it lets the data choose, and a mixture of finite mixtures puts a prior on K itself.
"""

import matplotlib.pyplot as plt
import numpy as np

from dpclust import DPMixture, GammaPrior
from dpclust.datasets import make_gaussian_mixture

X, y = make_gaussian_mixture(n_samples=800, n_clusters=5, random_state=3)
fits = {
    "DP, alpha = 1": DPMixture(alpha=1.0, n_iter=300, random_state=0),
    "DP, alpha ~ Gamma(1, 1)": DPMixture(alpha=GammaPrior(1.0, 1.0), n_iter=300,
                                         random_state=0),
    "MFM, K - 1 ~ Poisson(1)": DPMixture(prior="mfm:1,poisson:1", n_iter=300, random_state=0),
}
fig, ax = plt.subplots(figsize=(8, 3.5))
for i, (name, est) in enumerate(fits.items()):
    est.fit(X)
    k = np.asarray(est.trace_.n_clusters)  # (n_chains, n_iter): one row per chain
    lines = ax.plot(k.T, lw=1, color=f"C{i}")
    lines[0].set_label(f"{name}: K = {est.n_clusters_}")
    print(f"{name}: point estimate K = {est.n_clusters_}")
ax.set_xlabel("iteration")
ax.set_ylabel("clusters")
ax.legend()
fig.tight_layout()
plt.show()
