"""The typing tests: files in tests/typing/ that must type-check (pass_*.py), and files in which each line marked
``# E: code`` must fail with that mypy error code and no other line may fail (fail_*.py). One mypy run (with the
project's mypy.ini, so ``--strict``) checks them all; each file is one test."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

mypy_api = pytest.importorskip("mypy.api")

ROOT = Path(__file__).resolve().parents[1]
TYPING = ROOT / "tests" / "typing"
FILES = sorted(TYPING.glob("pass_*.py")) + sorted(TYPING.glob("fail_*.py"))
_ERROR = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): error: (?P<message>.*?)  \[(?P<code>[a-z-]+)\]$")
_EXPECT = re.compile(r"#\s*E:\s*(?P<code>[a-z-]+)\s*$")


@pytest.fixture(scope="module")
def mypy_errors() -> dict[str, dict[int, list[tuple[str, str]]]]:
    """path name -> line -> [(code, message)] for every error mypy reports on the typing files."""
    stdout, stderr, _ = mypy_api.run(
        ["--config-file", str(ROOT / "mypy.ini"), "--no-error-summary", "--show-error-codes", *map(str, FILES)]
    )
    assert not stderr.strip(), stderr
    found: dict[str, dict[int, list[tuple[str, str]]]] = defaultdict(lambda: defaultdict(list))
    for line in stdout.splitlines():
        match = _ERROR.match(line.strip())
        if match:
            found[Path(match["path"]).name][int(match["line"])].append((match["code"], match["message"]))
    return found


def _expected(path: Path) -> dict[int, str]:
    expected: dict[int, str] = {}
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        match = _EXPECT.search(text)
        if match:
            expected[number] = match["code"]
    return expected


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_typing_file(path: Path, mypy_errors: dict[str, dict[int, list[tuple[str, str]]]]) -> None:
    errors = mypy_errors.get(path.name, {})
    expected = _expected(path)
    if path.name.startswith("pass_"):
        assert not expected, "a pass_ file must not mark expected errors"
    problems: list[str] = []
    for line, code in expected.items():
        codes = [c for c, _ in errors.get(line, [])]
        if code not in codes:
            problems.append(f"line {line}: expected a [{code}] error, mypy gave {codes or 'none'}")
    for line, found in errors.items():
        for code, message in found:
            if expected.get(line) != code:
                problems.append(f"line {line}: unexpected [{code}] {message}")
    assert not problems, f"{path.name}:\n" + "\n".join(problems)


def test_every_fail_file_marks_errors() -> None:
    for path in TYPING.glob("fail_*.py"):
        assert _expected(path), f"{path.name} marks no expected error"
