#!/usr/bin/env bash
# --config=valgrind runs every test through this: valgrind with the project's
# suppressions (tools/valgrind.supp), failing on errors and definite leaks.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
supp="$here/valgrind.supp"
[ -f "$supp" ] || supp="${RUNFILES_DIR:-$0.runfiles}/aotrun/tools/valgrind.supp"
exec /usr/bin/valgrind --error-exitcode=99 --leak-check=full \
  --errors-for-leak-kinds=definite --suppressions="$supp" "$@"
