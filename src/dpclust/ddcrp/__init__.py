"""The distance dependent Chinese restaurant process (Blei & Frazier 2010).

* decays :class:`Window`, :class:`Exponential`, :class:`Logistic` and :class:`Constant`
  (the ordinary CRP when sequential);
* :func:`link_candidates`: who may link to whom, from distances or positions;
* :func:`sample_prior`: draws of links and tables from the prior;
* :class:`DDCRPGibbs`: the customer-assignment Gibbs sampler for mixtures;
* :class:`DDCRPMixture` and :class:`DDCRPLanguageModel`: the estimators of mixtures and of
  the fully observed language model (:mod:`dpclust.ddcrp.language`), which live in
  :mod:`dpclust.estimators.ddcrp`;
* :func:`log_evidence` and :func:`bayes_factor`: marginal likelihoods of sequential models
  and Bayes factors of a decay against the ordinary CRP (:mod:`dpclust.estimators.evidence`).

The user guide's Mathematics page (§4) has the mathematics.
"""

from .decay import Constant, Decay, Exponential, Logistic, Window, parse_decay
from .distances import LinkCandidates, link_candidates
from .prior import PriorDraws, draw_links, links_to_labels, sample_prior
from .language import LanguageGibbs, LanguageTarget, WordBase
from .sampler import DDCRPGibbs, DDCRPModel, DDCRPState

__all__ = [
           "BayesFactor",
           "Constant",
           "DDCRPLanguageModel",
           "DDCRPMixture",
           "DDCRPGibbs",
           "DDCRPModel",
           "DDCRPState",
           "Decay",
           "Evidence",
           "Exponential",
           "LanguageGibbs",
           "LanguageTarget",
           "LinkCandidates",
           "Logistic",
           "PriorDraws",
           "Window",
           "WordBase",
           "bayes_factor",
           "draw_links",
           "link_candidates",
           "links_to_labels",
           "log_evidence",
           "parse_decay",
           "sample_prior",
]


def __getattr__(name):
    # the estimators and the evidence moved up to dpclust.estimators, which builds on this
    # package: the old names load them on first use
    if name in ("DDCRPMixture", "DDCRPLanguageModel"):
        from ..estimators import ddcrp
        return getattr(ddcrp, name)
    if name in ("BayesFactor", "Evidence", "bayes_factor", "log_evidence"):
        from ..estimators import evidence
        return getattr(evidence, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
