"""
Reading convergence: several chains, R-hat and ESS
==================================================

Four chains on the same data, run in parallel processes.  dpclust checks R-hat and the
effective sample sizes of the log-likelihood, the number of clusters and the entropy of the
cluster sizes (Vehtari et al. 2021), and the chains go to ArviZ for anything else.
"""

import arviz as az
import matplotlib.pyplot as plt

from dpclust import DPMixture
from dpclust.datasets import make_gaussian_mixture

X, y = make_gaussian_mixture(n_samples=600, n_clusters=4, random_state=1)
# n_iter with max_iter: after n_iter, go on by as much as the smallest effective sample
# size needs (1.5 to 2 times the run, judged every fifth of the way) until the rule
# passes, or max_iter is spent
model = DPMixture(n_chains=4, n_iter=300, max_iter=1200, random_state=0).fit(X)
print(f"{model.n_iter_} iterations a chain, K = {model.n_clusters_}")

verdict = model.convergence_
print("converged:", verdict["converged"], "| failing:", verdict["failing"])
for name in ("log_likelihood", "n_clusters", "size_entropy"):
    q = verdict[name]
    print(f"{name:>13}: R-hat {q['rhat']:.3f}, bulk ESS {q['ess_bulk']:.0f}, "
          f"tail ESS {q['ess_tail']:.0f} (all chains; the rule asks 100 a chain)")

# %%
# A verdict that fails names the quantities and what to do (more iterations, or a sampler
# with split-merge moves).  The four chains' traces of K and the log-likelihood, with ArviZ:
# chains that agree overlap.
# (K is in ``idata.posterior``; the log-likelihood, a statistic of each draw, in
# ``idata.sample_stats``)
idata = model.to_arviz()
az.plot_trace(idata.posterior[["n_clusters"]].merge(
    idata.sample_stats[["total_log_likelihood"]]), compact=False, figsize=(10, 5))
plt.tight_layout()
plt.show()
