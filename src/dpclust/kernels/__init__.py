"""The bottom layer: numba-compiled kernels that take arrays and scalars only.

* :mod:`~dpclust.kernels.gibbs` — categorical draws and the collapsed/explicit Gibbs sweeps,
  generic over a family's compiled operations;
* :mod:`~dpclust.kernels.streams` — the counter-based random streams every parallel kernel
  draws from (SplitMix64, per-chunk seeds, per-point keys);
* :mod:`~dpclust.kernels.subcluster` — the sub-cluster sampler's passes and sequential
  allocation;
* :mod:`~dpclust.kernels.copies` — block moves of identical rows' copies between two
  clusters (Gibbs+SAMS's ``copy_sweeps``);
* :mod:`~dpclust.kernels.ddcrp` — link moves of the distance dependent CRP;
* :mod:`~dpclust.kernels.mallows` — the Generalized Mallows model's operations and its
  samplers' sweeps, cluster updates and whole-cluster moves.

Nothing here imports the rest of the package: families specialise these kernels for their
own operations and samplers call them, both from above.

The generic kernels, which take a family's compiled operations as arguments, are not cached
on disk: numba keys such a compilation by the identity of the function objects, so a new
process never finds it again, and each run would add an entry to the cache's index until
writing the index fails.  The families' entry points (``FamilyKernel.entry_points``), which
name their operations as globals, are cached, with the generic kernels compiled into them.
"""
