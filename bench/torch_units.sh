# torch 2.9.1's two heavy units, the headers every cpp_extension and PyTorch TU reads, for the
# benches that time a build host's steps on them (run_host_preprocess_bench.sh,
# run_include_reading_bench.sh). Source it; it defines:
#   torch_units_write DIR   installs torch when missing (scripts/install-torch.sh), writes
#                           DIR/ext.cpp (<torch/extension.h>) and DIR/aten.cpp (<ATen/ATen.h>)
#                           and sets the array torch_unit_flags: the flags
#                           torch.utils.cpp_extension passes (its includes, -std=c++17, -fPIC)

torch_units_write() {
  local dir=$1 venv torch py_inc
  venv=${WHEELFARM_TORCH_VENV:-$HOME/.cache/wheelfarm/torch-2.9.1-venv}
  [[ -x $venv/bin/python ]] || bash scripts/install-torch.sh >&2
  torch=$("$venv/bin/python" -c 'import importlib.util, os; print(os.path.dirname(importlib.util.find_spec("torch").origin))')
  py_inc=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  torch_unit_flags=(-std=c++17 -fPIC -O2 -DTORCH_EXTENSION_NAME=bench -D_GLIBCXX_USE_CXX11_ABI=1
    -I"$torch/include" -I"$torch/include/torch/csrc/api/include" -I"$py_inc")
  cat >"$dir/ext.cpp" <<'CPP'
#include <torch/extension.h>
torch::Tensor twice(const torch::Tensor& x) { return x * 2; }
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("twice", &twice); }
CPP
  cat >"$dir/aten.cpp" <<'CPP'
#include <ATen/ATen.h>
at::Tensor add_one(const at::Tensor& x) { return x + 1; }
CPP
}
