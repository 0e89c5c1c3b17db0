"""Builds this package's extension with torch.utils.cpp_extension.load() (the JIT path) into
BUILD_DIR and loads it: the same build.ninja rules as setup.py's BuildExtension, nvcc from
$PYTORCH_NVCC or $CUDA_HOME/bin/nvcc, archs from $TORCH_CUDA_ARCH_LIST, jobs from $MAX_JOBS.

torch 2.9.1's BuildExtension refuses an nvcc whose CUDA major differs from torch's
(`_check_cuda_version`: 2.9.1+cu128 from PyPI against nvcc 13.0); load() does not check, so
this is how a host with only CUDA 13 builds against the PyPI wheel.

    python jit_build.py BUILD_DIR
"""
import os
import sys

from torch.utils.cpp_extension import load

here = os.path.dirname(os.path.abspath(__file__))
build_dir = os.path.abspath(sys.argv[1])
os.makedirs(build_dir, exist_ok=True)
module = load(
    name="wheelfarm_torch_cpp_ext_C",
    sources=[os.path.join(here, "csrc", f) for f in ("binding.cpp", "scale_add.cu", "histogram.cu")],
    extra_cflags=["-O2"],
    extra_cuda_cflags=["-O2", "--use_fast_math"],
    build_directory=build_dir,
    verbose=True,
)
print("built", module.__file__)
