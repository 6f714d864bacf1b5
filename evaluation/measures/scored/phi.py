"""The relevance function phi of nDCG_phi (spec 2.9, Appendix B): box-plot statistics as R computes them and
monotone piecewise cubic Hermite interpolation (PCHIP) through control points, for many instances at once.

- ``fivenum`` / ``boxplot_stats``: R's ``fivenum`` (Tukey hinges) and ``boxplot.stats`` (whiskers = the most
  extreme observations within ``coef`` box lengths of the box; ``coef = 0`` puts them at the data extremes and
  declares no outlier, as R does).
- ``pchip_slopes`` / ``pchip_evaluate``: Fritsch-Carlson slopes with Moler's end-point rule, the same
  arithmetic as SciPy's ``PchipInterpolator`` (and MATLAB ``pchip``, R ``pracma::pchip``), batched over curves.
- ``fit_phi``: each instance's control points from the positive scores of all its candidate items --
  ``(0, 0), (m, 0), (W, 1 - alpha_w), (ymax, 1)`` with median ``m``, upper whisker ``W`` and
  ``alpha_w = (ymax - W) / (ymax - ymin)``; the whisker point only when ``m < W < ymax`` -- and the degenerate
  cases of spec 2.9 (no positive score: phi = 0; ``m = ymax``: phi = 1 at ``ymax``, else 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from evaluation.model import FloatArray, IntArray
from evaluation.problems import OptionError, RequestError

#: kinds of relevance function: no positive score (phi = 0), a step at the maximum, an interpolated curve
ZERO, STEP, CURVE = 0, 1, 2
#: control points of a curve: (0, 0), (m, 0), the optional whisker point, (ymax, 1)
MAX_POINTS = 4


def fivenum(values: npt.ArrayLike) -> FloatArray:
    """R's ``fivenum``: minimum, lower hinge, median, upper hinge, maximum (NaNs dropped; none left: NaN)."""
    x = np.asarray(values, dtype=np.float64).ravel()
    x = np.sort(x[~np.isnan(x)])
    five: FloatArray = fivenum_sorted(x, np.zeros(1, dtype=np.int64), np.array([x.size], dtype=np.int64))[0]
    return five


def fivenum_sorted(values: FloatArray, start: IntArray, count: IntArray) -> FloatArray:
    """``fivenum`` of many samples at once: sample i is ``values[start[i]:start[i] + count[i]]``, sorted
    ascending. Returns an (n, 5) array; rows of empty samples are NaN."""
    n = count.astype(np.float64)
    n4 = np.floor((n + 3.0) / 2.0) / 2.0
    depth = np.stack([np.ones_like(n), n4, (n + 1.0) / 2.0, n + 1.0 - n4, n], axis=1)  # 1-based positions
    out = np.full((count.size, 5), np.nan)
    has = count > 0
    if values.size == 0 or not has.any():
        return out
    low = start[has, None] + np.floor(depth[has]).astype(np.int64) - 1
    high = start[has, None] + np.ceil(depth[has]).astype(np.int64) - 1
    out[has] = 0.5 * (values[low] + values[high])
    return out


@dataclass(frozen=True, eq=False)
class BoxplotStats:
    """R's ``boxplot.stats``: ``stats`` = lower whisker, lower hinge, median, upper hinge, upper whisker;
    ``out`` = the observations beyond the fences (in the order given)."""

    stats: FloatArray
    out: FloatArray


def boxplot_stats(values: npt.ArrayLike, coef: float = 1.5) -> BoxplotStats:
    """R's ``boxplot.stats(x, coef)``: fences at ``coef`` times the inter-hinge range beyond the hinges; the
    whiskers become the extreme observations within the fences when there are outliers. ``coef = 0``: no
    outliers, whiskers at the data extremes."""
    if coef < 0:
        raise OptionError("coef must not be negative")
    x = np.asarray(values, dtype=np.float64).ravel()
    x = x[~np.isnan(x)]
    stats = fivenum(x)
    if coef == 0 or x.size == 0:
        return BoxplotStats(stats, x[:0])
    lower, upper = fences(stats, coef)
    out = (x < lower) | (x > upper)
    if out.any():
        stats[0], stats[4] = x[~out].min(), x[~out].max()
    return BoxplotStats(stats, x[out])


def fences(stats: FloatArray, coef: float) -> tuple[FloatArray, FloatArray]:
    """Lower and upper outlier fences of ``fivenum`` rows (R: hinge -/+ coef * (upper hinge - lower hinge))."""
    iqr = stats[..., 3] - stats[..., 1]
    return stats[..., 1] - coef * iqr, stats[..., 3] + coef * iqr


def pchip_slopes(x: npt.ArrayLike, y: npt.ArrayLike) -> FloatArray:
    """PCHIP derivatives at the control points of one curve (shape (m,)) or of a batch (shape (n, m)); x strictly
    increasing along the last axis, m >= 2 (two points: the straight line's slope at both ends)."""
    xs = np.asarray(x, dtype=np.float64)
    ys = np.asarray(y, dtype=np.float64)
    if xs.shape != ys.shape or xs.shape[-1] < 2:
        # internal: the curves give x and y of one shape, 3 or 4 points
        raise ValueError("PCHIP needs x and y of the same shape with at least two points")
    h = np.diff(xs, axis=-1)
    delta = np.diff(ys, axis=-1) / h
    d = np.zeros_like(ys)
    if xs.shape[-1] == 2:
        d[..., 0] = delta[..., 0]
        d[..., 1] = delta[..., 0]
        return d
    before, after = delta[..., :-1], delta[..., 1:]
    flat = (np.sign(after) != np.sign(before)) | (after == 0) | (before == 0)
    w1 = 2.0 * h[..., 1:] + h[..., :-1]
    w2 = h[..., 1:] + 2.0 * h[..., :-1]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # masked by ``flat`` or tending to 0
        harmonic = (w1 / before + w2 / after) / (w1 + w2)  # weighted harmonic mean of the two slopes, inverted
        d[..., 1:-1] = np.where(flat, 0.0, 1.0 / harmonic)
    d[..., 0] = _end_slope(h[..., 0], h[..., 1], delta[..., 0], delta[..., 1])
    d[..., -1] = _end_slope(h[..., -1], h[..., -2], delta[..., -1], delta[..., -2])
    return d


def _end_slope(h0: FloatArray, h1: FloatArray, m0: FloatArray, m1: FloatArray) -> FloatArray:
    """Moler's shape-preserving three-point end slope."""
    d = np.asarray(((2.0 * h0 + h1) * m0 - h0 * m1) / (h0 + h1), dtype=np.float64)
    wrong_sign = np.sign(d) != np.sign(m0)
    overshoot = ~wrong_sign & (np.sign(m0) != np.sign(m1)) & (np.abs(d) > 3.0 * np.abs(m0))
    return np.where(wrong_sign, 0.0, np.where(overshoot, 3.0 * m0, d))


def pchip_evaluate(x: npt.ArrayLike, y: npt.ArrayLike, d: npt.ArrayLike, t: npt.ArrayLike) -> FloatArray:
    """The cubic Hermite interpolant with control points (x, y) and slopes d at t.

    ``x``, ``y``, ``d`` are one curve (shape (m,)) evaluated at every t, or one curve per t (shape t.shape + (m,)).
    Outside [x_1, x_m] the end pieces are extended (as SciPy with ``extrapolate=True``); NaN gives NaN."""
    xs, ys, ds = (np.asarray(a, dtype=np.float64) for a in (x, y, d))
    ts = np.asarray(t, dtype=np.float64)
    m = xs.shape[-1]
    shape = (*ts.shape, m)
    xs, ys, ds = (np.broadcast_to(a, shape) for a in (xs, ys, ds))
    k = np.sum(ts[..., None] >= xs[..., 1 : m - 1], axis=-1)  # piece index: interior points at or below t

    def at(a: FloatArray, j: IntArray) -> FloatArray:
        picked: FloatArray = np.take_along_axis(a, j[..., None], axis=-1)[..., 0]
        return picked

    xk, yk, dk = at(xs, k), at(ys, k), at(ds, k)
    h = at(xs, k + 1) - xk
    slope = (at(ys, k + 1) - yk) / h
    cubic = (dk + at(ds, k + 1) - 2.0 * slope) / h
    c3 = cubic / h
    c2 = (slope - dk) / h - cubic
    s = ts - xk
    s2 = s * s
    value: FloatArray = yk + dk * s + c2 * s2 + c3 * (s2 * s)
    return value


def pchip(x: npt.ArrayLike, y: npt.ArrayLike, t: npt.ArrayLike) -> FloatArray:
    """PCHIP through one set of control points, evaluated at t."""
    return pchip_evaluate(x, y, pchip_slopes(x, y), t)


@dataclass(frozen=True, eq=False)
class PhiCurves:
    """The relevance functions of several instances (spec 2.9), fitted by ``fit_phi``.

    Per instance: its ``kind`` (ZERO, STEP, CURVE), R ``boxplot.stats`` of its positive scores (``stats``, NaN
    without positive scores), the maximum score, and for curves the control points padded with NaN to
    MAX_POINTS (``x``, ``y``), their PCHIP slopes ``d`` and how many there are (``size``).
    """

    kind: IntArray
    stats: FloatArray
    ymax: FloatArray
    x: FloatArray
    y: FloatArray
    d: FloatArray
    size: IntArray

    def __len__(self) -> int:
        return int(self.kind.size)

    def control_points(self, instance: int) -> list[tuple[float, float]]:
        """The control points of one instance's curve (empty for the ZERO and STEP kinds)."""
        n = int(self.size[instance])
        return [(float(a), float(b)) for a, b in zip(self.x[instance, :n], self.y[instance, :n])]

    def __call__(self, instance: IntArray, score: FloatArray) -> FloatArray:
        """phi of each score under its instance's function, clamped to [0, 1]; NaN (no score) gives 0."""
        kind = self.kind[instance]
        out = np.zeros(score.size, dtype=np.float64)
        step = kind == STEP
        out[step] = score[step] >= self.ymax[instance[step]]
        for n in np.unique(self.size[instance[kind == CURVE]]).tolist():
            pick = np.flatnonzero((kind == CURVE) & (self.size[instance] == n))
            rows = instance[pick]
            out[pick] = pchip_evaluate(self.x[rows, :n], self.y[rows, :n], self.d[rows, :n], score[pick])
        out[np.isnan(score)] = 0.0
        clipped: FloatArray = np.clip(out, 0.0, 1.0)
        return clipped


def fit_phi(values: FloatArray, offsets: IntArray, coef: float = 1.5) -> PhiCurves:
    """Fit every instance's relevance function: instance i's candidate scores are
    ``values[offsets[i]:offsets[i + 1]]``, sorted ascending, all >= 0 (statistics use the positive ones)."""
    n_inst = offsets.size - 1
    lengths = np.diff(offsets)
    inst_of = np.repeat(np.arange(n_inst, dtype=np.int64), lengths)
    nonpositive = np.bincount(inst_of, weights=values <= 0, minlength=n_inst).astype(np.int64)
    start = offsets[:-1] + nonpositive
    count = offsets[1:] - start
    has = count > 0
    stats = fivenum_sorted(values, start, count)
    ymax = np.full(n_inst, np.nan)
    ymin = np.full(n_inst, np.nan)
    ymax[has] = values[offsets[1:][has] - 1]
    ymin[has] = values[start[has]]
    if coef > 0 and values.size:
        lower, upper = fences(stats, coef)
        inside = (values > 0) & (values >= lower[inst_of]) & (values <= upper[inst_of])
        below = (values > 0) & (values < lower[inst_of])
        n_below = np.bincount(inst_of, weights=below, minlength=n_inst).astype(np.int64)
        n_upto = np.bincount(inst_of, weights=inside, minlength=n_inst).astype(np.int64) + n_below
        stats[has, 0] = values[start[has] + n_below[has]]
        stats[has, 4] = values[start[has] + n_upto[has] - 1]
    median, whisker = stats[:, 2], stats[:, 4]
    kind = np.where(~has, ZERO, np.where(median >= ymax, STEP, CURVE)).astype(np.int64)
    curve = kind == CURVE
    with_whisker = curve & (whisker > median) & (whisker < ymax)
    x = np.full((n_inst, MAX_POINTS), np.nan)
    y = np.full((n_inst, MAX_POINTS), np.nan)
    x[curve, 0], y[curve, 0] = 0.0, 0.0
    x[curve, 1], y[curve, 1] = median[curve], 0.0
    x[curve, 2], y[curve, 2] = ymax[curve], 1.0
    w = with_whisker
    alpha_w = (ymax[w] - whisker[w]) / (ymax[w] - ymin[w])
    x[w, 2], y[w, 2] = whisker[w], 1.0 - alpha_w
    x[w, 3], y[w, 3] = ymax[w], 1.0
    size = np.where(with_whisker, 4, np.where(curve, 3, 0)).astype(np.int64)
    d = np.full((n_inst, MAX_POINTS), np.nan)
    for n in (3, 4):
        rows = size == n
        if rows.any():
            d[rows, :n] = pchip_slopes(x[rows, :n], y[rows, :n])
    return PhiCurves(kind, stats, ymax, x, y, d, size)


def phi(scores: npt.ArrayLike, coef: float = 1.5) -> FloatArray:
    """phi of every score of one instance, the function fitted on those same scores (all >= 0)."""
    y = np.asarray(scores, dtype=np.float64).ravel()
    if y.size and not bool((y >= 0).all()):
        raise RequestError("item scores must be finite and >= 0")
    curves = fit_phi(np.sort(y), np.array([0, y.size], dtype=np.int64), coef)
    return curves(np.zeros(y.size, dtype=np.int64), y)
