"""Small utilities at the bottom of the package: input checks (:mod:`~dpclust.utils.checks`),
the safe file format of checkpoints and models (:mod:`~dpclust.utils.safe_io`), data
fingerprints and plotting helpers.  Nothing here imports the rest of the package."""
