"""AOTInductor compile options for libraries aotrun can load (DESIGN.md §2)
and the graph facts that change them."""

from typing import Dict, List, Optional, Tuple

# A library with no libtorch dependency, kernels embedded, weights outside
# the .so as one raw blob in constant index order.
BASE_OPTIONS = {
    "aot_inductor.link_libtorch": False,
    "aot_inductor.embed_kernel_binary": True,
    "aot_inductor.package": True,
    "aot_inductor.package_constants_in_so": False,
    "aot_inductor.package_constants_on_disk_format": "binary_blob",
}

_CONV_OPS = {"convolution", "_convolution", "conv1d", "conv2d", "conv3d",
             "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
             "cudnn_convolution", "cudnn_convolution_transpose",
             "mkldnn_convolution", "convolution_overrideable"}


def _op_name(target) -> str:
    name = getattr(target, "__name__", None) or str(target)
    return name.split(".")[0]


def graph_modules(ep):
    """The exported graph and every subgraph (torch.cond branches...)."""
    seen, todo = [], [ep.graph_module]
    while todo:  # a work list, not recursion: nesting depth is unbounded
        gm = todo.pop()
        if any(gm is s for s in seen):
            continue
        seen.append(gm)
        todo.extend(m for m in gm.children() if hasattr(m, "graph"))
    return seen


def has_convolution(ep) -> bool:
    for gm in graph_modules(ep):
        for n in gm.graph.nodes:
            if n.op == "call_function" and _op_name(n.target) in _CONV_OPS:
                return True
    return False


def inductor_options(*, triton_gemm: bool = False, has_conv: bool = False,
                     writes_buffers: bool = False,
                     extra: Optional[Dict] = None) -> Tuple[Dict, List[str]]:
    """(options for aoti_compile_and_package, notes saying why each
    non-default choice was made)."""
    opts = dict(BASE_OPTIONS)
    notes = []
    if triton_gemm:
        # ATEN stays allowed: float64 GEMMs have no Triton template.
        opts["max_autotune"] = True
        opts["max_autotune_gemm_backends"] = "TRITON,ATEN"
        notes.append("Triton GEMM autotuning on (max_autotune, GEMM backends "
                     "TRITON,ATEN)")
    if has_conv:
        # No option changes: the convolution stays ATen's extern kernel,
        # which the compiled library calls as aoti_torch_cuda_convolution
        # (the shim's, on cuDNN 9 opened at run time). Before the shim had
        # it, convolutions were forced to Triton templates (max_autotune).
        notes.append("the graph has a convolution: it runs as "
                     "aoti_torch_cuda_convolution (cuDNN 9, opened at the "
                     "first call; libcudnn.so.9 must be loadable)")
    if writes_buffers:
        # Otherwise a one-element counter buffer is folded into a constant.
        opts["joint_graph_constant_folding"] = False
        notes.append("the program writes a buffer: joint-graph constant "
                     "folding off")
    if extra:
        opts.update(extra)
    return opts, notes
