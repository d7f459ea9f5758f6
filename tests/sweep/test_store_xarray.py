# SPDX-License-Identifier: GPL-2.0-or-later
"""A sweep's store as xarray and NetCDF read it: consolidated metadata, only results and
coordinates as variables, typed and labelled coordinates, CF attributes, every run in its
history."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np
import pytest
import zarr

from daskcl import nmath
from daskcl.sweep import Sweep, SweepError, chunks, open_result, run, store, verify
from daskcl.sweep.store import read_info

xr = pytest.importorskip("xarray")

ROOT = Path(__file__).resolve().parents[2]
BUDWORM = ROOT / "workflows" / "glm_envelope"


def _spec() -> dict:
    return {"sweep": {"function": "ptukey", "chunks": {"q": 3, "nmeans": 2}},
            "axes": {"q": {"linspace": [1.0, 4.0, 4]}, "nmeans": {"arange": [2, 6]},
                     "df": {"values": [5, 10]}},
            "args": {"nranges": 1.0}}


def test_store_opens_in_xarray_with_typed_labelled_coordinates(tmp_path: Path) -> None:
    out = tmp_path / "t.zarr"
    run(Sweep.from_dict(_spec()), out, client="sync")
    ds = xr.open_zarr(out)  # warnings are errors: no consolidated-metadata warning
    assert list(ds.data_vars) == ["ptukey"]
    assert set(ds.coords) == {"q", "nmeans", "df"}
    assert ds["ptukey"].dims == ("q", "nmeans", "df")
    assert ds["nmeans"].dtype == np.int32 and ds["nmeans"].values.tolist() == [2, 3, 4, 5]
    assert ds["df"].dtype == np.int32 and ds["df"].values.tolist() == [5, 10]
    assert ds["q"].dtype == np.float64 and ds["q"].values.tolist() == [1.0, 2.0, 3.0, 4.0]
    want = nmath.ptukey(np.array([1.0, 2, 3, 4])[:, None, None], 1.0,
                        np.array([2.0, 3, 4, 5])[None, :, None], np.array([5.0, 10])[None, None])
    np.testing.assert_array_equal(ds["ptukey"].values, want)
    np.testing.assert_array_equal(ds["ptukey"].sel(nmeans=3, df=10).values, want[:, 1, 1])
    # CF attributes, and the spec as JSON
    assert ds["ptukey"].attrs["long_name"] == "ptukey(q, nranges, nmeans, df)"
    assert all("long_name" in ds[c].attrs for c in ds.coords)
    assert ds.attrs["Conventions"] == "CF-1.10"
    assert ds.attrs["daskcl_function"] == "ptukey"
    assert ds.attrs["daskcl_format"] == "daskcl-sweep/4"
    assert json.loads(ds.attrs["daskcl_spec"])["axes"]["nmeans"] == {"arange": [2, 6]}
    assert all(isinstance(v, (str, int, float)) for v in ds.attrs.values())
    # the bookkeeping is there for daskcl, not a variable
    g = open_result(out)
    assert g["_daskcl/done"][...].all()
    assert verify(str(out)) == (4, [], [])


def test_store_round_trips_through_netcdf(tmp_path: Path) -> None:
    out = tmp_path / "t.zarr"
    run(Sweep.from_dict(_spec()), out, client="sync")
    ds = xr.open_zarr(out)
    nc = tmp_path / "t.nc"
    ds.to_netcdf(nc, engine="scipy")  # NETCDF3: string, number and 1-D attributes only
    back = xr.open_dataset(nc, engine="scipy")
    try:
        xr.testing.assert_identical(back.load(), ds.load())
        assert back["nmeans"].dtype == np.int32
        assert back.attrs["history"] == ds.attrs["history"]
    finally:
        back.close()


def test_glm_gradient_is_labelled_by_coefficient(tmp_path: Path) -> None:
    out = tmp_path / "e.zarr"
    run(Sweep.from_toml(BUDWORM / "envelope.toml"), out, client="sync")
    ds = xr.open_zarr(out)
    assert sorted(ds.data_vars) == ["grad", "qf"]
    assert ds["coefficient"].values.tolist() == ["intercept", "male", "ldose", "male_ldose"]
    assert ds["grad"].dims[-1] == "coefficient"
    assert ds["grad"].attrs["long_name"] and ds["qf"].attrs["long_name"]
    assert ds["intercept"].dtype == np.float64
    ds.to_netcdf(tmp_path / "e.nc", engine="scipy")
    back = xr.open_dataset(tmp_path / "e.nc", engine="scipy")
    try:
        assert back["coefficient"].values.tolist() == ["intercept", "male", "ldose",
                                                       "male_ldose"]
        np.testing.assert_array_equal(back["grad"].values, ds["grad"].values)
    finally:
        back.close()


def test_a_resumed_store_keeps_every_run_in_its_history(tmp_path: Path) -> None:
    out = tmp_path / "t.zarr"
    run(Sweep.from_dict(_spec()), out, client="sync")
    zarr.open_group(str(out), mode="r+")["_daskcl/done"][1, 0] = 0  # one chunk to go
    res = run(Sweep.from_dict(_spec()), out, client="sync", resume=True)
    assert res.computed == 1
    ds = xr.open_zarr(out)
    lines = ds.attrs["history"].splitlines()
    assert len(lines) == 3 and "created" in lines[0]
    assert " ran sweep ptukey: 4 chunks computed" in lines[1]
    assert " resumed sweep ptukey: 1 chunks computed" in lines[2]
    runs = read_info(open_result(out))["runs"]  # type: ignore[index]
    assert [(r["resumed"], r["chunks_computed"]) for r in runs] == [(False, 4), (True, 1)]


def _write_info(out: Path, info: dict[str, object]) -> None:
    """Write ``info`` as the ``daskcl`` attribute of the store at ``out`` by hand (as another
    daskcl version would), without consolidated metadata."""
    root = json.loads((out / "zarr.json").read_text())
    root.pop("consolidated_metadata", None)
    root["attributes"]["daskcl"] = json.dumps(info)
    (out / "zarr.json").write_text(json.dumps(root))


def _crc32_store(out: Path, fmt: str) -> np.ndarray:
    """Rewrite the checksums of the store at ``out`` as daskcl wrote them before CRC-32C (zlib's
    CRC-32 of each chunk's values, no ``algorithm`` attribute), its format ``fmt``, without
    consolidated metadata; returns the values."""
    g = zarr.open_group(str(out), mode="r+")
    values = g["ptukey"][...]
    sums = g["_daskcl/checksum"]
    for idx in np.ndindex(*sums.shape[:-1]):
        block = values[idx[0] * 3:idx[0] * 3 + 3, idx[1] * 2:idx[1] * 2 + 2]
        sums[idx] = [zlib.crc32(np.ascontiguousarray(block).data)]
    meta_path = out / "_daskcl" / "checksum" / "zarr.json"
    meta = json.loads(meta_path.read_text())
    meta.pop("attributes", None)
    meta_path.write_text(json.dumps(meta))
    info = read_info(g)
    assert info is not None
    info["format"] = fmt
    _write_info(out, info)
    return np.asarray(values)


def test_a_store_of_crc32_checksums_still_resumes_and_verifies(tmp_path: Path) -> None:
    """A ``daskcl-sweep/2`` store (CRC-32 checksums) is verified and resumed with its own
    algorithm: a corrupted chunk is found and written again with a CRC-32, nothing else is."""
    out = tmp_path / "t.zarr"
    run(Sweep.from_dict(_spec()), out, client="sync")
    assert store.algorithm(open_result(out)["_daskcl/checksum"]) == store.new_algorithm()
    want = _crc32_store(out, "daskcl-sweep/2")
    assert store.algorithm(open_result(out)["_daskcl/checksum"]) == "crc32"
    assert verify(str(out)) == (4, [], [])
    zarr.open_group(str(out), mode="r+")["ptukey"][3:4, 2:4] = -1.0
    assert verify(str(out)) == (4, [(1, 1, 0)], [])
    with pytest.warns(RuntimeWarning, match=r"1 finished chunk\(s\) no longer matched"):
        res = run(Sweep.from_dict(_spec()), out, client="sync", resume=True)
    assert (res.computed, res.skipped) == (1, 3)
    g = open_result(out)
    np.testing.assert_array_equal(g["ptukey"][...], want)
    assert int(g["_daskcl/checksum"][1, 1, 0, 0]) == zlib.crc32(
        np.ascontiguousarray(want[3:4, 2:4]).data)
    assert verify(str(out)) == (4, [], [])


@pytest.mark.parametrize("native", [True, False])
def test_checksums_are_crc32c_of_the_values(native: bool, monkeypatch: pytest.MonkeyPatch
                                            ) -> None:
    """CRC-32C (Castagnoli) of the values' bytes: the check value of its catalogue entry, and
    one computed bit by bit here; NaNs of any payload count as the same NaN.  Through the
    library called by ctypes (which releases the interpreter's lock: new stores use it), and
    through its Python binding (where the library is not found: verifying an existing store)."""
    assert chunks._crc32c_native() is not None and store.new_algorithm() == "crc32c"
    if not native:
        monkeypatch.setattr(chunks, "_crc32c_native", lambda: None)
        assert store.new_algorithm() == "crc32"

    def bitwise(data: bytes) -> int:
        crc = 0xFFFFFFFF
        for byte in data:
            crc ^= byte
            for _ in range(8):
                crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
        return crc ^ 0xFFFFFFFF

    assert bitwise(b"123456789") == 0xE3069283
    x = np.array([[0.5, -2.0, np.inf], [1e-300, 3.0, -0.0]])
    assert store.checksum(x, "crc32c") == bitwise(x.tobytes())
    assert store.checksum(x, "crc32") == zlib.crc32(x.tobytes())
    assert store.checksum(x[:, ::2], "crc32c") == bitwise(np.ascontiguousarray(x[:, ::2]).tobytes())
    nan2 = np.array([1.0, 2.0]).view(np.int64)
    nan2[1] = 0x7FF0000000000001          # a NaN with another payload
    assert store.checksum(nan2.view(np.float64), "crc32c") == bitwise(
        np.array([1.0, np.nan]).tobytes())
    assert store.checksum(np.empty((0, 3)), "crc32c") == 0
    with pytest.raises(ValueError, match="unknown checksum algorithm 'md5'"):
        store.algorithm(type("A", (), {"attrs": {"algorithm": "md5"}})())


def test_a_store_of_the_first_layout_still_resumes_and_verifies(tmp_path: Path) -> None:
    out = tmp_path / "t.zarr"
    run(Sweep.from_dict(_spec()), out, client="sync")
    want = _crc32_store(out, "daskcl-sweep/2")
    # the first layout: bookkeeping at the top, one nested attribute, no consolidated metadata
    info = read_info(open_result(out))
    assert info is not None
    info["format"] = "daskcl-sweep/1"
    (out / "_daskcl" / "done").rename(out / "_done")
    (out / "_daskcl" / "checksum").rename(out / "_checksum")
    (out / "_daskcl" / "zarr.json").unlink()
    (out / "_daskcl").rmdir()
    meta = json.loads((out / "zarr.json").read_text())
    meta.pop("consolidated_metadata", None)
    meta["attributes"] = {"daskcl": info}
    (out / "zarr.json").write_text(json.dumps(meta))
    g = zarr.open_group(str(out), mode="r+")
    g["_done"][0, 1, 0] = 0
    g["ptukey"][0:3, 2:4] = -1.0
    assert verify(str(out)) == (4, [], [(0, 1, 0)])
    res = run(Sweep.from_dict(_spec()), out, client="sync", resume=True)
    assert (res.computed, res.skipped) == (1, 3)
    np.testing.assert_array_equal(open_result(out)["ptukey"][...], want)
    again = read_info(open_result(out))
    assert again is not None and again["format"] == "daskcl-sweep/1"
    assert [r["chunks_computed"] for r in again["runs"]] == [4, 1]
    assert verify(str(out)) == (4, [], [])
    # --overwrite replaces it with the current layout
    run(Sweep.from_dict(_spec()), out, client="sync", overwrite=True)
    assert sorted(p.name for p in out.iterdir()) == ["_daskcl", "df", "nmeans", "ptukey", "q",
                                                      "zarr.json"]


def test_a_store_of_a_newer_format_is_refused_not_recomputed(tmp_path: Path) -> None:
    """A store written by a newer daskcl (format ``daskcl-sweep/5``) is not taken for one of
    this daskcl's: resuming or verifying it is a clear error that leaves every chunk as it is
    (an older reader would otherwise find every checksum wrong and compute the whole sweep
    again); ``--overwrite`` still replaces it, being daskcl's."""
    out = tmp_path / "t.zarr"
    run(Sweep.from_dict(_spec()), out, client="sync")
    g = zarr.open_group(str(out), mode="r+")
    info = read_info(g)
    assert info is not None and info["format"] == store.FORMAT
    info.update(format="daskcl-sweep/5", version="9.0")
    _write_info(out, info)
    before = open_result(out)["ptukey"][...]
    newer = (r"written by a newer daskcl \(9\.0, store format daskcl-sweep/5\); this daskcl "
             r"\(.+\) reads formats up to daskcl-sweep/4, so it cannot {} it: upgrade daskcl")
    with pytest.raises(SweepError, match=newer.format("resume")):
        run(Sweep.from_dict(_spec()), out, client="sync", resume=True)
    with pytest.raises(SweepError, match=newer.format("verify")):
        verify(str(out))
    np.testing.assert_array_equal(open_result(out)["ptukey"][...], before)
    # nor is one a newer daskcl was still preparing replaced on resume
    info["preparing"] = True
    _write_info(out, info)
    with pytest.raises(SweepError, match=newer.format("resume")):
        run(Sweep.from_dict(_spec()), out, client="sync", resume=True)
    np.testing.assert_array_equal(open_result(out)["ptukey"][...], before)
    assert store.newer_format({"format": "daskcl-sweep/10"})
    assert not store.newer_format({"format": "daskcl-sweep/4"})
    assert not store.newer_format({"format": "other/4"}) and not store.newer_format({})
    res = run(Sweep.from_dict(_spec()), out, client="sync", overwrite=True)
    assert res.computed == 4
    assert read_info(open_result(out))["format"] == store.FORMAT  # type: ignore[index]
