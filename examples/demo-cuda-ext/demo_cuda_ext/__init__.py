"""Wheelfarm's demo CUDA extension: kernels in libdemo_cuda_ext.so, loaded with ctypes.

compiled_archs() and kernels() answer from the library itself and need no GPU; saxpy(),
total() and probe_arch() run on a GPU and raise RuntimeError without one.
"""
import ctypes
import os

__all__ = ["compiled_archs", "kernels", "device_count", "saxpy", "total", "probe_arch"]

_lib = ctypes.CDLL(os.path.join(os.path.dirname(os.path.abspath(__file__)), "libdemo_cuda_ext.so"))
_lib.demo_compiled_archs.restype = ctypes.c_char_p
_lib.demo_kernel_names.restype = ctypes.c_char_p
_lib.demo_device_count.restype = ctypes.c_int
_FloatPtr = ctypes.POINTER(ctypes.c_float)
_lib.demo_saxpy.argtypes = [ctypes.c_int, ctypes.c_float, _FloatPtr, _FloatPtr]
_lib.demo_sum.argtypes = [ctypes.c_int, _FloatPtr, _FloatPtr]
_lib.demo_probe_arch.argtypes = [ctypes.POINTER(ctypes.c_int)]


def compiled_archs():
    """SMs the library carries SASS for, e.g. ['sm_75', 'sm_90']."""
    return ["sm_" + a for a in _lib.demo_compiled_archs().decode().split(",") if a]


def kernels():
    """Names of the CUDA kernels in the library."""
    return _lib.demo_kernel_names().decode().split(",")


def device_count():
    """CUDA devices visible to this process (0 without a GPU or driver)."""
    return _lib.demo_device_count()


def _check(err, what):
    if err != 0:
        raise RuntimeError("%s failed with CUDA error %d (is there a GPU?)" % (what, err))


def saxpy(a, x, y):
    """Returns a*x + y computed on the GPU."""
    n = len(x)
    if len(y) != n:
        raise ValueError("x and y differ in length")
    xs = (ctypes.c_float * n)(*x)
    ys = (ctypes.c_float * n)(*y)
    _check(_lib.demo_saxpy(n, a, xs, ys), "saxpy")
    return list(ys)


def total(x):
    """Sum of x computed on the GPU with a CUB block reduction."""
    n = len(x)
    xs = (ctypes.c_float * n)(*x)
    out = ctypes.c_float(0)
    _check(_lib.demo_sum(n, xs, ctypes.byref(out)), "sum")
    return out.value


def probe_arch():
    """__CUDA_ARCH__ of the code the GPU ran, e.g. 900."""
    out = ctypes.c_int(0)
    _check(_lib.demo_probe_arch(ctypes.byref(out)), "probe_arch")
    return out.value
