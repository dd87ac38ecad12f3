"""The link patch (passes/linking.py): -Wl,--as-needed on AOTInductor's link
commands while an export runs, installed and removed by a count of users
behind a lock.

Checked to fail without the patch: with CommandPatch.active() yielding
without installing anything, test_flag_only_on_link_commands and the
thread test fail (no flag); the thread schedule also fails for the
save/restore variant (test_save_restore_would_break_under_threads shows
why the count is needed). The real compile check is in
test_export_passes_e2e.py."""

import threading

from aotrun_export.passes.linking import FLAG, CommandPatch


def _fake_builder():
    class FakeBuilder:
        """Stands for torch._inductor.cpp_builder.CppBuilder."""

        def __init__(self, link=True):
            self._do_link = link

        def get_command_line(self):
            if self._do_link:
                return "g++ a.o b.o -shared -fopenmp -o m.so -lgomp"
            return "g++ a.cpp -c -fopenmp -o a.o"
    return FakeBuilder


def test_flag_only_on_link_commands_and_restored():
    cls = _fake_builder()
    original = cls.__dict__["get_command_line"]
    patch = CommandPatch(lambda: cls)
    with patch.active():
        link = cls(True).get_command_line()
        assert link.startswith(f"g++ {FLAG} a.o")
        assert link.count(FLAG) == 1
        assert cls(False).get_command_line() == "g++ a.cpp -c -fopenmp -o a.o"
        with patch.active():          # nested: still once
            assert cls(True).get_command_line().count(FLAG) == 1
        assert FLAG in cls(True).get_command_line()
    assert cls.__dict__["get_command_line"] is original
    assert FLAG not in cls(True).get_command_line()
    assert patch.users == 0


def _schedule(patch_cls, cls):
    """Thread A enters, B enters, A leaves, B links, B leaves: what B's
    link command was and whether the class is back to its original."""
    original = cls.__dict__["get_command_line"]
    patch = patch_cls(lambda: cls)
    a_in, b_in, a_out = threading.Event(), threading.Event(), \
        threading.Event()
    seen = {}

    def thread_a():
        with patch.active():
            a_in.set()
            b_in.wait()
        a_out.set()

    def thread_b():
        a_in.wait()
        with patch.active():
            b_in.set()
            a_out.wait()
            seen["b_link"] = cls(True).get_command_line()
    ts = [threading.Thread(target=thread_a), threading.Thread(target=thread_b)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    seen["restored"] = cls.__dict__["get_command_line"] is original
    return seen


def test_two_threads_exporting_at_once():
    seen = _schedule(CommandPatch, _fake_builder())
    assert seen["b_link"].count(FLAG) == 1, seen
    assert seen["restored"]


class _SaveRestore(CommandPatch):
    """What the count replaces: each user saves and restores."""

    def active(self):
        import contextlib

        @contextlib.contextmanager
        def ctx():
            owner = self._owner_loader()
            saved = owner.__dict__[self._attr]
            setattr(owner, self._attr, self._wrap(saved))
            try:
                yield
            finally:
                setattr(owner, self._attr, saved)
        return ctx()


def test_save_restore_would_break_under_threads():
    seen = _schedule(_SaveRestore, _fake_builder())
    # A restored the original while B was linking ...
    assert FLAG not in seen["b_link"]
    # ... and B saved A's wrapper as "the original" and put it back.
    assert not seen["restored"]


def test_many_threads_hammering():
    cls = _fake_builder()
    original = cls.__dict__["get_command_line"]
    patch = CommandPatch(lambda: cls)
    bad = []

    def work():
        for _ in range(200):
            with patch.active():
                if cls(True).get_command_line().count(FLAG) != 1:
                    bad.append(1)
    ts = [threading.Thread(target=work) for _ in range(8)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not bad
    assert cls.__dict__["get_command_line"] is original


def test_patches_inductors_builder(torch):
    from torch._inductor.cpp_builder import CppBuilder

    from aotrun_export.passes.linking import as_needed_linking
    original = CppBuilder.__dict__["get_command_line"]
    with as_needed_linking():
        assert CppBuilder.__dict__["get_command_line"].__wrapped__ is original
    assert CppBuilder.__dict__["get_command_line"] is original
