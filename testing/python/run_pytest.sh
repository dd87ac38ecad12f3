#!/usr/bin/env bash
# Tests of the Python binding (python/, `import aotrun`) on the CPU: builds the
# host library, the CPU reference and minimal plugins and the example program,
# installs ./python with pip into a venv (offline: --no-build-isolation, with
# Debian's python3-setuptools; --system-site-packages for Debian's
# python3-numpy and python3-pytest, see tools/setup.sh) and runs pytest from
# outside the source tree, so the installed package is the one tested.
#   testing/python/run_pytest.sh [pytest args]
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
PY=${AOTRUN_PYTHON:-/usr/bin/python3}   # Debian's: numpy and pytest from apt
VENV=${AOTRUN_PYTHON_VENV:-$ROOT/.venv-python}
mkdir -p .bazel-links
bazel build -c fastbuild //install:libaotrun_host.so \
  //testing/plugins:libaotrun_cpu_ref.so //testing/plugins:libminimal_plugin.so \
  //testing/plugins:libaotrun_echo.so //testing/python:abi_layout_dump \
  //testing/example_program >/tmp/aotrun-python-build.log 2>&1 ||
  { tail -n 20 /tmp/aotrun-python-build.log; echo "run_pytest: bazel build failed"; exit 1; }
export AOTRUN_BAZEL_BIN=$(bazel info -c fastbuild bazel-bin 2>/dev/null)
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv --system-site-packages "$VENV" || { echo "run_pytest: cannot create $VENV"; exit 1; }
fi
# Installed from a copy: setuptools writes build/ and *.egg-info next to
# the sources, and a checkout's own python/build must not be touched.
SRC=$(mktemp -d "${TMPDIR:-/tmp}/aotrun-python-src.XXXXXX") || exit 1
trap 'rm -rf "$SRC"' EXIT
cp -r "$ROOT/python/." "$SRC/"
rm -rf "$SRC/build" "$SRC"/*.egg-info
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-index \
  --no-build-isolation --no-deps --force-reinstall "$SRC" \
  || { echo "run_pytest: pip install ./python failed"; exit 1; }
export AOTRUN_EXPECT_INSTALLED=1 PYTHONDONTWRITEBYTECODE=1
cd /tmp && "$VENV/bin/python" -m pytest -rs -p no:cacheprovider "$ROOT/testing/python" "$@"
rc=$?
exit "$rc"
