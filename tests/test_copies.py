"""Block moves of identical rows' copies (dpclust.kernels.copies) against exact posteriors."""

import numpy as np
import pytest
import scipy.sparse as sp
from test_samplers_exact import gaussian_family, multinomial_family

from dpclust.exact import canonical_index, exact_posterior, partition_frequencies, total_variation
from split_chains import run_chain
from dpclust.priors import PitmanYor
from dpclust.samplers import GibbsSAMS, MixtureModel

# six points, three of them one row and two another: 203 partitions
X_GAUSS = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [1.2, 0.9], [1.2, 0.9], [2.6, 0.2]])
X_DOCS = np.array([[3, 0, 1, 0], [3, 0, 1, 0], [3, 0, 1, 0], [0, 1, 3, 2], [0, 1, 3, 2],
                   [1, 1, 1, 1]], dtype=float)
CASES = {"gaussian": (gaussian_family, X_GAUSS, lambda X: X),
         "multinomial": (multinomial_family, X_DOCS, sp.csr_matrix)}


def _model(family, prior=None):
    make, raw, prep = CASES[family]
    fam, X = make(raw), prep(raw)
    model = MixtureModel(fam, X, None, prior=prior)
    parts, exact = exact_posterior(fam, X, 1.0 if prior is None else prior)
    return model, parts, exact


def test_copies_are_the_groups_of_identical_rows():
    model, _, _ = _model("gaussian")
    rows, start = model.copies
    assert [sorted(rows[start[r]:start[r + 1]]) for r in range(len(start) - 1)] == \
        [[0, 1, 2], [3, 4]]
    distinct = X_GAUSS[[2, 3, 5]]
    assert MixtureModel(gaussian_family(distinct), distinct, None).copies is None


# 60,000 draws: TV noise about 0.016 (0.14 with the binomial factor dropped, 0.07 on the
# documents); the Gaussian cases are slow (15 s each)
@pytest.mark.parametrize("family,prior", [
    pytest.param("gaussian", None, marks=pytest.mark.slow), ("multinomial", None),
    pytest.param("gaussian", PitmanYor(discount=0.3, strength=0.8), marks=pytest.mark.slow)])
def test_the_move_alone_keeps_the_exact_posterior(family, prior):
    """Exact posterior draws, each moved by one round of block moves alone (no Gibbs
    sweep, no proposal for a wrong ratio to hide behind), are still exact posterior
    draws; and the moves do move them."""
    model, parts, exact = _model(family, prior)
    assert exact.max() < 0.6
    rng = np.random.default_rng(4)
    start = parts[rng.choice(len(parts), size=60_000, p=exact)]
    moves = GibbsSAMS(gibbs=None, n_proposals=0, copy_sweeps=2)
    alpha = 1.0 if prior is None else prior.alpha_start
    state = moves.init(rng, model, labels=start[0], alpha=alpha)
    moved = np.empty_like(start)
    for t, labels in enumerate(start):
        out, _ = moves.step(rng, state._replace(labels=labels, cache=None), model)
        moved[t] = out.labels
    changed = np.mean(canonical_index(start, parts) != canonical_index(moved, parts))
    assert changed > 0.05, changed
    tv_before = total_variation(partition_frequencies(start, parts), exact)
    tv = total_variation(partition_frequencies(moved, parts), exact)
    assert tv < 0.025 and tv < tv_before + 0.008, (tv, tv_before)


def test_gibbs_sams_with_the_moves_matches_the_exact_posterior():
    model, parts, exact = _model("multinomial")
    draws = run_chain(GibbsSAMS(copy_sweeps=2), model, np.random.default_rng(5), 40_000,
                      burn_in=200)
    assert total_variation(partition_frequencies(draws, parts), exact) < 0.02


def test_copy_sweeps_is_validated():
    with pytest.raises(ValueError, match="copy_sweeps"):
        GibbsSAMS(copy_sweeps=-1)
