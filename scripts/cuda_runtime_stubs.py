#!/usr/bin/env python3
"""Build-only stand-ins for the CUDA runtime libraries a `pip install --no-deps` torch lacks.

torch's PyPI wheels link libtorch_cuda.so, libc10_cuda.so and libtorch_python.so against the
CUDA libraries of their release (2.9.1+cu128: libcudart.so.12, libcublas.so.12, ...; 2.11.0,
CUDA 13.0: libcudart.so.13, libcublas.so.13, ...), libcudnn.so.9, libnccl.so.2, ... which
normally come from the nvidia-* wheels (3 to 4.5 GB). `import torch` (and so every setup.py
that uses torch.utils.cpp_extension) needs them to load, although compiling an extension never
calls them: it only reads torch's headers, library paths and a few Python attributes. CPU-only
tests run against the stand-ins too: torch sees no CUDA device, as on a host without a GPU.

This script reads torch's own ELF files and writes, for every such library on the path
`import torch` loads (torch/_C*.so and torch/lib/libtorch_global_deps.so, with their
dependencies), a shared object with the same soname and version nodes that defines every
symbol torch takes from it. Each function aborts with a message naming itself if called, so
a build that does reach the CUDA runtime fails loudly instead of computing anything. The
directory goes on LD_LIBRARY_PATH of builds that import torch; torch itself is untouched.

Usage: cuda_runtime_stubs.py TORCH_PACKAGE_DIR OUT_DIR
"""
import ctypes
import os
import re
import subprocess
import sys
import tempfile

# Libraries of the C/C++ runtime every Linux host has; never stubbed.
SYSTEM = {
    "libc.so.6", "libm.so.6", "libdl.so.2", "libpthread.so.0", "librt.so.1",
    "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1", "libstdc++.so.6", "libgcc_s.so.1",
}


def readelf(*args):
    return subprocess.run(["readelf", "-W", *args], check=True, capture_output=True,
                          text=True).stdout


def needed(path):
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", readelf("-d", path))


def dyn_symbols(path):
    """(name, version or None, type, bind, defined) for each dynamic symbol."""
    out = []
    for line in readelf("--dyn-syms", path).splitlines():
        f = line.split()
        if len(f) < 8 or not f[0].rstrip(":").isdigit():
            continue
        name = f[7]
        version = None
        if "@" in name:
            name, _, version = name.partition("@")
            version = version.lstrip("@")
        out.append((name, version, f[3], f[4], f[6] != "UND"))
    return out


def version_needs(path):
    """{version name: file} from .gnu.version_r."""
    result, current = {}, None
    for line in readelf("-V", path).splitlines():
        m = re.search(r"Version: \d+\s+File: (\S+)", line)
        if m:
            current = m.group(1)
            continue
        m = re.search(r"Name: (\S+)\s+Flags", line)
        if m and current:
            result[m.group(1)] = current
    return result


def main():
    torch_dir, out_dir = sys.argv[1], sys.argv[2]
    lib_dir = os.path.join(torch_dir, "lib")
    roots = [os.path.join(torch_dir, f) for f in os.listdir(torch_dir)
             if f.startswith("_C") and f.endswith(".so")]
    roots.append(os.path.join(lib_dir, "libtorch_global_deps.so"))
    # torch's own libraries on the import path, following NEEDED through torch/lib.
    own, missing, queue = [], set(), list(roots)
    while queue:
        path = queue.pop()
        if path in own:
            continue
        own.append(path)
        for soname in needed(path):
            candidate = os.path.join(lib_dir, soname)
            if os.path.exists(candidate):
                queue.append(candidate)
            elif soname not in SYSTEM:
                missing.add(soname)
    defined = set()
    refs = {}  # soname -> {symbol: (version, type)}
    unversioned = {}  # symbol -> type
    for path in own:
        needs = version_needs(path)
        for name, version, typ, bind, is_defined in dyn_symbols(path):
            if not name:
                continue
            if is_defined:
                defined.add(name)
                continue
            if bind == "WEAK":
                continue
            if version:
                soname = needs.get(version)
                if soname in missing:
                    refs.setdefault(soname, {})[name] = (version, typ)
            else:
                unversioned[name] = typ
    # Unversioned references that neither torch nor the C/C++ runtime defines belong to one of
    # the missing libraries (nccl, cusparseLt, cufile, nvshmem carry no symbol versions).
    system = [ctypes.CDLL(n) for n in ("libc.so.6", "libm.so.6", "libstdc++.so.6",
                                       "libgcc_s.so.1")]

    def in_system(name):
        for lib in system:
            try:
                getattr(lib, name)
                return True
            except AttributeError:
                pass
        return False

    orphans = {n: t for n, t in unversioned.items() if n not in defined and not in_system(n)}
    os.makedirs(out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for soname in sorted(missing):
            symbols = dict(refs.get(soname, {}))
            versions = sorted({v for v, _ in symbols.values()})
            # Orphans go into every library without its own versions: any one definition
            # satisfies the loader, and which real library holds them does not matter here.
            if not versions:
                for n, t in orphans.items():
                    symbols[n] = (None, t)
            src = os.path.join(tmp, "stub.c")
            with open(src, "w") as f:
                f.write("#include <stdio.h>\n#include <stdlib.h>\n"
                        "static void wheelfarm_stub(const char* name) {\n"
                        f"  fprintf(stderr, \"{soname} is a build-only stub from Wheelfarm's "
                        "scripts/cuda_runtime_stubs.py; %s was called\\n\", name);\n"
                        "  abort();\n}\n")
                for i, (name, (_, typ)) in enumerate(sorted(symbols.items())):
                    if typ == "OBJECT":
                        f.write(f"char s{i}[4096] __asm__(\"{name}\");\n")
                    elif typ == "TLS":
                        f.write(f"__thread char s{i}[64] __asm__(\"{name}\");\n")
                    elif name == "cudaGetDeviceCount":
                        # torch.cuda.is_available() (cpp_extension calls it when it looks for
                        # CUDA_HOME): no device, as on a build host without a GPU.
                        f.write(f"int s{i}(int* n) __asm__(\"{name}\");\n"
                                f"int s{i}(int* n) {{ if (n) *n = 0; return 100; }}\n")
                    elif name in ("cudaGetLastError", "cudaPeekAtLastError"):
                        f.write(f"int s{i}(void) __asm__(\"{name}\");\n"
                                f"int s{i}(void) {{ return 0; }}\n")
                    elif name.startswith(("__cudaRegister", "__cudaUnregister")):
                        # What every CUDA object's static constructor calls to register its
                        # fat binary and kernels with the runtime: nothing to do here.
                        f.write(f"void* s{i}(void) __asm__(\"{name}\");\n"
                                f"void* s{i}(void) {{ return 0; }}\n")
                    else:
                        f.write(f"void s{i}(void) __asm__(\"{name}\");\n"
                                f"void s{i}(void) {{ wheelfarm_stub(\"{name}\"); }}\n")
            cmd = ["cc", "-shared", "-fPIC", "-O0", "-o", os.path.join(out_dir, soname),
                   f"-Wl,-soname,{soname}", src]
            if versions:
                script = os.path.join(tmp, "stub.map")
                with open(script, "w") as f:
                    for v in versions:
                        names = [n for n, (sv, _) in symbols.items() if sv == v]
                        f.write(v + " {\n  global:\n" +
                                "".join(f"    \"{n}\";\n" for n in names) + "};\n")
                    f.write("WHEELFARM_STUB_LOCAL { local: *; };\n")
                cmd.append(f"-Wl,--version-script={script}")
            subprocess.run(cmd, check=True)
            print(f"{soname}: {len(symbols)} symbols")


if __name__ == "__main__":
    main()
