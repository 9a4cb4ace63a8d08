"""The storage record every view of one piece of memory shares (:class:`Storage`): the version counter, the
owner of the memory for the overlap checks, and whether devtensor owns the memory. Whether other tensors are alive
on the memory is read from the record's reference count (:func:`others_alive`): views cost nothing to track.
Re-exported by :mod:`devtensor.tensor`."""

from __future__ import annotations

import gc
import weakref
from sys import getrefcount
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from devtensor.tensor import Tensor

__all__ = ["ForeignStorage", "KeptViews", "Storage", "drop_kept_views", "memory_held_elsewhere", "others_alive"]

_ndarray = np.ndarray


class Storage:
    """The record every view of one piece of memory shares.

    Every tensor on the memory holds this one object (``Tensor._storage``): the base and each view (views are
    made by ``Backend.wrap_view``, which hands the base's record on). Nothing else keeps a reference beyond a
    call (plans key their stand-ins' storages by ``id``), so the reference count tells whether any other tensor
    is alive on the memory (:func:`others_alive`), at no cost per view made.

    Attributes:
        version: the version counter (PyTorch's): every mutation through any view bumps it by one.
        root: the object that owns the memory; tensors with different roots never overlap.
        owned: whether devtensor allocated the memory (False for tensors wrapping the caller's memory:
            ``from_numpy``, ``asarray`` without a copy, ``from_dlpack``); memory devtensor does not own is
            never reallocated by an out= resize, since the caller's array would silently stop seeing the tensor.
        shared: the storage of another tensor whose memory this one wraps (``from_dlpack`` of a devtensor
            tensor: a separate record with its own version), held so that the producer counts this tensor as
            alive on its memory and is never resized away from it; None otherwise.
    """

    # Only the two fields every record needs are slots: a result's record is made on every functional call, and
    # two stores are cheaper than four. ``owned`` and ``shared`` are the class's defaults here and per-record
    # fields only in :class:`ForeignStorage` (memory devtensor does not own, or shares with another record).
    __slots__ = ("root", "version")
    owned: bool = True
    shared: Storage | None = None

    def __init__(self, root: object, version: int = 0) -> None:
        self.version = version
        self.root = root

    def __repr__(self) -> str:
        # The tensors holding this record, found by a scan of the collector's objects: slow, but only a repr
        # pays it (the hot paths read the reference count instead).
        from devtensor.tensor import Tensor

        tensors = sum(isinstance(r, Tensor) and r._storage is self for r in gc.get_referrers(self))
        return f"Storage(version={self.version}, owned={self.owned}, tensors={tensors})"


class ForeignStorage(Storage):
    """A :class:`Storage` whose ``owned`` and ``shared`` are its own: the record of memory devtensor does not own
    (``from_numpy``, ``asarray`` without a copy, ``from_dlpack``; ``owned`` False until set otherwise), or of a
    tensor that wraps another record's memory (``shared``). Made by ``Backend.wrap(..., owned=False)``."""

    __slots__ = ("owned", "shared")

    def __init__(self, root: object, version: int = 0, owned: bool = False) -> None:
        self.version = version
        self.root = root
        self.owned = owned
        self.shared = None


def _references(tensor: Tensor) -> int:
    return getrefcount(tensor._storage)


class KeptViews:
    """A static plan's views of one argument, kept between replays (devtensor.plan.replay): ``entry`` is None or
    ``(the argument's array, its view tensors, their arrays)``. They count as live views of the argument like
    any, so a resize of it (an ``out=`` of another shape) first drops every plan's kept views
    (:func:`drop_kept_views`): they are a cache, made again on the next replay."""

    __slots__ = ("__weakref__", "entry")

    def __init__(self) -> None:
        self.entry: Any = None
        _KEPT.add(self)


_KEPT: weakref.WeakSet[KeptViews] = weakref.WeakSet()


def drop_kept_views() -> None:
    """Drop every plan's kept views of its arguments (one store per cache: a replay in progress keeps the entry
    it read)."""
    for kept in list(_KEPT):
        kept.entry = None


def memory_held_elsewhere(tensor: Tensor) -> bool:
    """Whether something other than devtensor's own records holds a CPU tensor's memory: a NumPy array from
    ``t.numpy()`` or ``np.asarray(t)`` kept by the caller, a tensor that wraps such an array (``from_numpy``,
    ``asarray``), or a DLPack export. Read from the reference count of the NumPy array that owns the memory (the
    storage's root), which holds one reference from the record and one from the tensor's array (the root itself,
    or its ``base``) when nothing else does. Other arrays (CuPy's, foreign roots) answer False."""
    return _root_references(tensor) > _ROOT_ALONE


def _root_references(tensor: Tensor) -> int:
    """getrefcount of the NumPy array that owns ``tensor``'s memory; -1 where that is not ``tensor``'s array or
    its ``base`` (CuPy's arrays, foreign roots)."""
    root = tensor._storage.root
    if type(root) is not _ndarray:
        return -1
    # (tensor._array read in place, never held in a variable: that would be one more reference to root)
    if tensor._array is not root and (type(tensor._array) is not _ndarray or tensor._array.base is not root):
        return -1
    return getrefcount(root)


def others_alive(tensor: Tensor) -> bool:
    """Whether any tensor other than ``tensor`` is alive on its memory: a view of it, the base it views, another
    view of that base, or a tensor that wraps its memory through ``from_dlpack``. Read from the reference count
    of the storage record (the only references are the tensors' ``_storage`` slots and ``Storage.shared``), so
    the caller must not hold the record in a variable of its own while asking. A tensor kept alive only by a
    reference cycle counts until the cycle is collected."""
    return _references(tensor) > _ALONE


def _calibrate() -> tuple[int, int]:
    """The readings of :func:`_references` and :func:`_root_references` for a tensor alone on its storage, whose
    array is the root (calibrated once, on a stand-in tensor: the interpreter's own references to an argument
    differ between versions)."""

    class _Probe:
        __slots__ = ("_array", "_storage")
        _array: object
        _storage: Storage

    probe = _Probe()
    probe._array = np.empty(1)
    probe._storage = Storage(probe._array)
    return _references(probe), _root_references(probe)  # type: ignore[arg-type]


_ALONE, _ROOT_ALONE = _calibrate()
