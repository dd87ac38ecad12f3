#!/bin/bash
# test_graph_trace.sh: graph_trace.c preloaded into a program that makes
# three CUDA calls prints each, numbered and in order, with what it
# returned (no GPU needed: the calls fail and are still traced); without
# the preload nothing of it is printed.
# usage: test_graph_trace.sh LIBGRAPH_TRACE.so GRAPH_TRACE_PROBE
set -u
LIB=$(realpath "$1") PROBE=$2
source "$(dirname "$0")/../../host/cli_checks.sh"

traced() {
  env LD_PRELOAD="$LIB" \
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
    "$PROBE"
}
expect 0 "graph_trace: 1 cudaMalloc(256 B) = " traced
expect 0 "graph_trace: 2 cudaStreamBeginCapture(stream (nil), mode 2) = " traced
expect 0 "graph_trace: 3 cudaGraphLaunch(exec (nil), stream (nil)) = " traced
expect 0 "probe ok" traced
refute "graph_trace:" "$PROBE"
finish "graph trace"
