"""What :func:`~devtensor.library.check` takes and gives: :class:`Sample` (one call's arguments),
:class:`CheckProblem` (one disagreement found) and :class:`CheckReport` (all of them, with what ran)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["CheckProblem", "CheckReport", "Sample"]


@dataclass(frozen=True, slots=True)
class Sample:
    """One sample for :func:`check`: positional and keyword arguments (tensors on any device; they are copied
    to each checked device, so the sample itself is never written)."""

    args: tuple[Any, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CheckProblem:
    """One problem found by :func:`check`.

    ``kind``: ``"meta"`` (meta and real output disagree, or the meta function fails or depends on data),
    ``"exception"`` (a variant raised), ``"values"`` (variants or devices disagree), ``"unwritten"`` (the kernel
    left output elements unwritten), ``"mutation"`` (an argument other than the output changed), ``"version"``
    (wrong version bumps), ``"result"`` (the wrong object, shape, dtype or device came back).
    """

    kind: str
    op: str
    key: str
    variant: str
    sample: int
    message: str

    def __str__(self) -> str:
        return f"[{self.kind}] {self.op} on {self.key}, {self.variant}, sample {self.sample}: {self.message}"


@dataclass
class CheckReport:
    """What :func:`check` found: ``problems`` (empty when all is well), ``runs`` (``(sample, key, variant)`` run)
    and ``skipped`` (why a key or variant was not run)."""

    op: str
    problems: list[CheckProblem] = field(default_factory=list)
    runs: list[tuple[int, str, str]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether no problem was found."""
        return not self.problems

    def kinds(self) -> set[str]:
        """The kinds of the problems found."""
        return {problem.kind for problem in self.problems}

    def raise_if_failed(self) -> None:
        """Raise AssertionError listing the problems, if any."""
        if self.problems:
            raise AssertionError(str(self))

    def __str__(self) -> str:
        head = f"check({self.op}): {len(self.runs)} runs, {len(self.problems)} problem(s)"
        lines = [head, *(f"  {problem}" for problem in self.problems), *(f"  skipped: {why}" for why in self.skipped)]
        return "\n".join(lines)
