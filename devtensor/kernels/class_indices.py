"""The range check of class indices that ``one_hot`` and ``cross_entropy`` share (before any write)."""

from __future__ import annotations

from typing import Any, Final

import numpy as np

from devtensor.errors import IndexOutOfRangeError

__all__ = ["check_classes"]

_np_max: Final = np.maximum.reduce
_np_min: Final = np.minimum.reduce


def check_classes(xp: Any, op: str, arg: str, idx: Any, n: int) -> None:
    """IndexError when an element of the integer array ``idx`` is outside ``[0, n)`` (one device sync)."""
    if idx.size == 0:
        return
    if xp is np:
        # One reduce: seen as unsigned, a negative index is at least 2**(bits - 1), above every valid one when
        # n is at most that (the reduce method np.amax calls, without its wrapper); the bad value itself is
        # looked up only for the message.
        twin = _UNSIGNED.get(idx.dtype)
        if twin is None:  # (unsigned)
            if int(_np_max(idx, None)) < n:
                return
        elif n <= twin[1] and int(_np_max(idx.view(twin[0]), None)) < n:
            return
        lo, hi = int(_np_min(idx, None)), int(_np_max(idx, None))
    else:
        lo, hi = int(xp.amin(idx)), int(xp.amax(idx))
    if lo < 0 or hi >= n:
        bad = lo if lo < 0 else hi
        raise IndexOutOfRangeError(
            f"{op}: class index {bad} in argument '{arg}' is out of bounds for {n} classes [0, {n})"
        )


#: Each signed integer dtype's unsigned twin (same size) and the least negative value seen through it
#: (2**(bits - 1)), for :func:`check_classes`'s view.
_UNSIGNED: Final = {np.dtype(f"i{k}"): (np.dtype(f"u{k}"), 1 << (8 * k - 1)) for k in (1, 2, 4, 8)}
