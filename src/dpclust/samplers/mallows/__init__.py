"""Samplers for Dirichlet process mixtures of Generalized Mallows models (Meilă & Chen 2010).

Both keep each cluster's central ranking ``sigma`` and dispersions ``theta`` in the state and
alternate assignments with cluster updates:

* :class:`SliceGibbs` (the paper's Figure 1): assignments given ``(sigma, theta)`` (Neal's
  algorithm 2, the new-cluster term ``alpha (n - t)! / n!`` of Lemma 1, a new cluster's
  parameters an exact draw given its one ranking), then ``n_gibbs`` rounds of sigma | theta
  and ``n_slices`` slice-sampling steps of each theta_j | sigma.  With ``sigma_step="mh"``
  (the default) every step leaves the posterior invariant: it is exact MCMC.
* :class:`BetaGibbs` (the paper's Figure 5): theta integrated out of the assignments and
  drawn for sigma's update with the Beta approximations of the n → ∞ limit (Lemma 4), new
  clusters' sigma by Sample-σ-N1.  **Approximate**: its stationary distribution is not the
  posterior (close when the number of items is large); it is the faster of the two.

The sigma | theta step: the paper's stagewise draw (Lemma 2) is exact only when the later
stages' normalisers do not depend on the earlier choices, which fails in general (Mathematics
§5 gives a 4-item case at total variation 0.17).  ``sigma_step="mh"`` uses it as an
independence proposal in a Metropolis-Hastings step, which is exact and costs one more pass
over the stages, followed by a scan of Metropolis swaps of neighbouring items (O(1) each,
exact): with hundreds of items the independence proposal is accepted rarely (about 1 % of
rounds on 533 items), and the swaps keep sigma moving.  ``sigma_step="stagewise"`` takes the
draw as it is, as in the paper.

Speed.  The assignments given ``(sigma, theta)`` use the clusters' parameters of the start of
the sweep, so when rankings repeat (ballots: 10,230 distinct among the 29,988 Dublin West
ballots) Slice-Gibbs scores each distinct ranking against every cluster once per sweep, in
parallel (:func:`dpclust.kernels.mallows.score_table`), and only a cluster opened
during the sweep is scored ranking by ranking.  The cluster updates are independent given
the rankings and run in parallel, each cluster on its own random stream, and a large
cluster's rounds read per-rank count tables instead of its rankings.  Neither changes the
kernel, and the chain is the same on any number of threads.

Moves on whole clusters, off by default, are exact for both samplers:

* split-merge moves (``split_merge=M``: M proposals per iteration), which draw the
  allocation of a split first and the parameters given it (:mod:`.split_merge`, with the
  derivation of their ratio);
* birth and death of components (``birth_death=M``), which draw the parameters first and
  the allocation from its conditional given them (:mod:`.birth_death`, with what they
  achieve on real ballots).

The package: :mod:`.step` holds the state and the iteration both samplers share (the
assignment sweep, the moves, the cluster updates, alpha); :mod:`.slice_gibbs` and
:mod:`.beta_gibbs` their assignment sweeps; :mod:`.likelihood` the state's density; the
compiled loops are in :mod:`dpclust.kernels.mallows`.

References
----------
Meilă, M. & Chen, H. (2010). Dirichlet process mixtures of generalized Mallows models. UAI.
Neal, R. M. (2000). Markov chain sampling methods for Dirichlet process mixture models.
Neal, R. M. (2003). Slice sampling. Annals of Statistics 31(3).
"""

# checkpoints name their classes ``module:qualname`` and those written before the package
# was split name ``dpclust.samplers.mallows``: the state and sampler classes stay importable
# here (and the moves, which the tests patch)
from .beta_gibbs import BetaGibbs
from .birth_death import _BirthDeath
from .likelihood import instantiated_log_joint, instantiated_log_likelihood
from .slice_gibbs import SliceGibbs
from .split_merge import _SplitMerge
from .step import MallowsInfo, MallowsState

__all__ = ["BetaGibbs", "MallowsInfo", "MallowsState", "SliceGibbs", "instantiated_log_joint",
           "instantiated_log_likelihood"]
