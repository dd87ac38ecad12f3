import torch, os, sys, glob, subprocess, json, shutil
out = os.environ["OUT"]
print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name())
tdir = os.path.dirname(torch.__file__)
inc = os.path.join(tdir, "include/torch/csrc/inductor")
import tarfile
with tarfile.open(os.path.join(out, "headers.tgz"), "w:gz") as t:
    for p in ["aoti_torch/c/shim.h", "aoti_torch/generated/c_shim_cuda.h", "aoti_runtime/interface.h",
              "aoti_runtime/model.h", "aoti_runtime/model_container.h", "aoti_runtime/constant_type.h",
              "aoti_runtime/utils.h", "aoti_runtime/device_utils.h", "aoti_runtime/arrayref_tensor.h",
              "aoti_torch/generated/c_shim_aten.h", "aoti_runtime/model_base.h", "aoti_runtime/thread_local.h",
              "aoti_torch/c/shim_deprecated.h", "aoti_torch/c/macros.h", "aoti_runtime/scalar_to_tensor.h", "aoti_runtime/sycl_runtime_wrappers.h"]:
        f = os.path.join(inc, p)
        if os.path.exists(f): t.add(f, arcname=p)
        else: print("missing", p)
    for f in glob.glob(os.path.join(inc, "aoti_runtime/*.h")):
        t.add(f, arcname="aoti_runtime_all/" + os.path.basename(f))
class MLP(torch.nn.Module):
    def __init__(s):
        super().__init__(); s.l1 = torch.nn.Linear(16, 32); s.l2 = torch.nn.Linear(32, 8)
    def forward(s, x): return s.l2(torch.relu(s.l1(x)))
class F64(torch.nn.Module):
    def __init__(s):
        super().__init__(); s.register_buffer("b", torch.randn(8, dtype=torch.float64)); s.w = torch.nn.Parameter(torch.randn(8, 8, dtype=torch.float64))
    def forward(s, x): return (x @ s.w + s.b, x.sum().item() > 0)
class Counter(torch.nn.Module):
    def __init__(s):
        super().__init__(); s.register_buffer("n", torch.zeros(1)); s.lin = torch.nn.Linear(4,4)
    def forward(s, x):
        s.n.add_(1); return s.lin(x) + s.n
class Mask(torch.nn.Module):
    def forward(s, x): return x[x > 0] * 2
opts = {"aot_inductor.link_libtorch": False, "aot_inductor.embed_kernel_binary": True, "aot_inductor.package": True,
        "aot_inductor.package_constants_in_so": False, "aot_inductor.package_constants_on_disk_format": "binary_blob"}
res = {}
for name, m, ex in [("mlp", MLP(), (torch.randn(4, 16),)), ("f64", F64(), (torch.randn(3, 8, dtype=torch.float64),)),
                    ("counter", Counter(), (torch.randn(2, 4),)), ("mask", Mask(), (torch.randn(10),))]:
    try:
        m = m.cuda(); ex = tuple(e.cuda() for e in ex)
        ep = torch.export.export(m, ex)
        d = os.path.join("/tmp/pk", name); os.makedirs(d, exist_ok=True)
        path = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(d, name + ".pt2"), inductor_configs=opts)
        import zipfile; zf=zipfile.ZipFile(path); files="\n".join("%s %d"%(i.filename,i.file_size) for i in zf.infolist())
        print(name, files)
        zf.extractall(d)
        sos = glob.glob(d + "/**/*.so", recursive=True)
        info = {"files": files}
        for so in sos:
            nm = subprocess.run(["nm", "-D", "--undefined-only", so], capture_output=True, text=True).stdout
            info[so] = nm
            shutil.copy(so, os.path.join(out, name + ".so"))
        for b in glob.glob(d + "/**/*", recursive=True):
            if b.endswith((".json", ".txt")) or "blob" in b or b.endswith(".wrapper.cpp") is False and "constants" in b:
                pass
        info["sig"] = str(ep.graph_signature)
        info["state"] = {k: [list(v.shape), list(v.stride()), str(v.dtype), v.storage_offset()] for k, v in ep.state_dict.items()}
        info["constants"] = {k: str(type(v)) for k, v in ep.constants.items()}
        res[name] = info
    except Exception as e:
        import traceback; res[name] = {"error": traceback.format_exc()}
        print(name, "FAILED", traceback.format_exc()[-3000:])
json.dump(res, open(os.path.join(out, "probe.json"), "w"), indent=1)
subprocess.run("cd /tmp/pk && tar czf $OUT/pk.tgz --exclude='*.so' .", shell=True)
