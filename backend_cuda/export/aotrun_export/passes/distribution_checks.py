"""Tracing aid: `torch.distributions` argument checks become device asserts.

Guarantee: inside `distribution_checks_as_asserts()`, a distribution built
with `validate_args=True` (or with validation on by default) traces with
`torch.export.export`: each value check (`constraint.check(value)` in
`Distribution.__init__` and in `Distribution._validate_sample`, used by
`log_prob`, `cdf`, ...) records `torch._assert_async(valid.all(), msg)`
instead of branching in Python on the data. Shape checks, which are static,
still raise at trace time. The outputs are those of eager mode; the
`assert_async` pass then removes the recorded asserts before compiling
(see that pass for why the compiled program does not check values).

Why: torch 2.11's `Distribution` evaluates `if not torch._is_all_true(valid):
raise ValueError(...)`. On traced values that is a data-dependent guard
(`Eq(u0, 1)`), and `torch.export.export` fails with
GuardOnDataDependentSymNode, also with
`prefer_deferred_runtime_asserts_over_guards=True`.

How: `torch.distributions.distribution` reaches `_is_all_true` through its
module global `torch`; within the context that global is a view of the
torch module whose `_is_all_true` records the assert and answers True. Only
that module's lookups change (no other code sees it), and the global is
restored on exit. The swap is process-wide while active: a thread that
validates a distribution eagerly at the same moment gets the assert
(eager `_assert_async` raises on the CPU, or fails asynchronously on a GPU)
instead of the ValueError. Non-strict export (the exporter's default) only:
strict export traces the bytecode with dynamo, which this does not change.
"""

import contextlib
import threading
import types

_MESSAGE = ("torch.distributions argument validation failed (a parameter or "
            "value is outside the distribution's constraint or support)")

_lock = threading.Lock()
_depth = 0
_saved = None


class _TorchView(types.ModuleType):
    """torch, except _is_all_true records a device assert."""

    def __init__(self, torch_module):
        super().__init__(torch_module.__name__)
        self.__dict__["_torch"] = torch_module

    def __getattr__(self, name):
        return getattr(self.__dict__["_torch"], name)

    def _is_all_true(self, valid):
        torch = self.__dict__["_torch"]
        if not isinstance(valid, torch.Tensor):
            return bool(valid)   # a static answer: nothing to defer
        torch._assert_async(valid.all(), _MESSAGE)
        return True


@contextlib.contextmanager
def distribution_checks_as_asserts():
    """See the module docstring. Nests and may be entered by several
    threads: the module global is swapped by the first user and restored by
    the last (a count behind a lock)."""
    global _depth, _saved
    import torch
    import torch.distributions.distribution as dist_module
    with _lock:
        if _depth == 0:
            _saved = dist_module.torch
            dist_module.torch = _TorchView(torch)
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0:
                dist_module.torch = _saved
                _saved = None
