"""Benchmark cases of aoti_torch_cuda_convolution (see ../bench_fallbacks.py)
against torch.ops.aten.convolution on the same inputs (torch with its
defaults: cudnn.benchmark off; TF32 off for float32, as the shim with
AOTRUN_CONV_TF32=0, so the two compute the same thing). Each
aotrun call allocates its result and frees it, like a compiled model.
Target: within 1.1x of ATen.

Each case times aotrun twice in the same run: "aotrun us" on cuDNN's
backend graph API (the default; its plans are chosen at the first call per
shape, before timing) and the variant "legacy" on the legacy API
(AOTRUN_CONV_API=legacy), shown in the note column with its ratio to
ATen."""

# float32 in full precision on both sides (the shim's default allows TF32,
# as torch's does; the comparison turns it off in both).
NO_TF32 = {"AOTRUN_CONV_TF32": "0"}


def cases(shim, torch):
    torch.backends.cudnn.allow_tf32 = False
    cl = torch.channels_last

    def conv_case(name, x, w, b, stride, padding, transposed=False, out_pad=(0, 0),
                  groups=1, note="", dilation=(1, 1)):
        hs = [shim.handle(x), shim.handle(w)] + ([shim.handle(b)] if b is not None else [])
        hb = shim.opt(hs[2]) if b is not None else None
        st, pd, dl, op = (shim.ints(v) for v in (stride, padding, dilation, out_pad))

        def run():
            r = shim.new_handle()
            shim.call("aoti_torch_cuda_convolution", hs[0], hs[1], hb, st[0], st[1],
                      pd[0], pd[1], dl[0], dl[1], int(transposed), op[0], op[1],
                      groups, r)
            shim.delete(r.contents)

        # The first call per shape benchmarks the algorithms (both APIs).
        for api in (None, "legacy"):
            with shim.kernel_options({"AOTRUN_CONV_API": api, **NO_TF32}):
                run()
        out = torch.ops.aten.convolution(x, w, b, list(stride), list(padding),
                                         list(dilation), transposed, list(out_pad), groups)
        moved = (x.numel() + w.numel() + out.numel()) * x.element_size()
        return {"op": "convolution", "case": name, "aotrun": run,
                "env": {"AOTRUN_CONV_API": None, **NO_TF32},
                "variants": [{"label": "legacy", "fn": run,
                              "env": {"AOTRUN_CONV_API": "legacy", **NO_TF32}}],
                "aten": lambda: torch.ops.aten.convolution(
                    x, w, b, list(stride), list(padding), list(dilation), transposed,
                    list(out_pad), groups),
                "bytes": moved, "note": note}

    h = torch.float16
    x = torch.randn(32, 64, 56, 56, device="cuda", dtype=h).contiguous(memory_format=cl)
    w = (torch.randn(64, 64, 3, 3, device="cuda", dtype=h) * 0.05).contiguous(memory_format=cl)
    b = torch.randn(64, device="cuda", dtype=h)
    yield conv_case("3x3 32x64x56x56 fp16 channels-last, bias", x, w, b, (1, 1), (1, 1),
                    note="ResNet stage 1")
    xf = torch.randn(32, 64, 56, 56, device="cuda")
    wf = torch.randn(64, 64, 3, 3, device="cuda") * 0.05
    yield conv_case("3x3 32x64x56x56 fp32 NCHW, no TF32", xf, wf, None, (1, 1), (1, 1))
    x1 = torch.randn(32, 256, 56, 56, device="cuda", dtype=h).contiguous(memory_format=cl)
    w1 = (torch.randn(64, 256, 1, 1, device="cuda", dtype=h) * 0.05).contiguous(memory_format=cl)
    yield conv_case("1x1 32x256x56x56 -> 64 fp16 channels-last", x1, w1, None, (1, 1), (0, 0))
    xb = torch.randn(32, 128, 28, 28, device="cuda", dtype=torch.bfloat16).contiguous(memory_format=cl)
    wb = (torch.randn(128, 1, 3, 3, device="cuda", dtype=torch.bfloat16)).contiguous(memory_format=cl)
    yield conv_case("depthwise 3x3 32x128x28x28 bf16 channels-last", xb, wb, None, (1, 1),
                    (1, 1), groups=128)
    xt = torch.randn(16, 64, 28, 28, device="cuda", dtype=h).contiguous(memory_format=cl)
    wt = (torch.randn(64, 32, 4, 4, device="cuda", dtype=h) * 0.05).contiguous(memory_format=cl)
    yield conv_case("transposed 4x4 s2 16x64x28x28 fp16 channels-last", xt, wt, None,
                    (2, 2), (1, 1), transposed=True)
    # output_padding >= stride (below the dilation): cuDNN cannot take the
    # shape; aotrun runs the full dx into scratch and copies its window
    # (ATen: slow_conv_transpose2d, not cuDNN).
    xd = torch.randn(16, 64, 28, 28, device="cuda", dtype=h)
    wd = torch.randn(64, 32, 3, 3, device="cuda", dtype=h) * 0.05
    yield conv_case("transposed 3x3 dil 2 out_pad 1 16x64x28x28 fp16", xd, wd, None,
                    (1, 1), (1, 1), transposed=True, out_pad=(1, 1), dilation=(2, 2),
                    note="window of the full dx")
