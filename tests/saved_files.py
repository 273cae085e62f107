"""Files written by the estimator before it was split into ``dpclust.chains`` and
``dpclust.estimators`` (issue 31): a checkpoint and a saved model of ``DPMixture``, and a
checkpoint of ``DDCRPMixture``, from the tree at commit c0826e1.

They name the classes of the chains' records by their old module (``dpclust.estimator:
_Snapshot``, ``dpclust.estimator:Trace``, ...); ``tests/test_saved_files.py`` checks that
they still load and resume.  ``python tests/saved_files.py`` rewrote them; do not run it
again on a later tree (the files would then name the new modules and test nothing).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

DATA = Path(__file__).parent / "data"
X_PATH = DATA / "saved_files_X.npy"
DP_CHECKPOINT = DATA / "checkpoint_dp_c0826e1.npz"
DP_MODEL = DATA / "model_dp_c0826e1.npz"
DDCRP_CHECKPOINT = DATA / "checkpoint_ddcrp_c0826e1.npz"

#: the runs behind the files (a resumed run with a larger ``n_iter`` is checked against a
#: fresh run of that length)
DP_KW = dict(n_iter=6, burn_in=2, random_state=0, n_chains=1)
DP_MODEL_KW = dict(n_iter=10, random_state=0, n_chains=1)
DDCRP_KW = dict(family="gaussian", decay="window:20", positions=np.arange(60.0), n_iter=6,
                burn_in=2, random_state=0, n_chains=1)


def data() -> np.ndarray:
    rng = np.random.default_rng(31)
    means = np.array([[0.0, 0.0], [3.0, 0.5], [0.5, 3.0]])
    z = rng.integers(0, 3, size=60)
    return means[z] + rng.normal(size=(60, 2)) * 0.7


def main() -> None:
    import warnings

    from dpclust import DDCRPMixture, DPMixture

    warnings.simplefilter("ignore")
    X = data()
    DATA.mkdir(exist_ok=True)
    np.save(X_PATH, X)
    DPMixture(**DP_KW, checkpoint=DP_CHECKPOINT).fit(X)
    DPMixture(**DP_MODEL_KW).fit(X).save(DP_MODEL)
    DDCRPMixture(**DDCRP_KW, checkpoint=DDCRP_CHECKPOINT).fit(X)


if __name__ == "__main__":
    main()
