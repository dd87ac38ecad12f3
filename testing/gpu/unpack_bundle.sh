#!/usr/bin/env bash
# Restores the xz-compressed binaries of the GPU bundle (build_gpu_bundle.sh
# compresses the big ones to fit a carry). Idempotent; run on the GPU
# machine before using .gpu/ (run_gpu_check.sh does).
#   bash testing/gpu/unpack_bundle.sh [BUNDLE_DIR]     (default .gpu)
set -euo pipefail
B=${1:-$(dirname "$0")/../../.gpu}
find "$B" -type f -name '*.xz' -print0 | while IFS= read -r -d '' f; do
  out=${f%.xz}
  [ -e "$out" ] && [ "$out" -nt "$f" ] && continue
  if command -v xz >/dev/null; then
    xz -d -c "$f" > "$out.tmp"
  else  # no xz-utils: Python's lzma reads the same format
    python3 -c 'import lzma, shutil, sys
with lzma.open(sys.argv[1]) as i, open(sys.argv[2], "wb") as o:
    shutil.copyfileobj(i, o)' "$f" "$out.tmp"
  fi
  chmod +x "$out.tmp" && mv "$out.tmp" "$out"
done
