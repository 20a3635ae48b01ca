"""Assignments through a short list of constant indices, recorded as copies of rows.

``a[[k, p]] = a[[p, k]]`` (a row swap in Gaussian elimination), ``u[[0, -1]] = 0.0``
(both ends of a grid) and ``g[:, [0, -1]] = edge`` (two columns) index one axis with a
list of Python integers. NumPy runs them as one "fancy" assignment; the bytecode has no
scatter instruction, but a list whose values are known when the cell runs is the same as
one basic assignment per listed index, in the list's order::

    a[[i0, i1, ...], ...] = v   ==   a[i0, ...] = v'[0]; a[i1, ...] = v'[1]; ...

where ``v'`` is ``v`` broadcast to the indexed shape (NumPy's rule) and evaluated before
the first write. A repeated index keeps the last value, as NumPy does. Only Python
integers (and NumPy integer scalars) qualify: their values left the capture already
(``int(...)`` ends a batch), so the recorded program stays exact when it is replayed on
other data; an index *array* computed by the program does not, and stays an indexed
assignment run by NumPy.

This module is the pure analysis of the index; :mod:`fusionlab.capture.array` does the
recording.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["ListedKey", "listed_key", "MAX_LISTED"]

#: longer lists stay one indexed assignment run by NumPy (one copy per index would make
#: a long program for no gain)
MAX_LISTED = 64


@dataclass(frozen=True)
class ListedKey:
    """An index with one axis given by a list of constant integers.

    Attributes
    ----------
    axis : int
        The array axis the list indexes.
    indices : tuple of int
        The listed indices, made non-negative, in the list's order.
    """

    axis: int
    indices: tuple[int, ...]

    def row_key(self, k: int, ndim: int) -> tuple[Any, ...]:
        """The basic key of the ``k``-th listed index (every other axis whole; a trailing
        ``...`` makes a 0-d view, not a scalar copy, of a one-dimensional array)."""
        return tuple(self.indices[k] if a == self.axis else slice(None) for a in range(ndim)) + (Ellipsis,)

    def value_key(self, k: int, value_shape: tuple[int, ...], ndim: int) -> tuple[Any, ...] | None:
        """The basic key picking the ``k``-th listed index's part of a value of shape
        ``value_shape`` (broadcast against the indexed shape), or ``None`` when the value
        does not vary along the listed axis (it is used whole)."""
        pos = self.axis - (ndim - len(value_shape))   # broadcasting aligns trailing axes
        if pos < 0:
            return None
        return (slice(None),) * pos + (0 if value_shape[pos] == 1 else k, Ellipsis)


def _constant_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def listed_key(key: Any, shape: tuple[int, ...]) -> ListedKey | None:
    """``key`` as a :class:`ListedKey` when it is a list (or tuple of a list and whole
    slices ``:``) of at most :data:`MAX_LISTED` constant integers, else ``None``.

    Raises ``IndexError`` as NumPy does for an index out of bounds.

    Examples
    --------
    >>> listed_key([0, -1], (5,))
    ListedKey(axis=0, indices=(0, 4))
    >>> listed_key((slice(None), [2, 0]), (3, 4))
    ListedKey(axis=1, indices=(2, 0))
    >>> listed_key((slice(1, 2), [0]), (3, 4)) is None   # a partial slice: not handled here
    True
    """
    items = key if isinstance(key, tuple) else (key,)
    if len(items) > len(shape):
        return None
    lists = [a for a, k in enumerate(items) if isinstance(k, list)]
    if len(lists) != 1:
        return None
    axis = lists[0]
    listed = items[axis]
    if not listed or len(listed) > MAX_LISTED or not all(_constant_int(i) for i in listed):
        return None
    if any(k != slice(None) for a, k in enumerate(items) if a != axis):
        return None
    n = shape[axis]
    indices = []
    for i in listed:
        if not -n <= int(i) < n:
            raise IndexError(f"index {int(i)} is out of bounds for axis {axis} with size {n}")
        indices.append(int(i) % n)
    return ListedKey(axis, tuple(indices))
