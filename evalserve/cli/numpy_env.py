"""What a one-shot engine command (``evalserve evaluate``, ``demo``) tells NumPy before importing it.

Both variables are read once, when NumPy loads, so ``main`` sets them (unless the user has) before the
subcommand's module is imported, and only in a process that has not loaded NumPy yet (tests and notebooks
keep their environment, and child processes never inherit a change made on their behalf). Measured whole
process on the 2 M-line workload (bench/RESULTS.md):

- ``OPENBLAS_NUM_THREADS=1``: loading OpenBLAS starts a thread per extra core that spins for tens of
  milliseconds; the evaluation multiplies no matrices and runs its own threads (``--threads``), which need
  those cores.
- ``NUMPY_MADVISE_HUGEPAGE=0``: NumPy asks for transparent huge pages for arrays of 4 MB and more. On a machine
  where other processes have just freed memory (the usual case) the kernel must first assemble each 2 MB
  page, and the process's half a gigabyte of short-lived arrays faulted in two to four times slower than as
  ordinary pages; only back-to-back runs of the same command found huge pages ready.
"""

from __future__ import annotations

import os
import sys

ONE_SHOT_ENV = {"OPENBLAS_NUM_THREADS": "1", "NUMPY_MADVISE_HUGEPAGE": "0"}


def prepare_one_shot() -> dict[str, str]:
    """Set ``ONE_SHOT_ENV``'s variables the user has not set, if NumPy is not loaded yet; returns those set."""
    if "numpy" in sys.modules:
        return {}
    chosen = {name: value for name, value in ONE_SHOT_ENV.items() if name not in os.environ}
    os.environ.update(chosen)
    return chosen
