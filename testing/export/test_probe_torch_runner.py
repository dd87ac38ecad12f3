"""CPU checks of testing/gpu/probe_torch_runner.py's helpers (issue 12:
why torch's runner dies on the GPU machine): the compiler facts it
records and the crash reporter's rerun, which must keep a preload the
load variant already has (the compiler's libstdc++ for package_cxxrt)."""

import os
import shutil
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "testing", "gpu"))
import probe_torch_runner as ptr  # noqa: E402


@pytest.mark.skipif(shutil.which(os.environ.get("CXX") or "g++") is None,
                    reason="no g++ ($CXX) on this machine")
def test_compiler_facts_name_the_compiler_and_its_runtime():
    facts = ptr.compiler_facts()
    assert facts["compiler"].startswith(("g++", "c++", "clang"))
    lib = facts["compiler_libstdcxx"]
    assert lib is None or (os.path.isabs(lib) and "libstdc++" in lib)


def test_mapped_libstdcxx_reads_this_process():
    got = ptr.mapped_libstdcxx()
    with open("/proc/self/maps") as f:
        mapped = any("libstdc++" in line for line in f)
    assert (got is not None) == mapped


def test_native_frames_keep_the_variants_preload(tmp_path):
    # A stand-in for the loader: prints what it was given, as the reporter would.
    cmd = ["sh", "-c", 'echo "crash_backtrace: preload=$LD_PRELOAD"; exit 139']
    env = dict(os.environ, LD_PRELOAD="/usr/lib/libstdc++.so.6")
    lines = ptr.native_frames(cmd, env, "reporter.so")
    want = os.path.abspath("reporter.so") + " /usr/lib/libstdc++.so.6"
    assert lines == [f"crash_backtrace: preload={want}"]
    env.pop("LD_PRELOAD")
    assert ptr.native_frames(cmd, env, "reporter.so") == [
        f"crash_backtrace: preload={os.path.abspath('reporter.so')}"]


def test_save_replaces_the_results_whole(tmp_path):
    # Rewritten after each step: a reader never sees half a file, and no
    # temporary file stays behind.
    out = tmp_path / "probe.json"
    ptr.save(str(out), {"runtime": {"compiler": "g++"}})
    ptr.save(str(out), {"runtime": {"compiler": "g++"}, "export": {"rc": -9}})
    import json
    assert json.loads(out.read_text())["export"] == {"rc": -9}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["probe.json"]
