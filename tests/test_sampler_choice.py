"""The sampler is chosen in one place (``dpclust.samplers.choose_sampler``), recorded on the
fitted estimator as ``sampler_``, and read from there by the summary; each sampler
describes itself (the command line's help and the docs' table)."""

from pathlib import Path

import numpy as np
import pytest

from dpclust import DPMixture
from dpclust.families import DiagonalGaussian, DirichletMultinomial, NormalInverseWishart, PlackettLuce
from dpclust.priors import get_prior
from dpclust.samplers import (SAMPLERS, choose_sampler, describe_samplers, get_sampler,
                              is_exact_for)

DOCS = Path(__file__).resolve().parents[1] / "docs" / "user_guide" / "choosing.md"
GAUSS = NormalInverseWishart()
DP, FINITE, PY = get_prior(None), get_prior("finite:10"), get_prior("pitman-yor:0.3,1")


@pytest.mark.parametrize("n, family, prior, where, coarsened, name", [
    (1000, GAUSS, DP, "local", False, "gibbs+sams"),
    (1000, DiagonalGaussian(), DP, "local", False, "gibbs+sams"),
    (5000, GAUSS, DP, "local", False, "subcluster"),
    (1000, DirichletMultinomial(), DP, "local", False, "gibbs+sams"),
    (1000, GAUSS, PY, "local", False, "gibbs+sams"),
    (9000, GAUSS, FINITE, "local", False, "fsd"),
    (9000, GAUSS, PY, "local", False, "subcluster"),
    (1000, GAUSS, DP, "partitions", False, "subcluster"),
    (1000, GAUSS, DP, "dask", False, "subcluster"),
    (1000, PlackettLuce(), FINITE, "local", True, "coarsened"),
])
def test_auto_is_decided_by_one_function(n, family, prior, where, coarsened, name):
    choice = choose_sampler("auto", n, family, prior, where=where, coarsened=coarsened)
    assert choice.name == name and choice.label == f"auto ({name})"
    assert choice.requested == "auto" and choice.reason.startswith("auto")
    assert choice.exact


@pytest.mark.parametrize("request_, kwargs, message", [
    ("gibbs", dict(coarsened=True), "fitted by the 'coarsened' sampler"),
    ("auto", dict(coarsened=True, where="dask"), "coarsening runs in-process"),
    ("gibbs", dict(where="partitions"), "are for the sub-cluster sampler"),
    ("beta-gibbs", dict(prior=PY), "fits the dp prior, not the Pitman"),
    ("no-such", {}, "unknown sampler 'no-such'"),
    ("auto", dict(where="cloud"), "where must be one of"),
])
def test_a_sampler_that_cannot_run_the_model_is_refused(request_, kwargs, message):
    kwargs = {"prior": FINITE if kwargs.get("coarsened") else DP, **kwargs}
    with pytest.raises(ValueError, match=message):
        choose_sampler(request_, 1000, GAUSS, **kwargs)


def test_exactness_is_the_samplers_declaration():
    assert is_exact_for(get_sampler("fsd"), FINITE)
    assert not is_exact_for(get_sampler("fsd"), DP)
    assert not is_exact_for(get_sampler("beta-gibbs"), DP)
    assert not is_exact_for(get_sampler("subcluster-approx"), DP)
    assert get_sampler("subcluster-approx").name == "subcluster-approx"
    assert get_sampler("subcluster-exact").name == "subcluster"
    assert not choose_sampler("fsd", 100, GAUSS, DP).exact
    assert choose_sampler("fsd", 100, GAUSS, FINITE).exact


def test_the_fitted_estimator_and_its_summary_name_the_sampler_that_ran():
    from dpclust.estimators.summary import run_summary

    X = np.random.default_rng(0).normal(size=(1000, 2))
    X[:500] += 6.0
    with pytest.warns(UserWarning, match="not converged"):
        m = DPMixture(partitions=2, n_iter=10, burn_in=5, n_chains=1, random_state=0).fit(X)
    assert m.sampler_ == "subcluster"  # partitions run the sub-cluster sampler below 5,000
    settings = run_summary(m, data={"n_samples": 1000}, total_seconds=1.0,
                           version="x")["settings"]
    assert settings["sampler"] == "auto (subcluster)"
    with pytest.warns(UserWarning, match="not converged"):
        m = DPMixture(n_iter=10, burn_in=5, n_chains=1, random_state=0).fit(X)
    assert m.sampler_ == "gibbs+sams"


def test_every_sampler_describes_itself_in_the_help_and_the_docs():
    from dpclust.samplers.registry import samplers_table

    described = describe_samplers()
    assert set(described) == set(SAMPLERS)
    assert all(len(text) > 10 for text in described.values())
    # the user guide's table is made from the registry when the documentation is built
    table = samplers_table()
    for name, text in described.items():
        assert f'| `"{name}"` | {text} |' in table
    assert '| `"beta-gibbs"` |' in table and "**no**" in table
    assert "under the finite prior" in table  # fsd
    guide = DOCS.read_text()
    assert "{include} _generated_samplers.md" in guide
    conf = (DOCS.parents[1] / "conf.py").read_text()
    assert "samplers_table()" in conf
    from dpclust.cli.parser import _sampler_help

    help_text = _sampler_help()
    for name, text in described.items():
        assert f"'{name}': {text}" in help_text


def test_auto_gives_the_table_families_ten_merge_split_proposals_a_sweep():
    """The table families' auto sampler is Gibbs+SAMS with the family's options (ten
    proposals a sweep); asked for by name, or for other data, it has its own default."""
    from dpclust.samplers import GibbsSAMS

    table = choose_sampler("auto", 300, DiagonalGaussian(), DP).sampler
    assert isinstance(table, GibbsSAMS) and table.n_proposals == 10
    assert choose_sampler("auto", 300, GAUSS, DP).sampler.n_proposals == 1
    assert choose_sampler("gibbs+sams", 300, DiagonalGaussian(), DP).sampler.n_proposals == 1


def test_a_concentration_prior_is_refused_where_the_prior_does_not_resample_it():
    """A prior whose concentration carries a Gamma prior but that has no update for it (here a
    finite Dirichlet made so): refused at the edge, naming what takes a GammaPrior."""
    from dpclust.priors import FiniteDirichlet
    from dpclust.samplers import GammaPrior
    from dpclust.samplers.choice import check_prior

    class Learned(FiniteDirichlet):
        @property
        def alpha_prior(self):
            return GammaPrior(1.0, 1.0)

    with pytest.raises(ValueError, match="does not resample its concentration"):
        check_prior(get_sampler("gibbs"), Learned(3, 1.0))
    check_prior(get_sampler("gibbs"), get_prior("pitman-yor:0.25,gamma:2:1"))  # resampled
