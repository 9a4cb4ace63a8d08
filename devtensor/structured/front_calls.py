"""The generic front's kernel call (:mod:`devtensor.structured.generic`): the handler for the call's key, the
functional result (allocated, or made by the direct call), PyTorch's out and inplace rules around the write
(:mod:`devtensor.structured.rules`: resize, overlap, temporaries, writability, the floating-point rule) and the
device guard.

The direct path (meta.DIRECT): while the handler is the op's built-in CPU kernel, the front makes the kernel's
one NumPy call itself (a ufunc, or ``np.matmul``, ``np.concatenate``, ...), into the out, the inplace self or a
fresh array; given no out, the call allocates the result itself where the array it makes is the one the
allocating path would make: on the CPU (no device guard), an array (a 0-d ufunc result is a NumPy scalar unless
asked with ``out=...``), C-contiguous (1-d; a ufunc asked for C order; every tensor operand C-contiguous, as NumPy
lays a fresh result out as its inputs otherwise; or up to meta.FRESH_C dims whatever the operands' layouts), of
the meta's dtype (the direct ops' meta functions resolve dtypes as NumPy's ufunc does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import numpy as np

from devtensor.dispatcher import META_ONLY, DispatchKey
from devtensor.meta import FRESH_C, ONE
from devtensor.structured import rules
from devtensor.structured.annotations import TENSOR, TENSOR_LIST
from devtensor.structured.tables import _call_direct, _inline_kind, meta_values
from devtensor.tensor import Storage, Tensor
from devtensor.typed.const_out import InplaceOut, new_const_out, set_array

if TYPE_CHECKING:
    from devtensor.structured.front_checks import Checks
    from devtensor.structured.registry import StructuredOp

__all__ = ["Calls"]

# The direct call's kinds: none, an inline unary or binary op's ufunc, and tables.py's _call_direct kinds.
_NONE, _UNARY, _BINARY, _ARRAYS, _SCALARS, _PLAN, _LIST = range(7)
_KINDS: Final = {"arrays": _ARRAYS, "scalars": _SCALARS, "plan": _PLAN, "list": _LIST}
# What the kernel writes: a fresh result; an existing out; an inplace self's own memory; an inplace self through
# a temporary when another input is exactly self (an op that cannot write over its input).
_FRESH, _OUT, _OWN, _TEMP = range(4)
#: The direct call did not make the result: the allocating path runs.
_NOT: Final = object()
_new_object: Final = object.__new__


def _arrays(items: list[Tensor]) -> list[Any]:
    """The arrays of a tensor list (two tensors without a comprehension)."""
    return [items[0]._array, items[1]._array] if len(items) == 2 else [t._array for t in items]


class Calls:
    """An op variant's kernel call and result; ``binding`` (key, refined class): the handler is looked up for that
    key. ``checks``: the variant's argument checks, whose tables (parameters, inputs) are shared."""

    def __init__(
        self,
        op: StructuredOp,
        name: str,
        functional: bool,
        binding: tuple[DispatchKey, type[Tensor]] | None,
        checks: Checks,
    ) -> None:
        params = op.schema.params
        self.name = name
        self.key = None if binding is None else binding[0]
        self.handlers, self.resolve = op.table.handlers, op.table.resolve
        self.may = op.out_may_be_input
        self.npos, self.nparams, self.kw_names = checks.npos, checks.nparams, checks.kw_names
        self.plan = op.schema.plan is not None
        self.tensor_at = checks.tensor_at
        self.first_name = params[0].name
        # (index, a tensor list?) of the inputs an out or an inplace self is checked against for overlap
        self.overlap_at = tuple((i, params[i].category == TENSOR_LIST) for i in checks.tensor_at)
        self.others_at = tuple(i for i in checks.tensor_at if i != 0)
        self.inplace_overlap_at = tuple(x for x in self.overlap_at if x[0] != 0)
        direct = meta_values(op).get("_direct")
        self.direct = direct
        inline = _inline_kind(op)[0]
        kind = _call_direct(op)
        self.dkind = (
            _NONE
            if direct is None
            else _UNARY
            if inline == "unary"
            else _BINARY
            if inline == "binary"
            else _KINDS[kind or ""]
        )
        self.scaled = len(params) == 3 and self.dkind == _BINARY
        self.ordered = self.dkind in (_UNARY, _BINARY) and isinstance(direct[1], np.ufunc)  # type: ignore[index]
        self.fresh_c = int(getattr(op.meta, FRESH_C, 0))
        self.tensor_index = tuple(i for i, p in enumerate(params) if p.category == TENSOR)
        self.number_at = tuple((i, p.default) for i, p in enumerate(params) if p.category != TENSOR)
        self.is_tensor = tuple(p.category == TENSOR for p in params)

    def handler(self, device: Any) -> Any:
        key = self.key if self.key is not None else device.key
        handler = self.handlers.get(key)
        if handler is None:
            handler = self.resolve(key, str(device))
        return handler

    def kernel_args(self, values: list[Any], spec: Any) -> tuple[list[Any], dict[str, Any]]:
        """The handler's arguments: the positional parameters', then the keyword-only ones (and the plan)."""
        kw = dict(zip(self.kw_names, values[self.npos : self.nparams], strict=True)) if self.kw_names else {}
        if self.plan:
            kw["plan"] = spec[2]
        return values[: self.npos], kw

    # --- the direct call ---------------------------------------------------------------------------------------

    def _ordered(self, operands: tuple[Any, ...], shape: tuple[int, ...]) -> Any:
        # (a ufunc lays a result of 2 or more dims out in C order when asked; a 0-d one as an array, not a scalar)
        d = self.direct[1]  # type: ignore[index]
        if len(shape) == 1:
            return d(*operands)
        return d(*operands, order="C") if shape else d(*operands, out=...)

    def direct_fresh(self, values: list[Any], spec: Any, handler: Any, device: Any) -> Any:
        """The direct call making the result itself, where its array is the allocating path's; else _NOT."""
        direct = self.direct
        if handler is not direct[0]:  # type: ignore[index]
            return _NOT
        kind, shape, d = self.dkind, spec[0], direct[1]  # type: ignore[index]
        try:
            if kind == _BINARY:
                a, b = values[0], values[1]
                at, bt = isinstance(a, Tensor), isinstance(b, Tensor)
                one = not self.scaled or values[2] is ONE
                if not one and not (at and bt and a._dtype is b._dtype) or device._guard is not None:
                    return _NOT
                operands = (a._array if at else a, b._array if bt else b)
                if self.ordered and not self.scaled:
                    return self._ordered(operands, shape)
                if self.ordered:
                    layout = one or (a._array.flags.c_contiguous and b._array.flags.c_contiguous)
                else:
                    layout = (not at or a._array.flags.c_contiguous) and (not bt or b._array.flags.c_contiguous)
                if not (len(shape) == 1 or (shape and layout)):
                    return _NOT
                if not one:
                    return direct[2](a._array, b._array, values[2], None)  # type: ignore[index]
                return self._ordered(operands, shape) if self.ordered else d(*operands)
            if device._guard is not None:
                return _NOT
            if kind == _UNARY:
                x = values[0]._array
                if self.ordered:
                    return self._ordered((x,), shape)
                return d(x) if len(shape) == 1 or (shape and x.flags.c_contiguous) else _NOT
            if kind == _ARRAYS:
                arrays = [v._array for v in values[: self.nparams]]
                if self.fresh_c:
                    return d(*arrays) if 0 < len(shape) <= self.fresh_c else _NOT
                fits = len(shape) == 1 or (shape and all(x.flags.c_contiguous for x in arrays))
                return d(*arrays) if fits else _NOT
            if kind == _PLAN:
                tensors = [values[i] for i in self.tensor_index]
                first = tensors[0]
                if not self.fresh_c and not (spec[1] is first._dtype and first._array.flags.c_contiguous):
                    return _NOT
                return d(*[t._array for t in tensors], spec[2])
            if kind == _SCALARS:
                for i, default in self.number_at:
                    if values[i] is not default:
                        return _NOT
                tensors = [values[i] for i in self.tensor_index]
                for t in tensors:
                    if spec[1] is not t._dtype:
                        return _NOT
                return d(*[t._array for t in tensors], *[values[i] for i, _ in self.number_at])
            # _LIST: a 1-d result (C-contiguous), whose dtype NumPy's promotion gives as the meta function's
            dim = values[1]
            if type(dim) is int and len(shape) == 1:
                return d(_arrays(values[0]), dim)
            return _NOT
        except (ValueError, MemoryError) as error:  # (a result too big: the allocating path's error)
            rules.alloc_failed(self.name, spec, error, device)

    def direct_into(self, values: list[Any], spec: Any, array: Any) -> bool:
        """The direct call writing ``array``; False where the kernel's own conversion is needed (a list's dim of
        another type than int)."""
        kind, d = self.dkind, self.direct[1]  # type: ignore[index]
        if kind == _BINARY:
            a, b = values[0], values[1]
            a = a._array if isinstance(a, Tensor) else a
            b = b._array if isinstance(b, Tensor) else b
            if not self.scaled or values[2] is ONE:
                d(a, b, out=array)
            else:
                self.direct[2](a, b, values[2], array)  # type: ignore[index]
        elif kind == _UNARY:
            d(values[0]._array, array)
        elif kind == _ARRAYS:
            d(*[v._array for v in values[: self.nparams]], out=array)
        elif kind == _SCALARS:
            d(*[v._array if t else v for v, t in zip(values, self.is_tensor, strict=False)], array)
        elif kind == _PLAN:
            d(*[values[i]._array for i in self.tensor_index], spec[2], array)
        else:
            if type(values[1]) is not int:
                return False
            d(_arrays(values[0]), values[1], array)
        return True

    # --- the write -------------------------------------------------------------------------------------------------

    def write(
        self, values: list[Any], spec: Any, handler: Any, array: Any, target: Any, inputs: tuple[Any, ...], mode: int
    ) -> None:
        """The kernel's write of ``array`` for ``target`` (out, inplace self; None for a fresh result): the direct
        call while the handler is the built-in kernel, else the handler with a ConstOut over ``array``. For an
        existing target: memory made read-only behind devtensor's back after its writability was checked makes
        NumPy refuse the write (ReadOnlyError); a floating-point condition made an error leaves the result
        written and the version bumped (rules.written_then_raised, rules.complete_after_condition), then
        propagates."""
        tname = "out" if mode == _OUT else self.first_name
        if mode != _TEMP and self.dkind != _NONE and handler is self.direct[0]:  # type: ignore[index]
            if target is None:
                if self.direct_into(values, spec, array):
                    return
            else:
                try:
                    if self.direct_into(values, spec, array):
                        return
                except ValueError:
                    rules.check_writable(self.name, tname, target)
                    raise
                except (Warning, FloatingPointError):  # (one call writes all, then reports)
                    rules.written_then_raised(target, array)
                    raise
        if handler is META_ONLY:
            return
        if mode == _OWN or (mode == _TEMP and array is target._array):
            const_out: Any = InplaceOut()
        else:  # (a temporary is not self's memory: a kernel must not read self through it)
            const_out = new_const_out()
        set_array(const_out, array.view())
        args, kw = self.kernel_args(values, spec)
        if target is None:
            handler(*args, out=const_out, **kw)
            return
        try:
            handler(*args, out=const_out, **kw)
        except ValueError:
            rules.check_writable(self.name, tname, target)
            raise
        except (Warning, FloatingPointError):
            if mode == _OWN:  # (an inplace self's own memory: the kernel wrote it all)
                target._storage.version += 1
            else:
                rules.complete_after_condition(target, array, inputs, handler, const_out, *args, **kw)
            raise

    def guarded(
        self, device: Any, values: list[Any], spec: Any, handler: Any, array: Any, target: Any, inputs: Any, mode: int
    ) -> None:
        """:meth:`write`, inside the device's guard where it has one."""
        guard = device._guard
        if guard is None:
            self.write(values, spec, handler, array, target, inputs, mode)
        else:
            with guard():
                self.write(values, spec, handler, array, target, inputs, mode)

    def _allocate(self, values: list[Any], spec: Any, handler: Any, device: Any, backend: Any) -> Any:
        try:
            array = backend.alloc(spec[0], spec[1])
        except (ValueError, MemoryError) as error:
            rules.alloc_failed(self.name, spec, error, device)
        self.write(values, spec, handler, array, None, (), _FRESH)
        return array

    # --- the variants ----------------------------------------------------------------------------------------------

    def functional(self, values: list[Any], spec: Any, found: tuple[Any, Any]) -> Any:
        """The functional variant's result: a new tensor, or ``out`` written (resized where it must be)."""
        device, first = found
        handler = self.handler(device)
        out = values[self.nparams]
        if out is None:
            backend = first._backend
            array = _NOT
            if self.dkind != _NONE:
                array = self.direct_fresh(values, spec, handler, device)
            if array is _NOT:
                guard = device._guard
                if guard is None:
                    array = self._allocate(values, spec, handler, device, backend)
                else:
                    with guard():
                        array = self._allocate(values, spec, handler, device, backend)
            result = _new_object(backend.tensor_class)
            result._array = array
            result._device = device
            # (the record made inline, as Storage(array) makes it, without the call)
            result._storage = storage = _new_object(Storage)
            storage.root = array
            storage.version = 0
            result._shape = spec[0]
            result._dtype = array.dtype
            result._write_checked = True
            return result
        inputs = tuple(values[i] for i in self.tensor_at)
        name, may = self.name, self.may
        if out._shape != spec[0] or spec[1] is not out._dtype or not out._write_checked:
            array = rules.prepare_out(name, out, spec, inputs, may)
        else:
            # Fast path: out already has the result's shape and dtype and was checked writable before; only the
            # overlap with this call's inputs is left to check. An out exactly an input of an op that cannot write
            # over its input is written through a temporary (rules.check_pair says so).
            array = out._array
            root = out._storage.root
            for i, is_list in self.overlap_at:
                v = values[i]
                if is_list:
                    if rules.check_overlap(name, "out", out, v, may) and not may:
                        array = rules.temporary(name, out)
                elif isinstance(v, Tensor) and v._storage.root is root:
                    if rules.check_pair(name, "out", out, v, may) and not may:
                        array = rules.temporary(name, out)
        self.guarded(device, values, spec, handler, array, out, inputs, _OUT)
        # (a resized result, or a temporary when out is an input of an op that cannot write over it)
        if array is not out._array:
            rules.finish_out(name, out, array)
        out._storage.version += 1
        return out

    def inplace(self, values: list[Any], spec: Any, found: tuple[Any, Any]) -> Any:
        """The inplace variant's result: ``self`` written (never resized)."""
        device = found[0]
        self_ = values[0]
        handler = self.handler(device)
        name, may = self.name, self.may
        if spec[0] != self_._shape or spec[1] is not self_._dtype or not self_._write_checked:
            others = tuple(values[i] for i in self.others_at)
            array = rules.prepare_inplace(name, self_, spec, others, may)
        else:
            array = self_._array
            root = self_._storage.root
            for i, is_list in self.inplace_overlap_at:
                v = values[i]
                if is_list:
                    if rules.check_overlap(name, "self", self_, v, may) and not may:
                        array = rules.temporary(name, self_)
                elif isinstance(v, Tensor) and v._storage.root is root and (not may or v is not self_):
                    if rules.check_pair(name, "self", self_, v, may) and not may:
                        array = rules.temporary(name, self_)
        if may:
            # Writes self's own memory always: no temporary.
            self.guarded(device, values, spec, handler, self_._array, self_, (), _OWN)
        else:
            # Another input exactly self (self passed again included): computed into a temporary, copied in.
            every = tuple(values[i] for i in self.tensor_at)
            self.guarded(device, values, spec, handler, array, self_, every, _TEMP)
            if array is not self_._array:
                rules.copy_back(self_, array)
        self_._storage.version += 1
        return self_
