"""A custom op whose meta function's postponed annotation cannot be resolved (issue 9, item 12): the error names
the annotation and its ``NameError``, and says that an explicit ``schema=`` works, which indeed it does."""

from __future__ import annotations

import custom_ops_unresolvable
import pytest

import devtensor as dt
from devtensor import library
from devtensor.errors import ArgumentTypeError


def test_the_error_says_an_explicit_schema_works_and_it_does() -> None:
    meta = custom_ops_unresolvable.scale_meta
    with pytest.raises(ArgumentTypeError) as info:
        library.custom_op("unresolvable_scale")(meta)
    message = str(info.value)
    assert "'Dims[int]'" in message and "parameter 'dims'" in message and "NameError" in message
    assert "explicit schema" in message
    assert "schema='unresolvable_scale(<type> self, <type> dims, *, <type> factor=2.0) -> Tensor'" in message
    assert isinstance(info.value.__cause__, NameError)
    with pytest.raises(KeyError):
        library.get_op("unresolvable_scale")  # nothing was registered
    op = library.custom_op(
        "unresolvable_scale", schema="unresolvable_scale(Tensor self, int[] dims, *, float factor=2.0) -> Tensor"
    )(meta)
    try:
        assert op.schema.params[1].name == "dims"
        assert library.get_op("unresolvable_scale") is op
        result = op.functional(dt.empty(2, 3, device="meta"), [0])  # meta runs the meta function only
        assert result.shape == (2, 3) and result.device.type == "meta"
    finally:
        library.remove_op(op)


def test_other_schema_errors_are_unchanged() -> None:
    def bad(self: dt.Tensor, x: object) -> tuple[tuple[int, ...], object]:
        return self.shape, self.dtype

    with pytest.raises(ArgumentTypeError) as info:
        library.custom_op("unsupported_annotation_op")(bad)  # type: ignore[arg-type]
    assert "explicit schema" not in str(info.value)
