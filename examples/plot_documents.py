"""
Clustering documents: word counts with a Dirichlet-multinomial family
=====================================================================

Documents as sparse word counts, clusters as distributions over words.  The number of
topics is not given; the posterior finds it.
"""

import numpy as np

from dpclust import DPMixture
from dpclust.datasets import make_documents
from dpclust.metrics import nmi

X, y = make_documents(n_docs=600, n_topics=5, vocab_size=400, random_state=0)
model = DPMixture(family="multinomial", n_iter=150, random_state=0).fit(X)
print(f"{X.shape[0]} documents, {X.shape[1]} words: {model.n_clusters_} clusters, "
      f"NMI {nmi(model.labels_, y):.3f}")

# %%
# Each cluster's most frequent words (word ids here; a vocabulary file gives names on the
# command line, ``--vocab``).
counts = np.asarray([np.asarray(X[model.labels_ == k].sum(axis=0)).ravel()
                     for k in range(model.n_clusters_)])
for k, row in enumerate(counts):
    top = np.argsort(row)[::-1][:8]
    print(f"cluster {k} ({(model.labels_ == k).sum()} documents): words {top.tolist()}")
