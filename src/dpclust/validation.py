"""Former name of :mod:`dpclust.calibration` (simulation-based calibration of samplers).

The input checks live in :mod:`dpclust.utils.checks`; this module's old name suggested
either.  ``from dpclust.validation import simulation_based_calibration`` keeps working and
warns once with the new path.
"""

import warnings

from . import calibration as _calibration

_NAMES = set(_calibration.__all__)


def __getattr__(name):
    if name in _NAMES:
        warnings.warn("dpclust.validation is now dpclust.calibration: import "
                      f"{name} from there", DeprecationWarning, stacklevel=2)
        return getattr(_calibration, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
