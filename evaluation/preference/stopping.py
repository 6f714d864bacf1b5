"""Stopping distributions P(k), the probability that the user stops at rank k (spec 6.4; Carterette, SIGIR 2011).

| stop      | P(k)                                  |
|-----------|---------------------------------------|
| ``rbp``   | theta (1 - theta)^(k-1)               |
| ``dcg``   | 1/log2(k+1) - 1/log2(k+2)             |
| ``rr``    | 1/k - 1/(k+1) = 1/(k(k+1))            |
| ``uniform`` | 1/K for k <= K (needs the cutoff K) |
| ``none``  | all mass at the last rank considered: Prf@K = total utility of the top K (spec C-PRF-3) |

``Prf@K = sum_{k <= N} P(k) sum_{i <= k} u_i = sum_{i <= N} u_i W(i)`` with ``N = min(K, n)`` and the rank weight
``W(i) = sum_{k=i}^{N} P(k)``: the probability that a user who stops within the first N ranks reads rank i. The
stopping mass beyond the end of a ranking shorter than K is not counted (spec Appendix D). For ``rbp``, ``dcg``
and ``rr``, ``W(i) = T(i-1) - T(N)`` with the tail ``T(k) = P(stop after k)``: ``(1-theta)^k``, ``1/log2(k+2)``,
``1/(k+1)``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from evaluation.model import FloatArray
from evaluation.problems import OptionError

STOPS: tuple[str, ...] = ("rbp", "dcg", "rr", "uniform", "none")
DEFAULT_THETA = 0.2


def _check(stop: str, theta: float, cutoff: int | None) -> None:
    if stop not in STOPS:
        raise OptionError(f"stop must be one of {', '.join(STOPS)}, not {stop!r}")
    if stop == "rbp" and not 0.0 < theta <= 1.0:
        raise OptionError(f"theta must be in (0, 1], not {theta}")
    if stop == "uniform" and cutoff is None:
        raise OptionError("stop=uniform needs a cutoff K (P(k) = 1/K)")


def tail(stop: str, k: npt.ArrayLike, theta: float = DEFAULT_THETA) -> FloatArray:
    """``T(k) = sum_{j > k} P(j)`` (``T(0) = 1``) for ``rbp``, ``dcg`` and ``rr``."""
    ks = np.asarray(k, dtype=np.float64)
    if stop == "rbp":
        return np.asarray(np.power(1.0 - theta, ks), dtype=np.float64)
    if stop == "dcg":
        return np.asarray(1.0 / np.log2(ks + 2.0), dtype=np.float64)
    if stop == "rr":
        return np.asarray(1.0 / (ks + 1.0), dtype=np.float64)
    raise OptionError(f"stop={stop} has no closed-form tail")


def probabilities(stop: str, k: npt.ArrayLike, *, theta: float = DEFAULT_THETA, cutoff: int | None = None,
                  depth: int | None = None) -> FloatArray:
    """``P(k)`` at 1-based ranks ``k``. ``uniform`` needs ``cutoff``; ``none`` puts all mass at ``depth``
    (``min(K, n)``, the last rank considered)."""
    _check(stop, theta, cutoff)
    ks = np.asarray(k, dtype=np.float64)
    if stop == "uniform":
        assert cutoff is not None
        return np.where(ks <= cutoff, 1.0 / cutoff, 0.0)
    if stop == "none":
        if depth is None:
            raise OptionError("stop=none needs the depth at which the user stops")
        return np.where(ks == depth, 1.0, 0.0)
    return np.asarray(tail(stop, ks - 1.0, theta) - tail(stop, ks, theta), dtype=np.float64)


def rank_weights(stop: str, rank: npt.ArrayLike, depth: npt.ArrayLike, *, theta: float = DEFAULT_THETA,
                 cutoff: int | None = None) -> FloatArray:
    """``W(i) = sum_{k=i}^{N} P(k)`` for ranks ``i <= N`` (0 beyond), ``N = depth`` (per element: min(K, n))."""
    _check(stop, theta, cutoff)
    i = np.asarray(rank, dtype=np.float64)
    n = np.broadcast_to(np.asarray(depth, dtype=np.float64), i.shape)
    inside = i <= n
    if stop == "uniform":
        assert cutoff is not None
        weights = (n - i + 1.0) / cutoff
    elif stop == "none":
        weights = np.ones(i.shape)
    else:
        weights = tail(stop, i - 1.0, theta) - tail(stop, n, theta)
    return np.where(inside, weights, 0.0)
