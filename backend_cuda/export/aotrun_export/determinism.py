"""Deterministic export: the program is compiled with
torch.use_deterministic_algorithms(True) held while torch.export traces and
while AOTInductor lowers. Inductor then keeps ops whose generated kernels
would add with atomics (scatter_add, index_put with accumulate,
scatter_reduce sum/mean, index_add) as ATen fallbacks, which the compiled
library calls as aoti_torch_cuda_* shims; aotrun's are deterministic
(docs/fallback-ops.md), so every run of the program gives the same bits.
"""

import contextlib

NOTE = ("deterministic algorithms: ops that would accumulate with atomics "
        "run as aotrun's deterministic fallback shims")


@contextlib.contextmanager
def deterministic_algorithms(on: bool):
    """Holds torch's deterministic-algorithms flag at `on` (the previous
    setting, warn_only included, comes back on exit)."""
    import torch
    if not on:
        yield
        return
    was = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(was, warn_only=warn_only)
