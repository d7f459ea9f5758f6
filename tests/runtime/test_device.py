# SPDX-License-Identifier: GPL-2.0-or-later
"""Device discovery and binding."""

from __future__ import annotations

import numpy as np
import pytest
from support.devices import with_unusable_devices

from daskcl.errors import NoFp64DeviceError, NoMatchingDeviceError, NoPlatformError
from daskcl.runtime import device


def test_list_devices_reports_fp64():
    found = device.list_devices()
    assert found
    assert any(info.fp64 for info, _ in found)


def test_choose_prefers_gpu_and_requires_probe():
    info, dev = device.choose(None)
    assert info.fp64
    assert device.probe_fp64(dev) is None
    types = [i.type for i, _ in device.list_devices() if i.fp64]
    if "GPU" in types:
        assert info.type == "GPU"


def test_choose_by_index_and_by_name(monkeypatch):
    info, _ = device.choose(None)
    assert device.choose(info.spec)[0] == info
    assert device.choose(info.name[:6].lower())[0].name == info.name
    monkeypatch.setenv("DASKCL_DEVICE", info.spec)
    assert device.choose()[0] == info


def test_no_match_lists_what_was_found(monkeypatch):
    monkeypatch.setenv("DASKCL_DEVICE", "no-such-device-xyz")
    with pytest.raises(NoMatchingDeviceError) as ei:
        device.choose()
    msg = str(ei.value)
    assert "no-such-device-xyz" in msg and "Devices found:" in msg
    with pytest.raises(NoMatchingDeviceError) as ei:
        device.choose("99:99")
    assert "A process binds one device" not in str(ei.value)
    # a node's list of devices, given to one process: said why it matches nothing
    with pytest.raises(NoMatchingDeviceError, match=r"matches '0:0,1:0' .*A process binds one "
                       r"device: a comma-separated list is for the workers of a node"):
        device.choose("0:0,1:0")


def test_no_fp64_device_lists_the_reason(monkeypatch):
    real = device.list_devices()
    fake = [(info.__class__(**{**info.__dict__, "fp64": False}), d) for info, d in real]
    monkeypatch.setattr(device, "list_devices", lambda: fake)
    with pytest.raises(NoFp64DeviceError, match="no cl_khr_fp64"):
        device.choose(None)


def test_failing_probe_is_reported(monkeypatch):
    monkeypatch.setattr(device, "probe_fp64", lambda d: "probe kernel computed [0.0]")
    with pytest.raises(NoFp64DeviceError, match=r"probe kernel computed \[0\.0\]"):
        device.choose(None)


def test_a_compiler_that_does_not_know_the_cpu_names_the_remedy(monkeypatch):
    """PyPI's PoCL 3.0 (LLVM 14) fails every build on an AMD Zen 5 with this message."""
    monkeypatch.setattr(device, "probe_fp64", lambda d: "probe kernel failed: RuntimeError: "
                        "clBuildProgram failed ... error: unknown target CPU 'generic'")
    with pytest.raises(NoFp64DeviceError, match="apt-get install pocl-opencl-icd"):
        device.choose(None)
    monkeypatch.setattr(device, "probe_fp64", lambda d: "probe kernel computed [0.0]")
    with pytest.raises(NoFp64DeviceError) as ei:
        device.choose(None)
    assert "pocl-opencl-icd" not in str(ei.value)


def test_a_probe_that_does_not_build_reports_the_compilers_errors(monkeypatch):
    """PyPI's PoCL 3.0 on an AMD Zen 5: the driver's text repeats its preamble and names the
    device before the one line that matters; the probe keeps the compiler's errors."""
    import pyopencl as cl

    def fails(prg, options=()):
        raise cl.RuntimeError(
            "clBuildProgram failed: BUILD_PROGRAM_FAILURE - clBuildProgram failed: "
            "BUILD_PROGRAM_FAILURE - clBuildProgram failed: BUILD_PROGRAM_FAILURE\n\nBuild on "
            "<pyopencl.Device 'pthread-AMD EPYC' on 'Portable Computing Language' at 0x55>:\n\n"
            "error: unknown target CPU 'generic'\nnote: valid target CPU values are: nocona, "
            + "core2, " * 60 + "\nerror: unknown target CPU 'generic'\n")

    monkeypatch.setattr(device, "build_program", fails)
    dev = device.list_devices()[0][1]
    assert device.probe_fp64(dev) == (
        "the probe kernel did not build (error: unknown target CPU 'generic')")


def test_no_platform(monkeypatch):
    import pyopencl as cl

    def none():
        raise cl.LogicError("clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR")

    monkeypatch.setattr(cl, "get_platforms", none)
    with pytest.raises(NoPlatformError, match="pip install daskcl\\[pocl\\]"):
        device.list_devices()


def test_bind_is_stable_and_rebinds():
    a = device.bind()
    assert device.current() is a
    assert device.bind() is a
    spec = a.info.spec
    b = device.bind(spec)
    assert b.info == a.info
    device.unbind()
    c = device.current()
    assert c.info == a.info


def test_binding_keeps_the_probes_binary_and_its_context(cache, monkeypatch):
    """A bind's probe is built once per cache: the next loads its binary (no compiler), one
    that cannot be used is passed over and replaced; the bound device takes the probe's
    context."""
    source = device._PROBE_SRC
    info, dev, ctx = device._choose_keeping_context(None)
    assert ctx is not None and ctx.devices == [dev]
    (entry,) = cache.rglob("*.probe")
    assert not list(cache.rglob("*.bin"))           # not a program: cache info counts none
    monkeypatch.setattr(device, "_PROBE_SRC", "this does not compile")
    assert device._choose_keeping_context(info.spec)[0] == info   # from the cached binary
    entry.write_bytes(b"garbage")
    monkeypatch.setattr(device, "_PROBE_SRC", source)
    assert device._choose_keeping_context(info.spec)[0] == info   # built again, and stored
    assert entry.read_bytes().startswith(b"DASKCL-BINARY-")
    # listing devices probes without the cache
    monkeypatch.setattr(device, "_PROBE_SRC", "this does not compile")
    assert "did not build" in device.probe_fp64(dev)


def test_programs_in_memory_belong_to_their_context():
    """A process that binds again gets a new context: the programs this process holds in
    memory are keyed by their context's OpenCL handle, so the new context builds or loads its
    own (keyed by the Python object's ``id``, a released context's entry could be taken for a
    new context's)."""
    from daskcl import nmath
    from daskcl.runtime import program

    a = device.current()
    x = np.linspace(-3.0, 3.0, 7)
    want = nmath.pnorm(x)
    src, opts = nmath.pnorm.source(), nmath.pnorm.build_options()
    assert program.in_memory(src, opts) is not None
    device.unbind()
    b = device.current()
    assert b is not a and b.context.int_ptr != a.context.int_ptr
    assert program.context_key(b) != program.context_key(a)
    assert program.in_memory(src, opts) is None       # a's program is not b's
    assert np.array_equal(nmath.pnorm(x), want)
    assert program.in_memory(src, opts) is not None


def test_compiler_output_does_not_reach_the_user():
    """A compiler that prints a log (NVIDIA's does for the fp64 probe) must not turn every
    first call into a CompilerWarning: device.build_program keeps the log out of warnings."""
    import warnings

    import pyopencl as cl

    src = "__kernel void k(__global int *o) { int x = 1.5; o[0] = x; }"  # a literal-conversion warning
    ctx = device.current().context
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cl.Program(ctx, src).build(cache_dir=False)
    if not any(issubclass(w.category, cl.CompilerWarning) for w in caught):
        pytest.skip("this device's compiler prints nothing for the test program")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        prg = device.build_program(cl.Program(ctx, src))
    assert prg.get_info(cl.program_info.KERNEL_NAMES) == "k"


def test_builds_leave_other_threads_warnings_alone():
    """A build does not swap the process's warning filters (a build on another thread, such
    as a background build, once undid a caller's ``catch_warnings`` block, turning its warnings
    into errors); pyopencl's compiler-output warning is dropped for the building thread only."""
    import threading
    import warnings

    import pyopencl as cl

    from daskcl.runtime import device

    seen: list[object] = []

    class FakeProgram:
        def build(self, options: list[str], cache_dir: object) -> str:
            seen.append(warnings.filters)
            cl.compiler_output("the compiler said something")    # dropped: this thread builds
            return "built"

    before = warnings.filters
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        inside = warnings.filters
        assert device.build_program(FakeProgram()) == "built"
        assert seen == [inside] and warnings.filters is inside
        done = threading.Event()

        def other() -> None:
            with device.quiet_compiler():
                done.wait(5)

        t = threading.Thread(target=other)
        t.start()
        cl.compiler_output("another thread's build is on")   # this thread: given
        done.set()
        t.join()
    assert warnings.filters is before
    assert [w.category for w in caught] == [cl.CompilerWarning]


def test_a_device_listing_gives_the_probes_verdict(monkeypatch):
    """The devices an error lists: fp64 as `daskcl devices` says it, the probe's verdict; a
    device whose probe fails was listed "fp64=yes" (it advertises cl_khr_fp64)."""
    real, broken, single = with_unusable_devices(monkeypatch, real_first=True)
    assert device.listing(device.list_devices()) == (
        f"{real.describe()} fp64=yes (probed); {broken.describe()} fp64=no (probe failed); "
        f"{single.describe()} fp64=no (extension)")
    with pytest.raises(NoMatchingDeviceError) as ei:
        device.choose("5:5")
    assert str(ei.value).endswith(
        f"Devices found: {real.describe()} fp64=yes (probed); {broken.describe()} fp64=no "
        f"(probe failed); {single.describe()} fp64=no (extension)")


FORKED = """
import os, sys
import numpy as np
from daskcl import nmath
from daskcl.errors import DeviceError
print(float(nmath.pnorm(0.5)), flush=True)
pid = os.fork()
if pid == 0:
    try:
        nmath.pnorm(np.array([1.0]))
    except DeviceError as exc:
        print("child:", exc, flush=True)
        os._exit(3)
    os._exit(0)
_, status = os.waitpid(pid, 0)
print("exit", os.waitstatus_to_exitcode(status), float(nmath.pnorm(1.0)), flush=True)
"""


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="no fork on this system")
def test_a_process_forked_after_opencl_started_is_told_so() -> None:
    """A child forked after the parent used its device (multiprocessing's default start on
    Linux) waited forever at its first launch: the drivers' threads are the parent's.  It now
    gets a DeviceError that says why and what to do, and the parent goes on."""
    from support.procs import run_python

    r = run_python(["-c", FORKED], timeout=120)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "0.691462461274013"
    assert lines[1].startswith("child: daskcl started OpenCL in process ")
    assert "this process was forked from it after that: OpenCL's drivers do not survive fork. " \
           "Start processes with the 'spawn' or 'forkserver' method" in lines[1]
    assert lines[2] == "exit 3 0.8413447460685429"
