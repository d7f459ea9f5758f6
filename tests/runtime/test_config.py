# SPDX-License-Identifier: GPL-2.0-or-later
"""daskcl.config: keys read from DASKCL_* variables when they are read, set in code as a context
manager over them, checked where they are set and where they are read, carried to dask workers
by DaskclPlugin; and the errors module holding the one hierarchy."""

from __future__ import annotations

import pickle
import re
import warnings
from pathlib import Path

import distributed
import pytest

import daskcl
from daskcl import config
from daskcl.cluster import DaskclPlugin
from daskcl.errors import CacheWarning, ConfigError, DaskclError, DaskclWarning, SweepError
from daskcl.runtime import device, program

ENV = {key.env for key in config.KEYS.values()}


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    assert config.explicit() == {}


def test_defaults_without_environment() -> None:
    assert {name: config.get(name) for name in config.KEYS} == {
        "device": None, "accuracy": "r", "binning": "auto", "cache.dir": None, "cache.enabled": True,
        "cache.shared": "private", "fp_contract": False, "noinline": "auto", "library": None,
        "worker.warm": (), "worker.log_level": None, "transfer.mode": "auto",
        "transfer.threads": "auto", "transfer.pinned_limit": None, "build.link": "auto",
        "warnings": "deferred",
    }


def test_cached_values_follow_set_and_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """get() keeps what it read until set() changes something (and its block ends) or the
    variable's text changes; the stamp changes with either, and only then."""
    assert config.get("binning") == "auto"
    before = config.stamp()
    assert config.stamp() == before
    monkeypatch.setenv("DASKCL_BINNING", "1")
    assert config.get("binning") == "1" and config.stamp() != before
    monkeypatch.setenv("DASKCL_BINNING", "0")
    assert config.get("binning") == "0"
    env = config.stamp()
    with config.set(binning="256x16"):
        assert config.get("binning") == "256x16" and config.stamp() != env
        inside = config.stamp()
    assert config.get("binning") == "0" and config.stamp() not in (env, inside)
    config.set(binning="1")
    try:
        assert config.get("binning") == "1"
    finally:
        config._config.config.pop("binning", None)
        config._changed()
    monkeypatch.delenv("DASKCL_BINNING")
    assert config.get("binning") == "auto"
    monkeypatch.setenv("DASKCL_WARNINGS", "sometimes")
    with pytest.raises(ConfigError, match=r"DASKCL_WARNINGS='sometimes'.*deferred or immediate"):
        config.get("warnings")


def test_environment_is_read_when_a_key_is_read(monkeypatch: pytest.MonkeyPatch,
                                                tmp_path: Path) -> None:
    monkeypatch.setenv("DASKCL_NOINLINE", "1")
    assert config.get("noinline") is True
    monkeypatch.setenv("DASKCL_NOINLINE", "false")
    assert config.get("noinline") is False
    monkeypatch.setenv("DASKCL_NOINLINE", " auto ")
    assert config.get("noinline") == "auto"
    monkeypatch.setenv("DASKCL_NO_CACHE", "1")
    assert config.get("cache.enabled") is False
    monkeypatch.setenv("DASKCL_NO_CACHE", "0")
    assert config.get("cache.enabled") is True
    monkeypatch.setenv("DASKCL_CACHE_DIR", str(tmp_path))
    assert config.get("cache.dir") == tmp_path
    # "~" as a shell expands it unquoted (a quoted "~/x" made a directory named "~")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("DASKCL_CACHE_DIR", "~/daskcl-cache")
    assert config.get("cache.dir") == tmp_path / "daskcl-cache"
    with config.set({"library": "~/mylib"}):
        assert config.get("library") == tmp_path / "mylib"
    monkeypatch.setenv("DASKCL_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("DASKCL_BINNING", "128X4r80")
    assert config.get("binning") == "128x4r80"
    monkeypatch.setenv("DASKCL_WARM", "pnorm, qbeta,,glm:binomial:logit")
    assert config.get("worker.warm") == ("pnorm", "qbeta", "glm:binomial:logit")
    monkeypatch.setenv("DASKCL_WORKER_LOG_LEVEL", "warning")
    assert config.get("worker.log_level") == "WARNING"
    monkeypatch.setenv("DASKCL_CACHE_SHARED", "Group")
    assert config.get("cache.shared") == "group"
    monkeypatch.setenv("DASKCL_TRANSFER", " Pinned ")
    assert config.get("transfer.mode") == "pinned"
    monkeypatch.setenv("DASKCL_TRANSFER_THREADS", "4")
    assert config.get("transfer.threads") == 4
    monkeypatch.setenv("DASKCL_PINNED_LIMIT", "1048576")
    assert config.get("transfer.pinned_limit") == 1 << 20
    monkeypatch.setenv("DASKCL_DEVICE", " 0:1 ")
    assert config.get("device") == "0:1"
    monkeypatch.setenv("DASKCL_DEVICE", "")          # empty: unset
    assert config.get("device") is None
    # the modules read through it
    monkeypatch.setenv("DASKCL_FP_CONTRACT", "1")
    monkeypatch.setenv("DASKCL_NOINLINE", "0")
    assert program.default_options("GPU") == ("-DDASKCL_FP_CONTRACT",)
    assert program.cache_dir() == tmp_path
    monkeypatch.setenv("DASKCL_NO_CACHE", "yes")
    assert program.cache_dir() is None


def test_set_overrides_the_environment_in_a_block(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    monkeypatch.setenv("DASKCL_NOINLINE", "0")
    monkeypatch.setenv("DASKCL_CACHE_DIR", str(tmp_path / "env"))
    with daskcl.config.set({"noinline": True, "cache": {"dir": str(tmp_path / "code")}},
                           worker__warm=["pnorm"], fp_contract="1"):
        assert config.get("noinline") is True
        assert config.get("cache.dir") == tmp_path / "code"
        assert config.get("worker.warm") == ("pnorm",)
        assert program.default_options("CPU") == ("-DDASKCL_FP_CONTRACT", "-DDASKCL_NOINLINE")
        assert config.explicit() == {"cache.dir": tmp_path / "code", "fp_contract": True,
                                     "noinline": True, "worker.warm": ("pnorm",)}
        with config.set(noinline="auto"):                     # blocks nest
            assert config.get("noinline") == "auto"
        assert config.get("noinline") is True
    assert config.get("noinline") is False                    # the environment again
    assert config.get("cache.dir") == tmp_path / "env"
    assert config.explicit() == {}
    # a key set to None in code means its default, whatever the environment says
    monkeypatch.setenv("DASKCL_DEVICE", "no-such-device")
    with config.set(device=None):
        assert config.get("device") is None
    assert config.get("device") == "no-such-device"


def test_set_without_a_block_lasts_until_undone() -> None:
    done = config.set(binning=0)
    try:
        assert config.get("binning") == "0"
    finally:
        done.__exit__(None, None, None)
    assert config.explicit() == {}


@pytest.mark.parametrize(("key", "value", "allowed"), [
    ("noinline", "yes", "0 or 1, true or false, tiered, or auto"),
    ("binning", "fast", "0, 1, auto or WGxEPIrN"),
    ("binning", "0x4", "0, 1, auto or WGxEPIrN"),
    ("binning", "2048", "0, 1, auto or WGxEPIrN"),
    # a register cap beyond NVIDIA's (-cl-nv-maxrregcount 16 to 255) went to the compiler
    ("binning", "256x16r99999999999", "0, 1, auto or WGxEPIrN"),
    ("binning", "256x16r8", "0, 1, auto or WGxEPIrN"),
    ("cache.enabled", "sometimes", "0 or 1"),
    ("cache.shared", "everyone", "'group' or 'private'"),
    ("cache.dir", 3, "a directory path"),
    ("device", 0, "a 'P:D' pair"),
    ("worker.warm", 7, "kernel names"),
    ("worker.log_level", "loud", "a logging level"),
    ("transfer.mode", "fast", "auto, direct, pinned or staged"),
    ("transfer.threads", -1, "a number of threads from 0 to 64"),
    ("transfer.threads", 2.5, "a number of threads from 0 to 64"),
    ("transfer.pinned_limit", -1, "a number of bytes"),
])
def test_bad_values_are_refused_where_they_are_set(key: str, value: object,
                                                   allowed: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(f"config key {key!r} must be {allowed}")) \
            as err:
        config.set({key: value})
    # where the value came from: code, not the variable (which read as if it had)
    assert str(err.value).endswith(
        f"not {value!r} (set in code; its environment variable is {config.KEYS[key].env})")
    assert config.explicit() == {}
    assert issubclass(ConfigError, ValueError) and issubclass(ConfigError, DaskclError)


def test_one_bad_value_sets_nothing() -> None:
    with pytest.raises(ConfigError, match="'binning'"):
        config.set({"noinline": True, "binning": "fast"})
    assert config.explicit() == {}


def test_unknown_keys_are_refused() -> None:
    with pytest.raises(ConfigError, match="no config key 'no_inline'; its keys are: device, "):
        config.set(no_inline=True)
    with pytest.raises(ConfigError, match=r"no config key 'cache\.size'"):
        config.get("cache.size")


def test_bad_environment_values_name_the_variable_and_the_key(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DASKCL_NOINLINE", "yes")
    with pytest.raises(ConfigError, match=r"DASKCL_NOINLINE='yes' is not understood; "
                       r"DASKCL_NOINLINE must be 0 or 1.*\(config key 'noinline'\)"):
        config.get("noinline")
    monkeypatch.setenv("DASKCL_NO_CACHE", "maybe")
    with pytest.raises(ConfigError, match=r"DASKCL_NO_CACHE='maybe'.*'cache\.enabled'"):
        program.cache_dir()
    # a value set in code is used without reading the variable
    with config.set(noinline=False):
        assert config.get("noinline") is False


def test_plugin_checks_and_pickles_its_settings() -> None:
    with pytest.raises(ConfigError, match="config key 'noinline'"):
        DaskclPlugin(settings={"noinline": "maybe"})
    with config.set(binning="64x2", device="0:0"):
        plugin = DaskclPlugin(warm=["pnorm"])
    # the settings made in code when it was made, but not the device (each worker has its own)
    assert plugin.settings == {"binning": "64x2"}
    assert pickle.loads(pickle.dumps(plugin)).settings == {"binning": "64x2"}
    assert DaskclPlugin(settings={"cache": {"enabled": 0}}).settings == {"cache.enabled": False}


def _worker_config() -> dict[str, object]:
    from daskcl import config

    return {"noinline": config.get("noinline"), "explicit": config.explicit()}


@pytest.mark.slow
def test_plugin_carries_the_settings_to_its_workers() -> None:
    with config.set({"noinline": True, "cache.enabled": False}):
        plugin = DaskclPlugin()
    assert config.explicit() == {}
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        assert list(client.run(_worker_config).values()) == [{"noinline": "auto",
                                                               "explicit": {}}]
        client.register_plugin(plugin)
        got = client.run(_worker_config)
    assert list(got.values()) == [{"noinline": True,
                                   "explicit": {"noinline": True, "cache.enabled": False}}]
    assert config.explicit() == {}


def test_settings_reach_a_local_clusters_workers() -> None:
    """Settings made in code travel to local_cluster's worker processes (through their
    environment, read back by the same keys)."""
    assert config.environ({"noinline": True, "cache.enabled": False, "binning": "0",
                           "worker.warm": ("pnorm", "dnorm"), "library": None}) == {
        "DASKCL_NOINLINE": "1", "DASKCL_NO_CACHE": "1", "DASKCL_BINNING": "0",
        "DASKCL_WARM": "pnorm,dnorm"}
    from daskcl.cluster import local_cluster

    with config.set({"noinline": True, "cache.enabled": False}), \
            local_cluster(1, dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        got = list(client.run(_worker_config).values())
    assert [g["noinline"] for g in got] == [True]
    assert config.explicit() == {}


def test_modules_read_no_daskcl_variable_themselves() -> None:
    root = Path(daskcl.__file__).parent
    readers = re.compile(r"""(environ\.get\(|environ\[|getenv\()\s*["']DASKCL_""")
    found = [f"{path.relative_to(root)}:{n}"
             for path in sorted(root.rglob("*.py")) if path.name != "config.py"
             for n, line in enumerate(path.read_text().splitlines(), start=1)
             if readers.search(line)]
    assert found == []


def test_bound_device_keeps_its_facts_as_fields() -> None:
    bound = device.current()
    assert bound.max_alloc == int(bound.device.max_mem_alloc_size)
    assert bound.nv_compiler_options == (
        "cl_nv_compiler_options" in bound.device.extensions.split())
    assert isinstance(bound.resources, device.DeviceResources)
    assert not {"_max_alloc", "_nv_compiler_options", "_stages"} & set(vars(bound))


def test_errors_live_in_one_hierarchy_and_keep_their_old_homes() -> None:
    import daskcl.sweep
    import daskcl.sweep.spec

    assert daskcl.sweep.SweepError is daskcl.sweep.spec.SweepError is SweepError
    assert program.CacheWarning is CacheWarning
    assert issubclass(SweepError, DaskclError) and issubclass(SweepError, ValueError)
    assert issubclass(CacheWarning, DaskclWarning) and issubclass(DaskclWarning, UserWarning)
    with pytest.warns(DaskclWarning):
        warnings.warn("x", CacheWarning, stacklevel=1)
