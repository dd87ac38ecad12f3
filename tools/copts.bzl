"""Compiler flags shared by every C target of aotrun."""

# C11 with every warning an error (see the developers' brief).
AOTRUN_COPTS = [
    "-std=c11",
    "-D_GNU_SOURCE",
    "-Wall",
    "-Wextra",
    "-Werror",
]

# Flags for nvcc genrules: sm_90 SASS + compute_90 PTX, plus sm_80 SASS.
AOTRUN_NVCC_FLAGS = (
    "-std=c++17 -O2 " +
    "-gencode arch=compute_90,code=sm_90 " +
    "-gencode arch=compute_90,code=compute_90 " +
    "-gencode arch=compute_80,code=sm_80 " +
    "-Xcompiler -fPIC -Xcompiler -fvisibility=hidden " +
    "-Xcompiler -Wall -Werror all-warnings"
)
