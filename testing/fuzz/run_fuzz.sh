#!/usr/bin/env bash
# Builds and runs the libFuzzer target for the manifest parser with
# ASan + UBSan. Needs clang (Debian: apt-get install clang); not run by CI.
#   testing/fuzz/run_fuzz.sh [SECONDS]   (default 60)
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-60}
command -v clang >/dev/null || { echo "run_fuzz: clang is not installed"; exit 2; }
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
clang -std=c11 -D_GNU_SOURCE -g -O1 -Wall -Wextra -Werror -I. \
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  testing/fuzz/fuzz_manifest.c aot_loader/program.c aot_loader/name_set.c \
  aot_loader/json_read.c aot_loader/scalar_type.c aot_loader/aotrun_error.c \
  -lcjson -lm -o "$out/fuzz_manifest"
corpus="$out/corpus"; mkdir "$corpus"
cp testing/fuzz/corpus_manifest/* "$corpus/"
"$out/fuzz_manifest" -max_total_time="$secs" -max_len=65536 -timeout=5 \
  -dict=testing/fuzz/manifest.dict "$corpus"
