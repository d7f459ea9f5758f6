# SPDX-License-Identifier: GPL-2.0-or-later
"""The journal of a sweep store: one record a chunk, appended by its writer; torn or foreign
records are not trusted; a run folds the journal into the bookkeeping arrays; stores of the
previous format (a mark and a checksum file a chunk) are still resumed and verified."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import zarr

from daskcl.sweep import Sweep, open_result, run, store, verify
from daskcl.sweep.journal import NAME, Book, parse, record


def _spec() -> dict:
    return {"sweep": {"function": "pnorm", "chunks": {"q": 2, "sd": 1}},
            "axes": {"q": {"linspace": [-2.0, 2.0, 6]}, "sd": {"values": [1.0, 2.0]}}}


def _journal(out: Path) -> Path:
    return out / "_daskcl" / "done" / "journal"


def test_records_parse_and_a_torn_or_damaged_one_is_left_out() -> None:
    a, b = record(0, [1, 2]), record(5, [3, 4])
    assert len(a) == 4 + 8 + 8 + 4
    assert parse(a + b, 2, 6) == [(0, (1, 2)), (5, (3, 4))]
    assert parse(a + b[:-1], 2, 6) == [(0, (1, 2))]                  # torn by a kill
    flipped = bytearray(a)
    flipped[9] ^= 1
    assert parse(bytes(flipped) + b, 2, 6) == [(5, (3, 4))]          # a bit changed
    assert parse(a + b, 2, 5) == [(0, (1, 2))]                       # beyond the grid
    assert NAME.fullmatch("w-0123456789abcdef") and not NAME.fullmatch("notes.txt")


def test_a_run_folds_its_journal_and_leaves_no_file(tmp_path: Path) -> None:
    out = tmp_path / "o.zarr"
    res = run(Sweep.from_dict(_spec()), out, client="sync")
    assert res.computed == 6
    assert not _journal(out).exists()
    g = open_result(out)
    assert g["_daskcl/done"].chunks == g["_daskcl/done"].shape == (3, 2)
    assert g["_daskcl/done"][...].all()
    assert [int(c) for c in g["_daskcl/checksum"][1, 0]] == [
        store.checksum(g["pnorm"][2:4, 0:1], store.algorithm(g["_daskcl/checksum"]))]
    # the chunk files of the result, one a chunk; the bookkeeping, one file an array
    assert len(list((out / "_daskcl" / "done" / "c").rglob("*"))) <= 3


def test_a_killed_runs_journal_counts_and_a_foreign_file_does_not(tmp_path: Path) -> None:
    """Records a killed run left (not folded) mark their chunks done for verify and resume;
    a journal file that is not the user's is not trusted (its chunk is computed again) and
    not deleted."""
    out = tmp_path / "o.zarr"
    run(Sweep.from_dict(_spec()), out, client="sync")
    g = zarr.open_group(str(out), mode="r+")
    sums = g["_daskcl/checksum"][...]
    g["_daskcl/done"][...] = 0                         # as if the run was killed before folding
    _journal(out).mkdir()
    (_journal(out) / "w-00000000000000aa").write_bytes(
        b"".join(record(f, [int(sums[f // 2, f % 2, 0])]) for f in (0, 1, 2, 3)))
    foreign = _journal(out) / "w-00000000000000bb"
    foreign.write_bytes(record(4, [int(sums[2, 0, 0])]))
    if os.getuid() == 0:
        os.chown(foreign, 12345, 12345)
    else:
        foreign.unlink()
        os.symlink(_journal(out) / "w-00000000000000aa", foreign)    # not a regular file
    assert verify(str(out)) == (6, [], [(2, 0), (2, 1)])
    res = run(Sweep.from_dict(_spec()), out, client="sync", resume=True)
    assert (res.computed, res.skipped) == (2, 4)
    assert verify(str(out)) == (6, [], [])
    assert sorted(p.name for p in _journal(out).iterdir()) == [foreign.name]
    assert open_result(out)["_daskcl/done"][...].all()


def test_a_record_whose_values_changed_is_computed_again(tmp_path: Path) -> None:
    out = tmp_path / "o.zarr"
    run(Sweep.from_dict(_spec()), out, client="sync")
    g = zarr.open_group(str(out), mode="r+")
    g["_daskcl/done"][0, 0] = 0
    _journal(out).mkdir()
    (_journal(out) / "w-00000000000000aa").write_bytes(record(0, [12345]))  # not its values
    assert verify(str(out)) == (6, [(0, 0)], [])
    with pytest.warns(RuntimeWarning, match=r"1 finished chunk\(s\) no longer matched"):
        res = run(Sweep.from_dict(_spec()), out, client="sync", resume=True)
    assert res.computed == 1 and verify(str(out)) == (6, [], [])


def _as_format_3(out: Path) -> None:
    """Rewrite a store's bookkeeping as daskcl-sweep/3 wrote it: a zarr chunk (a file) a
    chunk's mark and a chunk's checksums."""
    g = zarr.open_group(str(out), mode="r+")
    done, sums = g["_daskcl/done"][...], g["_daskcl/checksum"][...]
    algo = g["_daskcl/checksum"].attrs["algorithm"]
    book = g["_daskcl"]
    dims = list(g["_daskcl/done"].metadata.dimension_names)
    new_done = book.create_array("done", shape=done.shape, chunks=(1, 1), dtype="uint8", fill_value=0,
                      compressors=None, dimension_names=dims, overwrite=True)
    new_sums = book.create_array("checksum", shape=sums.shape, chunks=(1, 1, sums.shape[-1]),
                      dtype="uint32", fill_value=0, compressors=None,
                      dimension_names=[*dims, "output"], attributes={"algorithm": algo},
                      overwrite=True)
    new_done[...] = done
    new_sums[...] = sums
    info = json.loads(g.attrs["daskcl"])
    info["format"] = "daskcl-sweep/3"
    now = zarr.open_group(str(out), mode="r", use_consolidated=False)
    info["array_meta"] = {k: store.meta_hash(now[k]) for k in info["array_meta"]}
    g.attrs.update({"daskcl": json.dumps(info, sort_keys=True),
                    "daskcl_format": "daskcl-sweep/3"})
    zarr.consolidate_metadata(str(out))


@pytest.mark.filterwarnings("ignore:Consolidated metadata")
def test_a_store_of_the_third_format_still_resumes_and_verifies(tmp_path: Path) -> None:
    out = tmp_path / "o.zarr"
    full = run(Sweep.from_dict(_spec()), out, client="sync").arrays["pnorm"]
    _as_format_3(out)
    g = zarr.open_group(str(out), mode="r+")
    assert g["_daskcl/done"].chunks == (1, 1)
    assert verify(str(out)) == (6, [], [])
    g["_daskcl/done"][1, 1] = 0
    g["pnorm"][0:2, 0:1] = -1.0
    assert verify(str(out)) == (6, [(0, 0)], [(1, 1)])
    with pytest.warns(RuntimeWarning, match="no longer matched"):
        res = run(Sweep.from_dict(_spec()), out, client="sync", resume=True)
    assert (res.computed, res.skipped) == (2, 4)
    g = open_result(out)
    np.testing.assert_array_equal(g["pnorm"][...], full)
    assert g["_daskcl/done"].chunks == (1, 1) and g["_daskcl/done"][...].all()
    assert json.loads(g.attrs["daskcl"])["format"] == "daskcl-sweep/3"
    assert verify(str(out)) == (6, [], [])


def test_book_is_marks_and_checksums() -> None:
    b = Book(np.zeros((2, 3), bool), np.zeros((2, 3, 1), np.uint32), "crc32c")
    assert b.done.shape == (2, 3) and b.sums.shape == (2, 3, 1)
