"""The bottom layer: numba-compiled kernels that take arrays and scalars only.

* :mod:`~dpclust.kernels.gibbs` — categorical draws and the collapsed/explicit Gibbs sweeps,
  generic over a family's compiled operations;
* :mod:`~dpclust.kernels.streams` — the counter-based random streams every parallel kernel
  draws from (SplitMix64, per-chunk seeds, per-point keys);
* :mod:`~dpclust.kernels.subcluster` — the sub-cluster sampler's passes and sequential
  allocation;
* :mod:`~dpclust.kernels.ddcrp` — link moves of the distance dependent CRP.

Nothing here imports the rest of the package: families specialise these kernels for their
own operations and samplers call them, both from above.
"""
