# SPDX-License-Identifier: GPL-2.0-or-later
"""benchmarks/README.md and docs/benchmarks.rst are what benchmarks/report.py makes of the
recorded results: a record or a claim changed without regenerating the pages fails here."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def report():
    path = ROOT / "benchmarks" / "report.py"
    spec = importlib.util.spec_from_file_location("benchmarks_report", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module              # dataclasses look their module up by name
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(spec.name, None)


def test_pages_are_generated_from_the_records(report):
    for path, text in report.pages().items():
        assert path.read_text() == text, f"{path} is stale: run python3 benchmarks/report.py"
    assert report.main(["--check"]) == 0


def test_the_page_stays_one_page(report):
    assert len(report.markdown().split()) <= 2600


def test_every_claim_names_its_records_machine_date_and_bound(report):
    page = report.markdown()
    shown = set()
    for claim in report.CLAIMS:
        table = claim.table()
        assert table.rows, claim.title
        caption = report._caption(table)
        for rec in report._sources(table):
            shown.add(rec.name)
            assert f"`{rec.name}`" in caption and rec.device in caption and rec.date in caption
        assert table.bound or "bound" in table.cols, claim.title
    records = {p.name for p in report.RESULTS.glob("*.json")}
    assert shown <= records
    # every other record is listed by --others, and the page counts them
    others = {r.name for recs in report.other_records(shown).values() for r in recs}
    assert others == records - shown
    assert f"lists the {len(others)} records that no claim shows" in page


def test_newest_record_wins_for_the_same_row(report):
    rows = report.newest(lambda r: (r["function"], r["n"]),
                         ("delivered-gpu-h100.json", "delivered-end-gpu-h200.json"),
                         lambda r: r["n"] == 1 << 25 and "e2e_vs_cupy" in r)
    by = {r["function"]: rec.name for rec, r in rows}
    end = json.loads((report.RESULTS / "delivered-end-gpu-h200.json").read_text())
    assert end["machine"]["date"] > json.loads(
        (report.RESULTS / "delivered-gpu-h100.json").read_text())["machine"]["date"]
    assert by["pnorm"] == "delivered-end-gpu-h200.json"        # in both: the newer
    assert by["qbeta"] == "delivered-gpu-h100.json"            # only in the older


def test_check_reports_a_stale_page(report, tmp_path, monkeypatch, capsys):
    stale = tmp_path / "README.md"
    stale.write_text(report.markdown().replace("| pnorm |", "| pnorm (edited) |", 1))
    docs = tmp_path / "benchmarks.rst"
    docs.write_text(report.DOCS.read_text())
    monkeypatch.setattr(report, "README", stale)
    monkeypatch.setattr(report, "DOCS", docs)
    assert report.main(["--check"]) == 1
    assert "README.md" in capsys.readouterr().err
    assert "(edited)" in stale.read_text()                     # --check rewrites nothing
    assert report.main([]) == 0
    assert stale.read_text() == report.markdown()
