"""The harness on ops that exist since stop 6 (mm_out, boolean-mask
index_Tensor): checks the ctypes plumbing itself against eager PyTorch."""

import pytest

from conftest import assert_same


def test_mm_out_matches_torch(torch, shim):
    a = torch.randn(33, 17, device="cuda", dtype=torch.float64)
    b = torch.randn(17, 9, device="cuda", dtype=torch.float64)
    out = torch.full((33, 9), float("nan"), device="cuda", dtype=torch.float64)
    ha, hb, ho = shim.handle(a), shim.handle(b), shim.handle(out)
    try:
        shim.call("aoti_torch_cuda_mm_out", ho, ha, hb)
    finally:
        for h in (ha, hb, ho):
            shim.delete(h)
    torch.testing.assert_close(out, a @ b)


def test_mask_index_matches_torch(torch, shim):
    x = torch.randn(40, 7, device="cuda")
    m = x[:, 0] > 0
    hx, hm = shim.handle(x), shim.handle(m)
    r = shim.new_handle()
    try:
        shim.call("aoti_torch_cuda_index_Tensor", hx, shim.opt_list([hm]), 1, r)
        assert_same(shim.take(r), x[m], "x[mask]", bits=True)
    finally:
        shim.delete(hx)
        shim.delete(hm)


def test_shim_error_is_raised_with_message(torch, shim):
    from shim_ctypes import ShimError
    x = torch.randn(4, device="cuda")
    m = torch.ones(5, dtype=torch.bool, device="cuda")
    hx, hm = shim.handle(x), shim.handle(m)
    r = shim.new_handle()
    try:
        with pytest.raises(ShimError, match="mask"):
            shim.call("aoti_torch_cuda_index_Tensor", hx, shim.opt_list([hm]), 1, r)
    finally:
        shim.delete(hx)
        shim.delete(hm)
