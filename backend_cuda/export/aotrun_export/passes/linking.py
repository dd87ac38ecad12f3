"""Link option: model libraries are linked with `-Wl,--as-needed`.

Guarantee: while `as_needed_linking()` is active, every link command
AOTInductor runs (torch._inductor.cpp_builder.CppBuilder, commands that
link a shared object) gets `-Wl,--as-needed` right after the compiler, so
the library records a DT_NEEDED entry only for the libraries it uses: a
model without OpenMP code does not need libgomp (Inductor adds `-fopenmp`
/ `-lgomp` to every link on Linux). Compile-only commands are unchanged.

Thread safety: the patch is a count of active users behind a lock. The
first user installs the wrapper, the last one restores the original, and
a user that leaves early does not take it away from one still compiling
(save/restore per user would: thread A restores the original while thread
B links, or B saves A's wrapper as "the original" and leaves it installed
for good).
"""

import contextlib
import threading

FLAG = "-Wl,--as-needed"


class CommandPatch:
    """Adds a flag to the link commands a builder class produces, for as
    long as at least one user is inside `active()`."""

    def __init__(self, owner_loader, attr="get_command_line", flag=FLAG):
        self._owner_loader = owner_loader   # returns the class to patch
        self._attr = attr
        self._flag = flag
        self._lock = threading.Lock()
        self._users = 0
        self._original = None
        self._owner = None

    @property
    def users(self) -> int:
        with self._lock:
            return self._users

    def _wrap(self, original):
        flag = self._flag

        def get_command_line(builder, *args, **kwargs):
            cmd = original(builder, *args, **kwargs)
            if not getattr(builder, "_do_link", True) or flag in cmd:
                return cmd
            compiler, _, rest = cmd.partition(" ")
            return f"{compiler} {flag} {rest}" if rest else cmd
        get_command_line.__wrapped__ = original
        return get_command_line

    @contextlib.contextmanager
    def active(self):
        with self._lock:
            if self._users == 0:
                self._owner = self._owner_loader()
                self._original = self._owner.__dict__[self._attr]
                setattr(self._owner, self._attr, self._wrap(self._original))
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1
                if self._users == 0:
                    setattr(self._owner, self._attr, self._original)
                    self._original = self._owner = None


def _cpp_builder():
    from torch._inductor.cpp_builder import CppBuilder
    return CppBuilder


_PATCH = CommandPatch(_cpp_builder)


def as_needed_linking():
    """Context manager: AOTInductor links with -Wl,--as-needed inside."""
    return _PATCH.active()
