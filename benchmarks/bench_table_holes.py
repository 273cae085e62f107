"""Penguins with MCAR holes in the four measures: diagonal + collapsed Gibbs against
full covariance + explicit Gibbs (Neal 2), NMI to species and seconds.

Usage: python benchmarks/bench_table_holes.py FRACTIONS DIAG_ITERS FULL_ITERS SEEDS
(e.g. 0.1,0.3 3000 700 1); results in benchmarks/results/table_holes.md."""
import sys, time, warnings
sys.path.insert(0, __import__("os").path.dirname(__file__))
import numpy as np
from sklearn.metrics import normalized_mutual_info_score as nmi
from tables_data import load_penguins
from dpclust import DPMixture
from dpclust.families import TableFamily
warnings.filterwarnings("ignore")
X0, y, _ = load_penguins()
real = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
frac_list = [float(a) for a in sys.argv[1].split(",")]
iters = {"diagonal": int(sys.argv[2]), "full": int(sys.argv[3])}
for frac in frac_list:
    for seed in range(int(sys.argv[4])):
        rng = np.random.default_rng(100 + seed)
        X = X0.copy()
        for c in real:
            X.loc[rng.random(len(X)) < frac, c] = np.nan
        for cov, sampler in (("diagonal", "gibbs"), ("full", "explicit")):
            t = time.perf_counter()
            est = DPMixture(family=TableFamily(covariance=cov), sampler=sampler,
                            n_iter=iters[cov], random_state=seed, n_chains=1).fit(X)
            dt = time.perf_counter() - t
            print(f"holes {frac:.0%} seed {seed} {cov:8s} {sampler:8s} n_iter {iters[cov]:4d} "
                  f"{dt:6.1f} s  NMI {nmi(y, est.labels_):.3f}  K {est.n_clusters_}", flush=True)
