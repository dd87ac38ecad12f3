"""A fresh process for testing/gpu/ops/test_random.py: the random ops'
per-process state (seeding from the OS or AOTRUN_SEED, the seeding-failure
seam) can only be observed in a process whose devices are not seeded yet.

    python3 random_child.py LIB.so draw [N]    # prints JSON {"rand": [...]}
    python3 random_child.py LIB.so seam STEP   # JSON of two attempts

Prints one JSON line on stdout; the shim's log goes to stderr.
"""

import ctypes
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import torch  # noqa: E402

from shim_ctypes import Shim, ShimError  # noqa: E402


def rand(shim, n):
    size = (ctypes.c_int64 * 1)(n)
    r = shim.new_handle()
    shim.call("aoti_torch_cuda_rand", size, 1, None, None, None, -1, None, r)
    return shim.take(r)


def seeds(shim, n):
    out = torch.empty(n, dtype=torch.int64, device="cuda")
    h = shim.handle(out)
    size = (ctypes.c_int64 * 1)(n)
    try:
        shim.call("aoti_torch_cuda_randint_low_out", h, -(1 << 63),
                  (1 << 63) - 1, size, 1)
    finally:
        shim.delete(h)
    return out


def main():
    lib, mode = sys.argv[1], sys.argv[2]
    shim = Shim(lib)
    res = {}
    with shim.stream():
        if mode == "draw":
            n = int(sys.argv[3]) if len(sys.argv) > 3 else 16
            try:
                x = rand(shim, n)
                s = seeds(shim, 8)
                torch.cuda.synchronize()
                res = {"rand": x.view(torch.int32).tolist(),
                       "seeds": s.tolist()}
            except ShimError as e:
                res = {"error": str(e)}
        elif mode == "seam":
            step = int(sys.argv[3])
            rc = shim.fn("aotrun_shim_random_fail_next_seed")(step)
            res["arm"] = rc
            for attempt in ("first", "second"):
                try:
                    x = rand(shim, 1000)
                    torch.cuda.synchronize()
                    res[attempt] = {"ok": True, "mean": float(x.mean())}
                except ShimError as e:
                    res[attempt] = {"ok": False, "error": str(e)}
        else:
            raise SystemExit(f"unknown mode {mode}")
    sys.stderr.flush()
    print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
