# A small torch.utils.cpp_extension package: two CUDA files (one templated on dtype through
# AT_DISPATCH, one plain) and a C++ binding, built the way the PyTorch extension ecosystem
# builds (CUDAExtension + BuildExtension: one build.ninja, nvcc called per .cu file).
#   TORCH_CUDA_ARCH_LIST="7.5;9.0" MAX_JOBS=2 python setup.py build_ext --inplace
# Through the farm: PYTORCH_NVCC="farm-nvcc $CUDA_HOME/bin/nvcc" (see docs/farm-nvcc.md).
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="wheelfarm-torch-cpp-ext",
    version="0.1.0",
    ext_modules=[
        CUDAExtension(
            name="wheelfarm_torch_cpp_ext._C",
            sources=["csrc/binding.cpp", "csrc/scale_add.cu", "csrc/histogram.cu"],
            extra_compile_args={"cxx": ["-O2"], "nvcc": ["-O2", "--use_fast_math"]},
        )
    ],
    packages=["wheelfarm_torch_cpp_ext"],
    cmdclass={"build_ext": BuildExtension},
)
