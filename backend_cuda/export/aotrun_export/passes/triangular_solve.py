"""Decomposition: `torch.linalg.solve_triangular` with a small static size
as substitution steps.

Guarantee: `aten.linalg_solve_triangular(A, B, upper=, left=,
unitriangular=)` whose triangular matrix has a static size n <= MAX_N
becomes n steps of forward (lower) or backward (upper) substitution written
with elementwise ops and sums, so Inductor generates the kernels. The result
solves the same system to float rounding (the order of the sums differs
from cuBLAS/MAGMA's, so it is not bit-identical to eager). Batch dims
broadcast as in eager. A dynamic or larger n is left as is.

Why: Inductor has no lowering for it and torch 2.11's AOTInductor has no C
shim for it either (c_shim_cuda.h lacks linalg_solve_triangular), so the
compiled library calls it through libtorch's proxy executor, which aotrun
does not have: the call fails at run time. `MultivariateNormal.log_prob`
(`_batch_mahalanobis`) is the common source: a Gaussian policy head with
14 actions solves a 14x14 lower-triangular system.
"""

MAX_N = 64


def decompose_solve_triangular(A, B, *, upper, left=True,
                               unitriangular=False):
    """linalg_solve_triangular as substitution; NotImplemented (kept) for
    a dynamic or large size."""
    import torch
    n = A.shape[-1]
    if not isinstance(n, int) or n > MAX_N:
        return NotImplemented
    if not left:
        # X A = B  <=>  A^T X^T = B^T, and A^T is triangular the other way.
        x = decompose_solve_triangular(
            A.transpose(-2, -1), B.transpose(-2, -1), upper=not upper,
            left=True, unitriangular=unitriangular)
        return x.transpose(-2, -1).contiguous()
    batch = torch.broadcast_shapes(A.shape[:-2], B.shape[:-2])
    A = A.expand(*batch, n, n)
    B = B.expand(*batch, n, B.shape[-1])
    rows = [None] * n
    for i in (range(n - 1, -1, -1) if upper else range(n)):
        acc = B[..., i, :]
        # The rows solved so far: j < i (lower) or j > i (upper).
        lo, hi = (i + 1, n) if upper else (0, i)
        if hi > lo:
            coef = A[..., i, lo:hi].unsqueeze(-1)               # (..., k, 1)
            xs = torch.stack(rows[lo:hi], dim=-2)               # (..., k, m)
            acc = acc - (coef * xs).sum(-2)
        if not unitriangular:
            acc = acc / A[..., i, i].unsqueeze(-1)
        rows[i] = acc
    return torch.stack(rows, dim=-2)
