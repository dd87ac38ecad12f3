"""export_program: nn.Module methods -> an aotrun program directory
(manifest.json, <method>.so, weights.safetensors; docs/program-format.md)."""

import functools
import json
import os
import shutil
import tempfile
import threading
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Union

from . import __version__
from . import attention_mode
from .determinism import NOTE as DETERMINISTIC_NOTE
from .determinism import deterministic_algorithms
from .options import has_convolution, inductor_options
from .passes import (PassError, as_needed_linking, constant_folding_decision,
                     distribution_checks_as_asserts, run_passes)
from .dim_ranges import method_dims
from .program_meta import (ExportError, Weight, io_specs, method_constants,
                           writes_buffers)
from .pt2_package import read_package
from .safetensors_writer import Entry, write_safetensors
from .shim_check import (PROXY_EXECUTOR, check_proxy_executor,
                         check_shim_coverage, load_shim_exports,
                         model_imports)
from .wrapper_constants import parse_wrapper_source

WEIGHTS_FILE = "weights.safetensors"
MANIFEST_FILE = "manifest.json"

# torch 2.11 is not thread-safe here (measured with two threads): tracing
# keeps process-global state (torch.export's module hierarchy: "_EXPORT_
# MODULE_HIERARCHY must not be None"; the SDPA backend flags; our
# distribution-check patch) and AOTInductor enters shared config patches
# ("prior should be empty when entering ConfigPatch"). Threads exporting at
# once therefore take turns per method; the link patch keeps its own count
# (passes/linking.py) for Inductor compiles outside this lock. And a thread
# that traced must outlive every later trace: a second thread tracing after
# the first one exited crashes (SIGSEGV in FakeTensorMode.__enter__, CPU
# torch 2.11), so calls from threads other than the main one run on one
# worker thread that lives as long as the process.
_TORCH_LOCK = threading.Lock()


def method_module(fn):
    """The nn.Module to export for `fn`: a module (its forward) or a bound
    method of one. For a method other than forward, a module of a subclass
    whose forward calls that method, sharing the original's parameters,
    buffers and submodules (the same __dict__ entries), so FQNs are exactly
    the original's ("l1.weight", no wrapper prefix): the compiled library
    reports them through GetConstantOriginalFQN and two methods share
    weights by FQN."""
    import torch
    if isinstance(fn, torch.nn.Module):
        return fn
    owner = getattr(fn, "__self__", None)
    func = getattr(fn, "__func__", None)
    if not isinstance(owner, torch.nn.Module) or func is None:
        raise ExportError(f"{fn!r} is neither an nn.Module nor a bound method "
                          "of one")
    cls = type(owner)
    if func is getattr(cls, "forward", None):
        return owner

    @functools.wraps(func)  # keeps the parameter names for input names
    def forward(self, *args, **kwargs):
        return func(self, *args, **kwargs)

    sub = type(f"{cls.__name__}_{func.__name__}", (cls,), {
        "forward": forward, "__module__": cls.__module__})
    wrapper = sub.__new__(sub)
    wrapper.__dict__.update(owner.__dict__)  # shares _parameters, _buffers...
    return wrapper


def _attention_context(math: bool):
    """SDPA backends while tracing (attention_mode.py): math, or flash +
    efficient (the fused shims) with math for calls neither takes."""
    return attention_mode.attention_context(math)


def _normalize(spec):
    if _is_exported_program(spec):
        return spec, (), {}
    if not isinstance(spec, (tuple, list)) or len(spec) not in (2, 3):
        raise ExportError("each method is an ExportedProgram, "
                          "(callable, example_inputs) or "
                          "(callable, example_inputs, example_kwargs); got "
                          f"{type(spec).__name__}")
    fn, args = spec[0], spec[1]
    kwargs = spec[2] if len(spec) == 3 else None
    if not isinstance(args, tuple):
        args = tuple(args) if isinstance(args, list) else (args,)
    return fn, args, kwargs or {}


def _check_names(methods):
    if not methods:
        raise ExportError("no methods to export")
    for name in methods:
        if (not isinstance(name, str) or not name or "/" in name or
                name.startswith(".") or name in ("manifest", "weights")):
            raise ExportError(f"invalid method name {name!r}")


def _is_exported_program(obj) -> bool:
    import torch
    return isinstance(obj, torch.export.ExportedProgram)


def export_method(fn, args, kwargs, *, dynamic_shapes, strict):
    """torch.export of one method, with torch.distributions' value checks
    traced as device asserts (passes/distribution_checks.py). An
    ExportedProgram (e.g. from torch.export.load) is taken as is."""
    import torch
    if _is_exported_program(fn):
        return fn
    module = method_module(fn)
    with distribution_checks_as_asserts():
        return torch.export.export(module, args, kwargs or None,
                                   dynamic_shapes=dynamic_shapes,
                                   strict=strict)


def compile_method(name, fn, args, kwargs, *, dynamic_shapes, triton_gemm,
                   attention_math, inductor_configs, strict, work_dir, log,
                   skip_passes=(), shim_exports=None, deterministic=False,
                   small_gemm=True):
    """torch.export + the exporter passes + AOTInductor for one method.
    attention_math: True (SDPA as bmm + softmax), False (fused SDPA shims)
    or None (fused where the shim covers every call: attention_mode.py);
    shim_exports: the shim's exported names, or None when unknown.
    deterministic: trace and compile under torch.use_deterministic_algorithms
    (determinism.py).
    small_gemm: run the small_gemm pass (passes/small_gemm.py).
    Returns (exported program after the passes, PackageModel, notes)."""
    import torch

    def run(grad):
        with _TORCH_LOCK, torch.set_grad_enabled(grad), \
                deterministic_algorithms(deterministic):
            return _compile_locked(
                name, fn, args, kwargs, dynamic_shapes=dynamic_shapes,
                triton_gemm=triton_gemm, attention_math=attention_math,
                inductor_configs=inductor_configs, strict=strict,
                work_dir=work_dir, log=log, skip_passes=skip_passes,
                shim_exports=shim_exports, deterministic=deterministic,
                small_gemm=small_gemm)
    grad = torch.is_grad_enabled()  # thread-local: carried to the worker
    if threading.current_thread() is threading.main_thread():
        return run(grad)
    return _torch_worker().submit(run, grad).result()


_WORKER = None
_WORKER_LOCK = threading.Lock()


def _torch_worker():
    """The one thread that runs exports called from other threads (never
    shut down before the interpreter exits)."""
    global _WORKER
    with _WORKER_LOCK:
        if _WORKER is None:
            from concurrent.futures import ThreadPoolExecutor
            _WORKER = ThreadPoolExecutor(max_workers=1,
                                         thread_name_prefix="aotrun-export")
        return _WORKER


def _trace(name, fn, args, kwargs, *, dynamic_shapes, strict, skip_passes,
           math, enable_passes=("small_gemm",)):
    with _attention_context(math):
        ep = export_method(fn, args, kwargs, dynamic_shapes=dynamic_shapes,
                           strict=strict)
        try:
            return run_passes(ep, skip=skip_passes, enable=enable_passes)
        except PassError as e:
            raise ExportError(f"method '{name}': {e}") from e


def _compile_locked(name, fn, args, kwargs, *, dynamic_shapes, triton_gemm,
                    attention_math, inductor_configs, strict, work_dir, log,
                    skip_passes, shim_exports=None, deterministic=False,
                    small_gemm=True):
    import torch
    math, attn_note = attention_mode.resolve(
        attention_math, shim_exports,
        attention_mode.on_cuda(fn, args, kwargs))
    trace = functools.partial(_trace, name, fn, args, kwargs,
                              dynamic_shapes=dynamic_shapes, strict=strict,
                              skip_passes=skip_passes,
                              enable_passes=("small_gemm",) if small_gemm
                              else ())
    ep, notes = trace(math=math)
    if not math and attention_math is None:
        uncovered = attention_mode.uncovered_calls(ep, shim_exports)
        if uncovered:
            ep, notes = trace(math=True)
            attn_note = ("attention: the fused SDPA shims do not cover "
                         f"{'; '.join(uncovered)}: SDPA exported with the "
                         "math decomposition (bmm + softmax)")
    if attn_note:
        notes = notes + [attn_note]
    if deterministic:
        notes = notes + [DETERMINISTIC_NOTE]
    fold_opts, fold_note = constant_folding_decision(ep)
    opts, option_notes = inductor_options(
        triton_gemm=triton_gemm, has_conv=has_convolution(ep),
        extra={**fold_opts, **(inductor_configs or {})})
    notes = notes + option_notes + ([fold_note] if fold_note else [])
    for n in notes:
        log(f"aotrun-export: method '{name}': {n}")
    path = os.path.join(work_dir, f"{name}.pt2")
    # The same SDPA backends while AOTInductor traces (it decomposes any
    # scaled_dot_product_attention still in the program).
    with as_needed_linking(), _attention_context(math):
        path = torch._inductor.aoti_compile_and_package(
            ep, package_path=path, inductor_configs=opts)
    return ep, read_package(path), notes


def _entries(weights: Dict[str, Weight]) -> List[Entry]:
    return [Entry(w.fqn, w.dtype, w.shape, w.data) for w in weights.values()]


def export_program(methods: Dict[str, Sequence], out_dir: str, *,
                   dynamic_shapes: Optional[Dict[str, object]] = None,
                   triton_gemm: bool = False,
                   shim_exports: Optional[Union[Iterable[str], set]] = None,
                   attention_math: Optional[bool] = None,
                   inductor_configs: Optional[Dict] = None,
                   strict: bool = False,
                   keep_packages: bool = False,
                   skip_passes: Sequence[str] = (),
                   deterministic: bool = False,
                   small_gemm: bool = True,
                   log: Callable[[str], None] = print) -> dict:
    """Exports each method and writes the program directory `out_dir`.

    methods: {"forward": (module_or_bound_method, example_args[, kwargs])}
      or {"forward": exported_program} (a torch.export.ExportedProgram, e.g.
      from torch.export.load: its dynamic shapes are the ones it was
      exported with).
    dynamic_shapes: {method: torch.export dynamic_shapes spec}.
    triton_gemm: GEMMs as autotuned Triton kernels (else cuBLAS via the shim).
    shim_exports: paths of libaotrun_shim.so and/or text files of exported
      names (or a set of names); each library is checked against them and
      MissingShimFunctions lists what is missing. None: not checked.
    attention_math: None (default): SDPA on the fused attention shims where
      the program runs on CUDA and the shim (shim_exports, when given)
      covers every call, else bmm + softmax with a note; True: always
      bmm + softmax; False: always fused (attention_mode.py).
    deterministic: compile under torch.use_deterministic_algorithms(True):
      accumulating ops become aotrun's deterministic shims (determinism.py).
    skip_passes: names of exporter passes to leave out (passes/__init__.py;
      for tests and diagnosis: the passes make programs correct).
    small_gemm: (default on) small matrix products (M or N <= 16, sizes
      static or bounded by the dynamic dims' max=) as fused Triton
      reductions instead of cuBLAS calls (passes/small_gemm.py): less host
      and GPU time per call where GEMMs are tiny (docs/benchmarks.md);
      False keeps every GEMM on cuBLAS.
    Returns the manifest dict. Nothing is left in out_dir on failure.
    """
    import torch
    _check_names(methods)
    dynamic_shapes = dynamic_shapes or {}
    unknown = set(dynamic_shapes) - set(methods)
    if unknown:
        raise ExportError(f"dynamic_shapes names unknown methods: "
                          f"{sorted(unknown)}")
    exports = None
    if shim_exports is not None:
        exports = (set(shim_exports) if isinstance(shim_exports, set)
                   else load_shim_exports(shim_exports))
    parent = os.path.dirname(os.path.abspath(out_dir))
    os.makedirs(parent, exist_ok=True)
    stage = tempfile.mkdtemp(prefix=".aotrun-export-", dir=parent)
    work = tempfile.mkdtemp(prefix="aotrun-export-pt2-")
    try:
        manifest = {"format": "aotrun-program", "format_version": 1,
                    "producer": f"aotrun-export {__version__} "
                                f"(torch {torch.__version__})",
                    "methods": {}}
        weights: Dict[str, Weight] = {}
        for name, spec in methods.items():
            fn, args, kwargs = _normalize(spec)
            if _is_exported_program(fn) and name in dynamic_shapes:
                raise ExportError(
                    f"method '{name}' is an ExportedProgram: its dynamic "
                    "shapes were fixed by torch.export; drop its "
                    "dynamic_shapes entry")
            ep, pkg, notes = compile_method(
                name, fn, args, kwargs,
                dynamic_shapes=dynamic_shapes.get(name),
                triton_gemm=triton_gemm, attention_math=attention_math,
                inductor_configs=inductor_configs, strict=strict,
                work_dir=work, log=log, skip_passes=skip_passes,
                shim_exports=exports, deterministic=deterministic,
                small_gemm=small_gemm)
            manifest["methods"][name] = _method_entry(
                name, ep, pkg, stage, weights, notes, exports)
        if weights:
            manifest["weights"] = WEIGHTS_FILE
            write_safetensors(os.path.join(stage, WEIGHTS_FILE),
                              _entries(weights), {"format": "pt"})
        with open(os.path.join(stage, MANIFEST_FILE), "w") as f:
            json.dump(manifest, f, indent=2)
            f.write("\n")
        _publish(stage, out_dir)
        if keep_packages:
            for p in os.listdir(work):
                shutil.copy(os.path.join(work, p), out_dir)
        return manifest
    finally:
        shutil.rmtree(stage, ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)


def _method_entry(name, ep, pkg, stage, weights, notes, exports):
    lib = f"{name}.so"
    lib_path = os.path.join(stage, lib)
    with open(lib_path, "wb") as f:
        f.write(pkg.library)
    os.chmod(lib_path, 0o755)
    imports = (check_shim_coverage(lib_path, exports, name)
               if exports is not None else model_imports(lib_path))
    if exports is not None:
        check_proxy_executor(imports, pkg.proxy_executor_ops, lib_path, name)
    elif PROXY_EXECUTOR in imports:
        # Not checked against a shim: say it, since aotrun will refuse it.
        ops = ", ".join(pkg.proxy_executor_ops) or "unnamed ops"
        notes.append(f"calls {ops} through libtorch's proxy executor "
                     f"({PROXY_EXECUTOR}), which aotrun does not have: the "
                     "method fails at run time")
    winfo = parse_wrapper_source(pkg.wrapper_cpp, f"{name}: wrapper.cpp")
    inputs, outputs = io_specs(ep)
    if len(inputs) != winfo.num_inputs or len(outputs) != winfo.num_outputs:
        raise ExportError(
            f"method '{name}': the exported program has {len(inputs)} inputs "
            f"and {len(outputs)} outputs, the compiled library "
            f"{winfo.num_inputs} and {winfo.num_outputs}")
    constants = method_constants(name, ep, winfo, pkg.weights_blob, weights,
                                 notes)
    symbols = method_dims(ep, inputs, notes)
    entry = {"library": lib, "inputs": inputs, "outputs": outputs,
             "constants": constants, "aoti_torch_imports": imports,
             "writes_buffers": writes_buffers(ep)}
    if symbols:
        entry["symbols"] = symbols
    if notes:
        entry["notes"] = notes
    return entry


def _publish(stage: str, out_dir: str) -> None:
    """Moves the staged files into out_dir (created if needed)."""
    os.makedirs(out_dir, exist_ok=True)
    for f in os.listdir(stage):
        os.replace(os.path.join(stage, f), os.path.join(out_dir, f))
