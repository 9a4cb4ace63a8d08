"""The README's Python snippets run as a new user would paste them: every ```python block of README.md, in order,
top to bottom, in one namespace (a later block may use what an earlier one defined, and must not depend on a
name it does not define itself or that an earlier block left with another meaning), in a fresh working directory.

A block that cannot run as pasted says so in the README, on the line right before its fence, as an HTML comment
(invisible on a rendered page) with its reason: ``<!-- not-run: a module of a user's package -->``. Such blocks
must still be valid Python; keep them few (the kernel author's files of a package that does not exist here)."""

from __future__ import annotations

import ast
import contextlib
import io
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("dask.array")  # (the Dask section's snippet; the dev extra installs Dask)

README = Path(__file__).resolve().parents[1] / "README.md"
NOT_RUN = re.compile(r"<!-- not-run: (?P<reason>\S.*?) -->")


@dataclass(frozen=True)
class Block:
    """One ```python block: the README line of its first code line, its code, why it is not run (None: it runs)."""

    line: int
    code: str
    not_run: str | None


def readme_blocks(text: str) -> list[Block]:
    """The ```python blocks of ``text`` in order. Raises AssertionError for an unclosed block and for a not-run
    marker that is not right before a ```python fence (a marker the test would silently miss)."""
    lines = text.splitlines()
    blocks: list[Block] = []
    markers = {i for i, line in enumerate(lines) if "not-run" in line}
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```python":
            end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
            assert end is not None, f"README.md:{i + 1}: a ```python block without its closing fence"
            marker = NOT_RUN.fullmatch(lines[i - 1].strip()) if i else None
            if marker:
                markers.discard(i - 1)
            blocks.append(Block(i + 2, "\n".join(lines[i + 1 : end]), marker["reason"] if marker else None))
            i = end
        i += 1
    assert not markers, [f"README.md:{i + 1}: a not-run marker not right before a ```python fence" for i in markers]
    return blocks


def test_the_readme_snippets_run_as_pasted_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = readme_blocks(README.read_text(encoding="utf-8"))
    runs = [b for b in blocks if b.not_run is None]
    assert len(runs) >= 8 and len(runs) > 2 * (len(blocks) - len(runs)), "most snippets run"
    monkeypatch.chdir(tmp_path)  # (the saving snippet writes ckpt.dt into the working directory)
    namespace: dict[str, object] = {"__name__": "__readme__"}
    for block in runs:
        code = compile(block.code, f"README.md:{block.line}", "exec")
        with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                exec(code, namespace)
            except Exception as e:
                raise AssertionError(f"the README's snippet at line {block.line} fails as pasted: {e!r}") from e
        # (a warning printed to a user pasting the snippet is a fault of the snippet too)
        assert not caught, (block.line, [f"{w.category.__name__}: {w.message}" for w in caught])
    assert (tmp_path / "ckpt.dt").exists()


def test_snippets_marked_not_run_are_valid_python() -> None:
    for block in readme_blocks(README.read_text(encoding="utf-8")):
        if block.not_run is not None:
            ast.parse(block.code, f"README.md:{block.line}")


def test_a_misplaced_marker_and_an_unclosed_block_are_reported() -> None:
    with pytest.raises(AssertionError, match="not right before"):
        readme_blocks("<!-- not-run: why -->\n\n```python\nx = 1\n```\n")
    with pytest.raises(AssertionError, match="closing fence"):
        readme_blocks("```python\nx = 1\n")
    (block,) = readme_blocks("text\n<!-- not-run: why -->\n```python\nx = 1\n```\n")
    assert block == Block(4, "x = 1", "why")
