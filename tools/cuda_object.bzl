"""One .cu file compiled by nvcc into an object that a cc_library or
cc_binary lists in its srcs (the repository's one nvcc rule)."""

load("//tools:copts.bzl", "AOTRUN_NVCC_FLAGS")

def cuda_object(name, src, hdrs = [], out = None):
    """genrule `name`: nvcc -c src (with hdrs visible) -> out, by default
    src's stem + ".pic.o" (-Xcompiler -fPIC is in the flags, so the object
    links into shared and static targets alike)."""
    native.genrule(
        name = name,
        srcs = [src] + hdrs,
        outs = [out or src[:-len(".cu")] + ".pic.o"],
        cmd = "$(execpath @cuda//:bin/nvcc) -ccbin $(CC) " + AOTRUN_NVCC_FLAGS +
              " -I. -c $(location " + src + ") -o $@",
        toolchains = ["@bazel_tools//tools/cpp:current_cc_toolchain"],
        tools = [
            "@cuda//:bin/nvcc",
            "@cuda//:nvcc_files",
        ],
    )
