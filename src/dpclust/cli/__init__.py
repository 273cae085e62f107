"""The ``dpclust`` command: fit a Dirichlet-process mixture to a data file and report on it.

``dpclust fit [DATA]`` runs the chain and writes, into ``--out DIR``:

* ``run.json`` first (everything ``dpclust resume`` needs to reload the data and continue),
* ``labels.csv`` (header ``label,certainty,fused_label``, one line per point, empty cells for
  a table's rows with no value in the columns modelled, which are left out of the fit: the point
  estimate of the partition, the point's posterior probability of lying in its cluster's
  core and its fused cluster (FOLD, :meth:`dpclust.DPMixture.fuse`; exact-posterior DP
  mixtures only); ``label`` alone on a Dask cluster),
* ``summary.json`` (settings, data, timings, clusters, log joint, point estimate, metrics),
* ``trace.csv`` (``iteration,log_joint,log_likelihood,n_clusters,alpha,seconds``, iterations 0-based;
  a leading ``chain`` column with ``--n-chains`` above 1),
* ``trace.nc``: the kept draws of every chain for ArviZ (``arviz.from_netcdf``),
* ``report.html`` with the figures as PNG files beside it (:func:`dpclust.report.write_report`),
* ``model.npz`` (DP mixtures): the fitted model (:meth:`dpclust.DPMixture.save`) that
  ``dpclust predict RUN_DIR DATA`` and ``dpclust score RUN_DIR DATA`` use on new rows,
* ``checkpoint.npz`` with ``--checkpoint-every K`` (no pickle: arrays and JSON with a
  SHA-256 digest), and ``label_samples.npz`` with ``--store-labels`` (``labels`` of shape
  (chains, kept draws, rows) and the kept ``iterations``),
* ``links.csv`` with ``--model ddcrp`` (header ``customer,link``: each row's link in the last
  iteration, as 0-based row numbers; ``link == customer`` for a self link).

``--model ddcrp`` fits a distance dependent CRP mixture (Blei & Frazier 2010;
:class:`dpclust.DDCRPMixture`) instead of a Dirichlet-process mixture: ``--decay`` (default
``constant``), with the distances from ``--positions COLUMN`` (numbers, or dates and times
measured in days) or ``--distances FILE`` (a dense ``.npy`` or sparse ``.npz`` matrix), and
``--sequential`` for links to earlier rows only.

``--family mallows`` clusters top-t rankings with Generalized Mallows components (Meilă &
Chen 2010; :class:`dpclust.families.GeneralizedMallows`): DATA is a table of rankings, one a
row, best first, as item names or ids (``--missing``, ``--index-base``, ``--items FILE``), or a
PrefLib ``.soi``/``.toi``/``.soc``/``.toc`` file; without DATA, or with ``--dataset
dublin-west``, the bundled Dublin West ballots.  ``--sampler`` is ``slice-gibbs`` (exact, the
default) or ``beta-gibbs`` (approximate); ``--nu`` and ``--r`` set the prior.  The summary
adds a ``mallows`` block and the report the largest clusters' central rankings with their
dispersions (the paper's Table 1), the cluster-size distribution (Figure 10) and theta_j
against rank (Figure 11).  ``--family plackett-luce`` reads the same data with
Plackett–Luce components (:class:`dpclust.families.PlackettLuce`: a worth per item; its
samplers ``explicit`` and ``fsd``; ``--worth-shape`` sets the prior).  For either family
DATA may be a cast-vote record (:func:`dpclust.io.read_cvr`), and the report's blocs table
reads each bloc from its ballots.

``dpclust compare [DATA] --family A --family B`` (or ``--model family=A,coarsening=100``
specs) fits each model to the same random training rows and scores the same held-out rows by
their log posterior predictive density (:func:`dpclust.compare_models`;
:mod:`dpclust.cli.compare`): ``comparison.csv``, ``comparison.json``, ``pointwise.csv`` and
``comparison.html`` say which model predicts new rows better, by how many nats per row.

``dpclust resume DIR`` continues a checkpointed run and writes the same files; the labels are
exactly those of an uninterrupted run with the same seed.

Every problem with the input ends in one line ``dpclust: error: <message>`` on stderr and
exit status 2; Ctrl-C ends with exit status 130 (and says how to resume, when checkpointing).
"""

# what dpclust.cli offered as one module stays importable from it
from .commands import main
from .config import DATASETS, PROG, RunConfig, UsageError, _config_from_args, parse_alpha
from .data import LoadedData
from .outputs import _write_json, strict_json
from .parser import build_parser

__all__ = ["RunConfig", "build_parser", "main"]
