#!/usr/bin/env bash
# Runs the exporter's pytest suite (testing/export) on a CPU-only machine.
# First use: a venv ($AOTRUN_EXPORT_VENV, default ./.venv-export) with the
# PyPI torch wheel installed --no-deps (its nvidia-* wheels are gigabytes and
# unused here), its pure-Python deps, numpy and pytest; then stub libraries
# for the native dependencies this machine lacks (see torch_stubs.py), the
# CUDA toolkit at /usr/local/cuda serving the rest. If torch cannot be
# installed, the torch tests skip and the rest still run.
#   testing/export/run_pytest.sh [pytest args]     e.g. -m "not slow"
set -uo pipefail
cd "$(dirname "$0")/../.."
TORCH_VERSION=2.11.0
VENV=${AOTRUN_EXPORT_VENV:-.venv-export}
PY=$VENV/bin/python
if [ ! -x "$PY" ]; then
  python3 -m venv "$VENV" || { echo "run_pytest: cannot create $VENV"; exit 1; }
fi
if ! "$PY" -c "import pytest, numpy, sympy, networkx, jinja2, fsspec, filelock" 2>/dev/null; then
  "$PY" -m pip install -q --disable-pip-version-check pytest numpy "sympy>=1.13.3" \
    "networkx>=2.5.1" jinja2 "fsspec>=0.8.5" filelock "typing-extensions>=4.10.0" \
    "setuptools<82" || { echo "run_pytest: pip install of the test deps failed"; exit 1; }
fi
if ! "$PY" -c "import importlib.metadata as m, sys; sys.exit(m.version('torch') != '$TORCH_VERSION')" 2>/dev/null; then
  "$PY" -m pip install -q --disable-pip-version-check --no-deps "torch==$TORCH_VERSION" \
    || echo "run_pytest: torch==$TORCH_VERSION not installed: the torch tests will skip"
fi
ldpath=""
SITE=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
if [ -d "$SITE/torch/lib" ]; then
  ldpath=$("$PY" testing/export/torch_stubs.py "$SITE" "$VENV/torch-stubs" /usr/local/cuda/lib64) \
    || echo "run_pytest: building the stub libraries failed"
fi
export LD_LIBRARY_PATH="${ldpath}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONDONTWRITEBYTECODE=1
"$PY" -m pytest -rs -p no:cacheprovider testing/export "$@"
rc=$?
[ "$rc" -eq 5 ] && rc=0   # no tests collected is not a failure here
exit "$rc"
