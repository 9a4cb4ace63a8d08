"""The package's layout rules (docs/design.md): no hand-written module over 600 lines (the compiled core's C files
included); generated ones are exempt."""

from __future__ import annotations

from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "devtensor"
PLUGIN = PACKAGE.parent / "devtensor_mypy"
GENERATED = {"kernel_signatures.py", "cpu.py", "cuda.py"}


def _hand_written() -> list[Path]:
    return [
        p
        for p in sorted([*PACKAGE.rglob("*.py"), *PACKAGE.glob("_core*.[ch]"), *PLUGIN.rglob("*.py")])
        if not p.name.startswith("_generated_") and not (p.parent == PACKAGE and p.name in GENERATED)
    ]


@pytest.mark.parametrize("path", _hand_written(), ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_hand_written_modules_are_at_most_600_lines(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= 600, f"{path.relative_to(PACKAGE.parent)}: split it by concern"
