"""Counts of the typing corpus (tests/typing/) under mypy --strict with the plugin, mypy --strict alone and pyright
strict (basedpyright or pyright, when installed): misuse lines caught, and correct files with a false positive.

A fail_ file marks each misuse line ``# E: <mypy code>``; ``# E: <code> !pyright`` marks a misuse pyright cannot
see (the plugin's checks). A pass_ file holds correct code only.

    python scripts/typing_corpus.py [ROOT]

ROOT (default: this checkout) is the repository whose devtensor is checked; the corpus is always this
checkout's tests/typing/ (so that another revision's devtensor can be measured on today's corpus).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
CORPUS = HERE / "tests" / "typing"
EXPECT = re.compile(r"#\s*E:\s*(?P<code>[a-z-]+)(?P<mypy_only>\s+!pyright)?\s*$")
MYPY_LINE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): error: ")


def expected(path: Path) -> dict[int, bool]:
    """line -> whether pyright is expected to catch it too."""
    found: dict[int, bool] = {}
    for number, text in enumerate(path.read_text().splitlines(), start=1):
        match = EXPECT.search(text)
        if match:
            found[number] = match["mypy_only"] is None
    return found


def mypy_errors(root: Path, files: list[Path], plugin: bool) -> dict[str, set[int]]:
    config = (root / "mypy.ini").read_text()
    if not plugin:
        config = re.sub(r"(?m)^plugins\s*=.*$", "", config)
    with tempfile.TemporaryDirectory() as tmp:
        ini = Path(tmp) / "mypy.ini"
        ini.write_text(config.replace("mypy_path = stubs", f"mypy_path = {root / 'stubs'}"))
        done = subprocess.run(
            [sys.executable, "-m", "mypy", "--config-file", str(ini), "--no-incremental", *map(str, files)],
            cwd=root,
            capture_output=True,
            text=True,
        )
    errors: dict[str, set[int]] = defaultdict(set)
    for line in done.stdout.splitlines():
        match = MYPY_LINE.match(line)
        if match:
            errors[Path(match["path"]).name].add(int(match["line"]))
    return errors


def pyright_errors(root: Path, files: list[Path]) -> dict[str, set[int]] | None:
    exe = shutil.which("basedpyright") or shutil.which("pyright")
    if exe is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "pyrightconfig.json"
        config.write_text(
            json.dumps(
                {
                    "typeCheckingMode": "strict",
                    "stubPath": str(root / "stubs"),
                    "pythonVersion": "3.11",
                    "extraPaths": [str(root)],
                }
            )
        )
        done = subprocess.run(
            [exe, "-p", str(config), "--outputjson", *map(str, files)], capture_output=True, text=True
        )
    errors: dict[str, set[int]] = defaultdict(set)
    for diag in json.loads(done.stdout)["generalDiagnostics"]:
        if diag["severity"] == "error":
            errors[Path(diag["file"]).name].add(diag["range"]["start"]["line"] + 1)
    return errors


def main(argv: list[str]) -> int:
    root = Path(argv[0]).resolve() if argv else HERE
    with tempfile.TemporaryDirectory() as tmp:
        # The corpus is copied beside nothing: each checker resolves devtensor from ROOT only.
        files = []
        for path in sorted(CORPUS.glob("*.py")):
            target = Path(tmp) / path.name
            target.write_text(path.read_text())
            files.append(target)
        results = {
            "mypy --strict + plugin": mypy_errors(root, files, plugin=True),
            "mypy --strict": mypy_errors(root, files, plugin=False),
            "pyright strict": pyright_errors(root, files),
        }
        fail = [p for p in files if p.name.startswith("fail_")]
        passing = [p for p in files if p.name.startswith("pass_")]
        total = sum(len(expected(p)) for p in fail)
        for checker, errors in results.items():
            if errors is None:
                print(f"{checker}: not installed")
                continue
            caught = sum(1 for p in fail for line in expected(p) if line in errors.get(p.name, set()))
            promised = [
                (p, line) for p in fail for line, both in expected(p).items() if both or "pyright" not in checker
            ]
            caught_promised = sum(1 for p, line in promised if line in errors.get(p.name, set()))
            false_pos = [p.name for p in passing if errors.get(p.name)]
            stray = sum(len(errors.get(p.name, set()) - set(expected(p))) for p in fail)
            print(
                f"{checker}: misuse lines caught {caught}/{total} (of those it is meant to catch: "
                f"{caught_promised}/{len(promised)}); pass files with errors {len(false_pos)}/{len(passing)} "
                f"{false_pos}; unmarked error lines in fail files {stray}"
            )

    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
