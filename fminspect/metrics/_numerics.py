"""Numerical constants and helpers shared by the measures.

Every use of :data:`EPS` is commented at its call site: it is either there for parity with
the authors' MATLAB code (which adds ``eps`` in a few denominators) or as a zero guard.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, Protocol, TypeVar, cast, overload

import cv2
import numpy as np
import numpy.typing as npt

#: MATLAB's ``eps`` (``np.spacing(1)``), used by pysodmetrics and the MATLAB toolboxes.
EPS: float = float(np.spacing(1))


#: Types :func:`safe_divide` divides as Python floats (an int becomes the float NumPy's
#: int64 → float64 conversion gives: the same rounding).
_SCALARS = frozenset({int, float, np.int64, np.float64})


def safe_divide(num: Any, den: Any, on_zero: float = 0.0) -> npt.NDArray[np.float64]:
    """Divide element-wise, returning ``on_zero`` where the denominator is 0.

    Parameters
    ----------
    num, den : array_like
        Numerator and denominator (broadcastable).
    on_zero : float
        Value returned where ``den == 0``.

    Returns
    -------
    numpy.ndarray
        float64 quotient (a ``numpy.float64`` for two scalars).
    """
    if type(num) in _SCALARS and type(den) in _SCALARS:
        # two counts (an adaptive or binary binarisation's): Python's float division is
        # the same IEEE division, without the arrays (3 µs a call against 0.2)
        d = float(den)
        return np.float64(on_zero if d == 0 else float(num) / d)  # type: ignore[return-value]
    den = np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, on_zero, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


#: OpenCV's exact transform runs its columns with a row stride of the image's width: at a
#: multiple of 512 (maps 512, 1024 or 2048 px wide) they alias in the CPU cache and it runs at
#: up to half speed (measured single-threaded: 24.5 against 11.0 ms at 1024 × 1024, 10–11 ns
#: a pixel at the other widths tried from 256 to 4,096); 8 columns of padding give the normal
#: speed. Every multiple of 256 is padded, for caches of other geometries (it costs a copy of
#: the uint8 map).
_ALIASED_WIDTH, _WIDTH_PAD = 256, 8


def l2_distance(outside: np.ndarray) -> np.ndarray:
    """OpenCV's exact (Felzenszwalb) Euclidean distance of every pixel to the nearest zero
    of the uint8 map ``outside`` (float32, the map's shape; a view into a wider array when
    the width is a multiple of 256, padded on the right with non-zero pixels, which are no
    zero's nearest and change no distance)."""
    w = outside.shape[1]
    if w % _ALIASED_WIDTH:
        return cv2.distanceTransform(outside, cv2.DIST_L2, cv2.DIST_MASK_PRECISE)
    wider = cv2.copyMakeBorder(outside, 0, 0, 0, _WIDTH_PAD, cv2.BORDER_CONSTANT, value=1)
    return cv2.distanceTransform(wider, cv2.DIST_L2, cv2.DIST_MASK_PRECISE)[:, :w]


def adaptive_threshold(pred: np.ndarray) -> float:
    """Adaptive threshold ``min(2 * mean(pred), 1)`` (Achanta et al. 2009, as pysodmetrics).

    Binarisation against it is always ``pred >= threshold``.
    """
    return float(min(2 * pred.mean(), 1))


def matlab_gauss2d(size: int, sigma: float) -> npt.NDArray[np.float64]:
    """2-D Gaussian kernel equal to MATLAB ``fspecial('gaussian', size, sigma)``.

    Values below ``eps * max`` are zeroed as MATLAB does, then the kernel is normalised to
    sum 1.
    """
    m = (size - 1) / 2
    y, x = np.ogrid[-m : m + 1, -m : m + 1]
    h: npt.NDArray[np.float64] = np.exp(-(x * x + y * y) / (2 * sigma * sigma))
    h[h < np.finfo(h.dtype).eps * h.max()] = 0
    kernel: npt.NDArray[np.float64] = h / h.sum()
    return kernel


def matlab_colon(a: float, d: float, b: float) -> npt.NDArray[np.float64]:
    """MATLAB's range ``a:d:b``, element by element as MATLAB builds it (not ``a + k·d``).

    MATLAB computes n = the number of steps, then the first half of the elements as
    ``a + k·d``, the second half from the end as ``b − (n − k)·d`` and, for an even n, the
    middle one as ``(a + b)/2`` (MathWorks' description of its colon operator, quoted in the
    MATLAB Answers thread "Floating point accuracy and COLON", 2012). Its documented example
    holds: ``x = 0:0.1:0.3; y = 0:0.1:0.4; x - y(1:end-1)`` is ``[0 0 -0.2776 -0.5551]·1e-16``.
    The MATLAB toolboxes' thresholds ``1:-1/255:0`` differ from ``t/255`` in the last bit at
    36 of their 256 values — where a stretched 8-bit map, lying exactly on k/255, moves a
    whole grey level across the threshold.
    """
    n = int(np.floor((b - a) / d + 1e-10))
    k = np.arange(n + 1, dtype=np.float64)
    out = np.where(2 * k < n, a + k * d, b - (n - k) * d)
    if n % 2 == 0:
        out[n // 2] = (a + b) / 2
    return out


def readonly(array: np.ndarray) -> np.ndarray:
    """Return ``array`` marked read-only (the results are frozen; so are their arrays)."""
    array.setflags(write=False)
    return array


T = TypeVar("T")


class _HasCache(Protocol):
    """The owner of a :class:`lazy_field`: a result dataclass with a ``_cache`` dict field."""

    @property
    def _cache(self) -> dict[str, Any]: ...


class lazy_field(Generic[T]):
    """A property of a frozen, slotted result dataclass computed on first access.

    The owning class must define a ``_cache: dict`` field. Expensive full-size maps that only
    an explain view needs (not the score) are computed by the core on first access and kept,
    so batch evaluation never pays for them and the GUI never recomputes maths. Arrays are
    returned read-only.
    """

    def __init__(self, func: Callable[[Any], T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, obj: None, owner: type) -> lazy_field[T]: ...
    @overload
    def __get__(self, obj: _HasCache, owner: type) -> T: ...
    def __get__(self, obj: _HasCache | None, owner: type) -> T | lazy_field[T]:
        if obj is None:
            return self
        cache = obj._cache
        try:
            return cast(T, cache[self.name])  # the value self.func returned
        except KeyError:
            value = self.func(obj)
            if isinstance(value, np.ndarray):
                readonly(value)
            cache[self.name] = value
            return value


class CurveSummary:
    """The per-image variants of a result's threshold curve (``curve``): its mean, max, min
    and the curve point of its first maximum — one definition for every measure that has
    such a curve (the F-measure's sweep scores, the E-measure, MSIoU)."""

    __slots__ = ()
    curve: np.ndarray

    @property
    def mean(self) -> float:
        """Mean of the curve (the "mean" variant: meanFm, meanEm, meanMSIoU…)."""
        return float(self.curve.mean())

    @property
    def max(self) -> float:
        """Max of the curve (the "max" variant: maxFm, maxEm, maxMSIoU…)."""
        return float(self.curve.max())

    @property
    def min(self) -> float:
        """Min of the curve (the best value of a lower-is-better measure)."""
        return float(self.curve.min())

    @property
    def argmax(self) -> int:
        """Curve point (threshold index) of the first maximum."""
        return int(self.curve.argmax())
