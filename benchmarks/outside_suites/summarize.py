"""Summarise the JUnit XML of an outside suite run with devtensor and torch as backends.

For each file: per backend, tests run (passed + failed), passed, failed, skipped, xfailed; then every devtensor
failure, marked BOTH when the same test (its id with the backend replaced) fails on torch too, else ONLY, with the
first line of its message; then the torch-only failures. A test's backend is read from its parametrization id
(``devtensor``/``devtensor.array_api``, ``torch``); tests without one are counted as ``other``.

    python benchmarks/outside_suites/summarize.py out/stats.xml out/sklearn.xml
"""

from __future__ import annotations

import argparse
import re
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict

_BACKENDS = {"devtensor": "devtensor", "devtensor.array_api": "devtensor", "torch": "torch"}


def backend_and_key(name: str) -> tuple[str, str]:
    """The backend named in a test's parametrization id, and the test's name with that part replaced by ``<B>``."""
    match = re.search(r"\[(.*)\]$", name)
    if not match:
        return "other", name
    parts, backend = match.group(1).split("-"), "other"
    for i, part in enumerate(parts):
        if part in _BACKENDS:
            backend, parts[i] = _BACKENDS[part], "<B>"
    return backend, name[: match.start()] + "[" + "-".join(parts) + "]"


def summarize(path: str) -> None:
    """Print the counts and the failures of one JUnit XML file."""
    counts: defaultdict[str, Counter[str]] = defaultdict(Counter)
    status: dict[tuple[str, str], str] = {}
    messages: dict[tuple[str, str], str] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        backend, key = backend_and_key(f"{case.get('classname', '')}::{case.get('name', '')}")
        state = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                state = "failed"
                messages[backend, key] = " ".join((child.get("message") or "").split())[:240]
            elif child.tag == "skipped":
                state = "xfailed" if child.get("type") == "pytest.xfail" else "skipped"
        counts[backend][state] += 1
        status[backend, key] = state
    print(f"== {path}")
    for backend, c in sorted(counts.items()):
        print(
            f"  {backend:10s} run={c['passed'] + c['failed']} passed={c['passed']} failed={c['failed']} "
            f"skipped={c['skipped']} xfailed={c['xfailed']}"
        )
    failed = [k for (b, k), s in status.items() if b == "devtensor" and s == "failed"]
    only = [k for k in failed if status.get(("torch", k)) != "failed"]
    both = len(failed) - len(only)
    print(f"  devtensor failures {len(failed)}, also failing on torch {both}, devtensor-only {len(only)}")
    for key in failed:
        print(f"    {'ONLY' if key in only else 'BOTH'} {key}\n        {messages['devtensor', key]}")
    for (backend, key), state in status.items():
        if backend == "torch" and state == "failed" and status.get(("devtensor", key)) != "failed":
            print(f"    TORCH-ONLY {key}\n        {messages['torch', key]}")


def main() -> None:
    """Summarise each JUnit XML file named on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+", help="JUnit XML files (pytest --junitxml)")
    for path in parser.parse_args().files:
        summarize(path)


if __name__ == "__main__":
    main()
