// -rdc pair: the device function rdc_caller.cu calls.
__device__ float Square(float v) { return v * v; }
