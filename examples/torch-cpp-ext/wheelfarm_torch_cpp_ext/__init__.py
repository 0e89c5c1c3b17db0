"""scale_add(x, y, alpha) = alpha * x + y for float/double/half tensors; histogram(values, bins)."""
from . import _C  # noqa: F401

scale_add = _C.scale_add
histogram = _C.histogram
