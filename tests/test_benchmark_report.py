"""benchmarks/report.py writes where the user asks: by default a new temporary folder (printed), never the
checked-in benchmarks/results.md and plots unless asked by name; the report says which run it is (date, commit,
load). The measurements themselves take minutes and are not run here."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from helpers import loaded_example

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def report() -> Iterator[ModuleType]:
    yield from loaded_example(BENCHMARKS / "report.py", "benchmark_report")


def _tracked_state() -> dict[str, bytes]:
    files = [BENCHMARKS / "results.md", *sorted((BENCHMARKS / "plots").glob("*"))]
    return {str(f): f.read_bytes() for f in files if f.is_file()}


@pytest.fixture
def quick(report: ModuleType, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """report.report replaced by a stand-in that records the plots folder it is given (the measuring is slow)."""
    folders: list[Path] = []

    def measured(args: object, plots_folder: Path) -> str:
        folders.append(plots_folder)
        return "# Benchmark results\n"

    monkeypatch.setattr(report, "report", measured)
    return folders


def test_by_default_the_report_goes_to_a_new_temporary_folder(
    report: ModuleType, quick: list[Path], capsys: pytest.CaptureFixture[str]
) -> None:
    before = _tracked_state()
    report.main([])
    err = capsys.readouterr().err
    (folder,) = quick
    written = folder.parent / "results.md"
    assert written.read_text(encoding="utf-8") == "# Benchmark results\n"
    assert folder.parent.name.startswith("devtensor-bench-") and BENCHMARKS not in folder.parents
    assert f"wrote {written}" in err
    assert _tracked_state() == before
    written.unlink()
    folder.parent.rmdir()


def test_output_names_the_report_and_the_plots_go_beside_it(
    report: ModuleType, quick: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _tracked_state()
    target = tmp_path / "runs" / "today.md"
    report.main(["--output", str(target)])
    assert target.read_text(encoding="utf-8") == "# Benchmark results\n"
    assert quick == [tmp_path / "runs" / "plots"]
    assert f"wrote {target}" in capsys.readouterr().err
    assert _tracked_state() == before


def test_the_report_says_which_run_it_is(report: ModuleType) -> None:
    text = report.run_description(full=True)
    assert "`python benchmarks/report.py --full`" in text
    assert " on commit " in text and "load average" in text and "cores" in text
    assert "unknown" not in text.split(" on commit ")[1].split(".")[0]  # (this checkout is a git repository)
