"""Elementwise cases shared by the CUDA tests: each op's CUDA impl against its CPU impl, in all three variants.

``tests/test_cuda_logic.py`` runs them through the NumPy-backed CuPy stand-in (every machine);
``tests/cuda/test_cuda_gpu.py`` runs the same cases on a real GPU with CuPy.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import devtensor as dt
from devtensor.structured import variant
from devtensor.tensor import Tensor

__all__ = ["CASES", "Case", "assert_same", "run_variants"]

_rng = np.random.default_rng(20240605)
_F = _rng.standard_normal((2, 3))  # float64
_G = _rng.standard_normal(3)  # broadcasts against _F
_POS = np.abs(_F) + 0.25
_EQ = _F.copy()
_EQ[:, 0] += 1.0  # equal to _F except in the first column
_I = _rng.integers(-9, 10, (2, 3))  # int64
_J = np.array([-3, 2, 5])  # no zeros: integer division by zero is platform-defined
_B = np.array([[True, False, True], [False, False, True]])
_C = np.array([True, True, False])
_COND = np.array([[True, False, False], [False, True, True]])


@dataclass(frozen=True)
class Case:
    """One call: ``devtensor.<op>(*args, **kwargs)``; NumPy arrays in ``args`` become tensors on the device."""

    op: str
    args: tuple[object, ...]
    kwargs: Mapping[str, object] = field(default_factory=dict)
    note: str = ""

    @property
    def id(self) -> str:
        kinds = ",".join(f"{a.dtype}{list(a.shape)}" if isinstance(a, np.ndarray) else repr(a) for a in self.args)
        extra = "".join(f",{k}={v!r}" for k, v in self.kwargs.items())
        return f"{self.op}({kinds}{extra}){self.note}"


CASES: tuple[Case, ...] = (
    Case("add", (_F, _G)),
    Case("add", (_F, 2.5), {"alpha": 2}),
    Case("add", (_I, _J), {"alpha": 3}),
    Case("add", (1.5, _F)),
    Case("sub", (_F, _G), {"alpha": 0.5}),
    Case("sub", (3, _I)),
    Case("mul", (_F, _G)),
    Case("mul", (_I, 2)),
    Case("div", (_F, _G)),
    Case("div", (_I, _J)),
    Case("div", (_F, _G), {"rounding_mode": "trunc"}),
    Case("div", (_F, _G), {"rounding_mode": "floor"}),
    Case("div", (_I, _J), {"rounding_mode": "trunc"}),
    Case("div", (_I, _J), {"rounding_mode": "floor"}),
    Case("div", (-7, _J), {"rounding_mode": "trunc"}),
    Case("remainder", (_F, _G)),
    Case("remainder", (_I, _J)),
    Case("pow", (_POS, _G)),
    Case("pow", (_I, 2)),
    Case("pow", (2.0, _F)),
    Case("neg", (_F,)),
    Case("neg", (_I,)),
    Case("abs", (_F,)),
    Case("abs", (_I,)),
    Case("exp", (_F,)),
    Case("log", (_POS,)),
    Case("sqrt", (_POS,)),
    Case("sin", (_F,)),
    Case("cos", (_F,)),
    Case("tanh", (_F,)),
    Case("sigmoid", (_F,)),
    Case("sigmoid", (_I,)),
    Case("maximum", (_F, _G)),
    Case("maximum", (_I, _J)),
    Case("minimum", (_F, _G)),
    Case("clamp", (_F, -0.5, 0.5)),
    Case("clamp", (_F,), {"max": 0.3}),
    Case("clamp", (_F,), {"min": -0.2}),
    Case("clamp", (_F, _G, _G + 0.5)),
    Case("clamp", (_I,), {"min": 0}),
    Case("where", (_COND, _F, _G)),
    Case("where", (_COND, _F, 0.0)),
    Case("where", (_COND, _I, _J)),
    Case("eq", (_F, _EQ)),
    Case("ne", (_F, _EQ)),
    Case("lt", (_F, _EQ)),
    Case("le", (_F, _EQ)),
    Case("gt", (_I, 0)),
    Case("ge", (_I, 0)),
    Case("logical_and", (_B, _C)),
    Case("logical_or", (_B, _C)),
    Case("logical_xor", (_F, _I)),
    Case("logical_not", (_B,)),
    Case("logical_not", (_F,)),
    Case("bitwise_and", (_I, _J)),
    Case("bitwise_or", (_B, _C)),
    Case("bitwise_xor", (_I, 6)),
    Case("bitwise_not", (_I,)),
    Case("bitwise_not", (_B,)),
    Case("bitwise_left_shift", (_I, np.abs(_J))),
    Case("bitwise_right_shift", (_I, 1)),
    Case("positive", (_F,)),
    Case("round", (_F * 10,)),
    Case("round", (_F,), {"decimals": 2}),
    Case("round", (_I * 7,), {"decimals": -1}),
    Case("round", (_I,)),
)


def _host(t: Tensor) -> np.ndarray[Any, Any]:
    return np.array(t.cpu().numpy(), copy=True)


def _args(case: Case, device: str) -> list[Any]:
    return [dt.tensor(a, device=device) if isinstance(a, np.ndarray) else a for a in case.args]


def run_variants(case: Case, device: str) -> dict[str, np.ndarray[Any, Any]]:
    """The case's result on ``device`` (copied to the host) from the functional, out and, where legal (PyTorch's
    rules: ``self`` is a tensor of the result's shape and the result casts same_kind to its dtype), the inplace
    variant. Checks that out and inplace return their output and bump its version once."""
    functional: Callable[..., Tensor] = variant(case.op, "functional")
    results: dict[str, np.ndarray[Any, Any]] = {}
    r = functional(*_args(case, device), **case.kwargs)
    assert str(r.device) == device, (case.id, r.device)
    results["functional"] = _host(r)
    out = dt.empty(r.shape, dtype=r.dtype, device=device)
    returned = functional(*_args(case, device), **case.kwargs, out=out)
    assert returned is out and out.version == 1, case.id
    results["out"] = _host(out)
    first = case.args[0]
    legal = (
        isinstance(first, np.ndarray)
        and case.op != "where"
        and r.shape == first.shape
        and np.can_cast(r.dtype, first.dtype, "same_kind")
    )
    if legal:
        inplace: Callable[..., Tensor] = variant(case.op, "inplace")
        args = _args(case, device)
        returned = inplace(*args, **case.kwargs)
        assert returned is args[0] and args[0].version == 1, case.id
        results["inplace"] = _host(args[0])
    return results


def assert_same(
    got: Mapping[str, np.ndarray[Any, Any]], want: Mapping[str, np.ndarray[Any, Any]], *, rtol: float
) -> None:
    """Same variants, dtypes and values (exactly when ``rtol`` is 0; NaNs compare equal)."""
    assert got.keys() == want.keys()
    for name, value in want.items():
        assert got[name].dtype == value.dtype, (name, got[name].dtype, value.dtype)
        if rtol == 0 or value.dtype.kind not in "fc":
            np.testing.assert_array_equal(got[name], value, err_msg=name, strict=True)
        else:
            np.testing.assert_allclose(got[name], value, rtol=rtol, atol=1e-300, err_msg=name, strict=True)
