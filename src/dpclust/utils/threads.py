"""One thread for small work: numba's parallel regions over a few thousand rows cost more
to start than their work, and between regions the OpenMP pool's idle threads spin waiting
for the next one, taking a core that another process could use (5 points, 6,000 steps of
the partitioned moves alone took 45 s on one thread against over 600 s on two busy cores;
the sub-cluster sampler's 5-point chain ran twelve times slower beside a second process
until its small regions ran on one thread).  The thread count never changes a result."""

from __future__ import annotations

import numba

#: parallel regions over fewer rows than this run on one thread
SERIAL_ROWS = 4096


class serial_when_small:
    """Run numba's parallel regions on one thread while the work (``n_rows`` rows) is below
    ``limit``, else on as many threads as they had."""

    def __init__(self, n_rows: int, limit: int = SERIAL_ROWS):
        self.small = n_rows < limit

    def __enter__(self):
        if self.small:
            self.old = numba.get_num_threads()
            numba.set_num_threads(1)

    def __exit__(self, *exc: object):
        if self.small:
            numba.set_num_threads(self.old)
