"""fallback_test: one CMocka test of the CUDA fallback ops."""

load("//tools:copts.bzl", "AOTRUN_COPTS")

# What every such test links: the shim, the fallback ops, CMocka.
_BASE_DEPS = [
    "//shim_lib:shim",
    "//shim_lib/fallback:fallback_ops",
    "@system_libs//:cmocka",
]

def fallback_test(name, srcs = None, deps = [], **kwargs):
    """A small cc_test linked statically (a self-contained binary, with
    libcudart/libcublas, that can be copied to the GPU machine). srcs
    default to NAME.c; deps are added to the shim, the ops and CMocka;
    other attributes (args, data, linkopts) pass through."""
    native.cc_test(
        name = name,
        size = "small",
        srcs = srcs or [name + ".c"],
        copts = AOTRUN_COPTS,
        linkstatic = True,
        deps = _BASE_DEPS + [d for d in deps if d not in _BASE_DEPS],
        **kwargs
    )
