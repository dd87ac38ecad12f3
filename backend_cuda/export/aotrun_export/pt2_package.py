"""Unpacks what aotrun needs from an AOTInductor .pt2 package (a zip file).

A package holds, under <archive>/data/aotinductor/<model>/: the model
library `*.wrapper.so`, its generated source `*.wrapper.cpp` (the constant
table, see wrapper_constants) and, with package_constants_on_disk_format=
"binary_blob", the weights `*.wrapper_weights.blob`; `*.wrapper.json`
lists the ops the library calls through libtorch's proxy executor (extern
kernel nodes), when there are any.
"""

import json
import zipfile
from dataclasses import dataclass
from typing import Tuple


class PackageError(ValueError):
    pass


@dataclass
class PackageModel:
    library: bytes
    wrapper_cpp: str
    weights_blob: bytes
    library_member: str
    proxy_executor_ops: Tuple[str, ...] = ()


def _one(names, suffix, package):
    found = [n for n in names if n.endswith(suffix)
             and "/data/aotinductor/" in "/" + n]
    if len(found) != 1:
        raise PackageError(
            f"{package}: expected exactly one data/aotinductor/.../*{suffix}, "
            f"found {len(found)}: {found}")
    return found[0]


def read_package(package: str) -> PackageModel:
    try:
        zf = zipfile.ZipFile(package)
    except (OSError, zipfile.BadZipFile) as e:
        raise PackageError(f"{package}: not a readable .pt2 zip: {e}") from e
    with zf:
        names = zf.namelist()
        so = _one(names, ".wrapper.so", package)
        cpp = _one(names, ".wrapper.cpp", package)
        blobs = [n for n in names if n.endswith(".wrapper_weights.blob")]
        if len(blobs) > 1:
            raise PackageError(f"{package}: several weight blobs: {blobs}")
        blob = zf.read(blobs[0]) if blobs else b""
        return PackageModel(
            library=zf.read(so),
            wrapper_cpp=zf.read(cpp).decode("utf-8", "replace"),
            weights_blob=blob, library_member=so,
            proxy_executor_ops=_extern_ops(zf, names, package))


def _extern_ops(zf, names, package) -> Tuple[str, ...]:
    """Targets of the extern kernel nodes (wrapper.json), in order."""
    found = [n for n in names if n.endswith(".wrapper.json")
             and "/data/aotinductor/" in "/" + n]
    ops = []
    for member in found:
        try:
            doc = json.loads(zf.read(member).decode("utf-8"))
        except ValueError as e:
            raise PackageError(f"{package}: {member} is not JSON: {e}") from e
        for entry in doc.get("nodes", []):
            target = (entry.get("node") or {}).get("target")
            if target:
                ops.append(str(target))
    return tuple(ops)
