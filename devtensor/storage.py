"""The storage record every view of one piece of memory shares (:class:`Storage`): the version counter, the
owner of the memory for the overlap checks, whether devtensor owns the memory, and the views alive on it.
Re-exported by :mod:`devtensor.tensor`."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from devtensor.tensor import Tensor

__all__ = ["Storage"]


class Storage:
    """The record every view of one piece of memory shares.

    Attributes:
        version: the version counter (PyTorch's): every mutation through any view bumps it by one.
        root: the object that owns the memory; tensors with different roots never overlap.
        owned: whether devtensor allocated the memory (False for tensors wrapping the caller's memory:
            ``from_numpy``, ``asarray`` without a copy, ``from_dlpack``); memory devtensor does not own is
            never reallocated by an out= resize, since the caller's array would silently stop seeing the tensor.
        views: weak references to the tensors sharing this storage, recorded once a view is taken (the base and
            each view; None while there is none), so that an out= resize can tell whether any other tensor is
            still alive on the memory (an out with live views is never resized: they would stop seeing it).
            Dead references are pruned as the list grows (see :meth:`add_view`), so it stays bounded by about
            twice the live views.
    """

    __slots__ = ("owned", "root", "version", "view_limit", "views")

    def __init__(self, root: object, version: int = 0, owned: bool = True) -> None:
        self.version = version
        self.root = root
        self.owned = owned
        self.views: list[weakref.ref[Tensor]] | None = None
        self.view_limit = 64

    def add_view(self, base: Tensor, view: Tensor) -> None:
        """Record that ``view`` shares this storage with ``base`` (``Backend.wrap_view`` does the same inline)."""
        views = self.views
        if views is None:
            self.views = [weakref.ref(base), weakref.ref(view)]
            return
        views.append(weakref.ref(view))
        if len(views) >= self.view_limit:
            self.prune_views()

    def prune_views(self) -> None:
        """Drop the references to collected tensors; the next pruning happens at twice the live count (at least
        64 entries), so pruning costs O(1) per view made."""
        if self.views is not None:
            self.views = [r for r in self.views if r() is not None]
            self.view_limit = max(64, 2 * len(self.views))

    def others_alive(self, tensor: Tensor) -> bool:
        """Whether any tensor other than ``tensor`` is alive on this storage (as a view or as the base of one)."""
        if self.views is None:
            return False
        self.prune_views()
        return any(r() is not tensor for r in self.views or ())

    def __repr__(self) -> str:
        alive = 0 if self.views is None else sum(r() is not None for r in self.views)
        return f"Storage(version={self.version}, owned={self.owned}, views_alive={alive})"
