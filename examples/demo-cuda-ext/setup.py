"""Builds the CUDA library with CMake and packs it into the demo_cuda_ext package.

Offline build (no downloads): pip wheel --no-deps --no-build-isolation .
Archs come from $DEMO_CUDA_ARCHS ("75;90;121" or "7.5;9.0;12.1"); nvcc from $CUDACXX or
PATH; $CMAKE_CUDA_COMPILER_LAUNCHER (e.g. farm-nvcc) wraps each nvcc call.
"""
import os
import shutil
import subprocess
import sysconfig

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py
from setuptools.command.bdist_wheel import bdist_wheel

LIBRARY = "libdemo_cuda_ext.so"


class BuildWithCMake(build_py):
    def run(self):
        super().run()
        here = os.path.dirname(os.path.abspath(__file__))
        build_temp = os.path.join(here, "build", "cmake")
        configure = ["cmake", "-S", here, "-B", build_temp, "-DCMAKE_BUILD_TYPE=Release"]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        if os.path.exists(os.path.join(build_temp, "CMakeCache.txt")):
            configure = configure[:5] + ["-DCMAKE_BUILD_TYPE=Release"]  # keep its generator
        subprocess.check_call(configure)
        subprocess.check_call(["cmake", "--build", build_temp])
        target = os.path.join(self.build_lib, "demo_cuda_ext")
        os.makedirs(target, exist_ok=True)
        shutil.copy2(os.path.join(build_temp, LIBRARY), os.path.join(target, LIBRARY))


class BinaryDistribution(Distribution):
    """The wheel carries a native library, so it is platform-specific (platlib)."""

    def has_ext_modules(self):
        return True


class PythonAgnosticWheel(bdist_wheel):
    """The library is loaded with ctypes, not as a CPython extension: one wheel serves every
    Python 3 on the platform (py3-none-<platform>)."""

    def get_tag(self):
        _, _, platform = super().get_tag()
        return "py3", "none", platform


setup(
    distclass=BinaryDistribution,
    cmdclass={"build_py": BuildWithCMake, "bdist_wheel": PythonAgnosticWheel},
)
