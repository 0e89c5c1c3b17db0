// A torch.utils.cpp_extension package (examples/torch-cpp-ext) built against torch 2.9.1 from
// PyPI, once with plain nvcc and once with farm-nvcc in nvcc's place on a real 2-worker farm:
// every nvcc call must be split (no fallback), each arch's device compiles must run on the
// farm, and the device code in the two extension libraries must be byte-identical. Its C++
// (binding.cpp, and the .cu files' host compiles) goes through farm-cc's masquerade `c++`.
//
// torch comes from the venv scripts/install-torch.sh makes (~/.cache/wheelfarm/
// torch-2.9.1-venv, or $WHEELFARM_TORCH_VENV); without it the test fails and says so.
//
// The build goes through torch.utils.cpp_extension.load() (examples/torch-cpp-ext/
// jit_build.py): the same build.ninja rules as setup.py's BuildExtension, but BuildExtension
// refuses nvcc 13.0 against torch 2.9.1+cu128 (`_check_cuda_version`: CUDA majors must match)
// and this host has no CUDA 12 toolkit. farm-nvcc reaches the build through PYTORCH_NVCC,
// which cpp_extension writes verbatim as build.ninja's `nvcc = ...` on either path.
#include <cstdlib>
#include <filesystem>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "libfarm/process/subprocess.h"
#include "tests/support/device_payloads.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::HasSubstr;

const char* const kCudaHome = "/usr/local/cuda";
const char* const kArchs = "7.5;9.0";
const char* const kModule = "wheelfarm_torch_cpp_ext_C";

std::string TorchVenv() {
  if (const char* v = std::getenv("WHEELFARM_TORCH_VENV"); v != nullptr && *v != '\0') return v;
  const char* home = std::getenv("HOME");
  return absl::StrCat(home != nullptr ? home : "", "/.cache/wheelfarm/torch-2.9.1-venv");
}

// The lines of `text` that contain `needle`, for failure messages.
std::string LinesWith(const std::string& text, const std::string& needle) {
  std::vector<std::string> lines;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::StrContains(line, needle)) lines.emplace_back(line);
  }
  return absl::StrJoin(lines, "\n");
}

class TorchCppExtensionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    venv_ = TorchVenv();
    // Never skipped: a missing torch is a broken test environment, with a one-line fix.
    ASSERT_TRUE(fs::exists(venv_ + "/bin/python") && fs::exists(venv_ + "/.wheelfarm-stamp") &&
                fs::is_directory(venv_ + "/cuda-runtime-stubs"))
        << "no torch 2.9.1 venv at " << venv_
        << ": run `bash scripts/install-torch.sh` (downloads torch 2.9.1 from PyPI once, ~900 MB)";
    dir_.emplace("torch-cpp-ext-test");
    auto farm = TestFarm::Start(dir_->path());
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
    // One copy of the package for both builds: nvcc's device code depends on the source's path.
    src_ = *dir_ / "torch-cpp-ext";
    fs::copy(std::string(FARM_SOURCE_DIR) + "/examples/torch-cpp-ext", src_,
             fs::copy_options::recursive);
  }

  // Builds the extension into `build_dir` the way a user of cpp_extension does, with torch's
  // import-time CUDA libraries from the venv's stand-ins.
  CommandResult Build(const std::string& build_dir, std::vector<std::string> env) {
    env.insert(env.end(), {"CUDA_HOME=" + std::string(kCudaHome),
                           absl::StrCat("TORCH_CUDA_ARCH_LIST=", kArchs), "MAX_JOBS=2",
                           "LD_LIBRARY_PATH=" + venv_ + "/cuda-runtime-stubs"});
    auto r = RunCommand(
        {"env", "-C", src_, venv_ + "/bin/python", "-W", "ignore", "jit_build.py", build_dir},
        absl::Minutes(30), env);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{};
  }

  std::string venv_;
  std::optional<TempDir> dir_;
  std::unique_ptr<TestFarm> farm_;
  std::string src_;
};

TEST_F(TorchCppExtensionTest, BuildsThroughTheFarmWithPlainNvccsDeviceCode) {
  const std::string plain_dir = *dir_ / "build-plain";
  CommandResult plain = Build(plain_dir, {});
  ASSERT_EQ(plain.exit_code, 0) << plain.stdout_text << plain.stderr_text;

  const std::string farm_dir = *dir_ / "build-farm";
  const std::string farm_nvcc = FarmBinary("farm-nvcc");
  // cpp_extension's cxx rule runs `c++`: farm-cc's masquerade directory first on PATH makes
  // that farm-cc, so binding.cpp and the .cu files' host compiles go to the farm too (strict:
  // a compile kept here fails the build).
  const std::string masquerade =
      (fs::path(FarmBinary("farm-cc")).parent_path() / "farm-cc-masquerade").string();
  const char* path = std::getenv("PATH");
  CommandResult farm = Build(
      farm_dir, {"PYTORCH_NVCC=" + farm_nvcc + " " + kCudaHome + "/bin/nvcc",
                 "FARM_COORDINATOR=" + farm_->coordinator().grpc_address(),
                 "FARM_TOKEN_FILE=" + farm_->coordinator().token_file(), "FARM_NVCC_LOG=debug",
                 "FARM_BUILD_ID=torch-cpp-ext-test", "FARM_CC_STRICT=1",
                 absl::StrCat("PATH=", masquerade, ":", path != nullptr ? path : "/usr/bin:/bin")});
  const std::string log = farm.stdout_text + farm.stderr_text;
  ASSERT_EQ(farm.exit_code, 0) << log;

  // cpp_extension wrote farm-nvcc into build.ninja's nvcc variable and the cuda_compile rule
  // kept its dependency-file flags: this is the command line farm-nvcc has to split.
  const std::string ninja = ReadFile(farm_dir + "/build.ninja");
  EXPECT_THAT(ninja, HasSubstr(absl::StrCat("nvcc = ", farm_nvcc, " ", kCudaHome, "/bin/nvcc\n")))
      << ninja;
  EXPECT_THAT(ninja, HasSubstr("--generate-dependencies-with-compile --dependency-output $out.d"));

  // Every nvcc call split: a fallback names its reason on a "running plain nvcc" line.
  EXPECT_EQ(CountOccurrences(log, "running plain nvcc"), 0)
      << "farm-nvcc ran plain nvcc for cpp_extension's compiles:\n"
      << LinesWith(log, "running plain nvcc");
  // Two .cu files, two archs: each (file, arch) device compile ran on a worker.
  for (const char* arch : {"sm_75", "sm_90"}) {
    EXPECT_EQ(CountOccurrences(log, absl::StrCat("farm-nvcc: ", arch, ": ran on w")), 2)
        << arch << " device compiles:\n"
        << LinesWith(log, "farm-nvcc: ");
  }

  // binding.cpp (torch/extension.h) compiled on a worker to the object the plain build's
  // c++ wrote; with the two .cu files' host compiles, three host compiles on the farm.
  EXPECT_TRUE(ReadFile(farm_dir + "/binding.o") == ReadFile(plain_dir + "/binding.o"))
      << "binding.o differs from the plain build's";
  const CommandResult counts =
      RunFarmctl({"build", "torch-cpp-ext-test", "--json"}, farm_->ClientEnvironment());
  ASSERT_EQ(counts.exit_code, 0) << Output(counts);
  const auto json = nlohmann::json::parse(counts.stdout_text, nullptr, false);
  ASSERT_TRUE(json.is_object() && json.contains("host_compiles")) << counts.stdout_text;
  EXPECT_EQ(json["host_compiles"].value("split", "0"), "3") << json.dump();
  EXPECT_EQ(json["host_compiles"].value("fallbacks", "0"), "0") << json.dump();

  const std::string library = absl::StrCat("/", kModule, ".so");
  auto want = DevicePayloads(plain_dir + library);
  auto got = DevicePayloads(farm_dir + library);
  EXPECT_THAT(Keys(want), Contains(HasSubstr("cubin sm_75")));
  EXPECT_THAT(Keys(want), Contains(HasSubstr("cubin sm_90")));
  ASSERT_EQ(Keys(got), Keys(want));
  for (const auto& [key, bytes] : want) {
    EXPECT_TRUE(got[key] == bytes)
        << key << " differs (" << got[key].size() << " vs " << bytes.size() << " bytes)";
  }
}

// The example promises alpha * x + y in the tensor's precision: the double instantiation's
// PTX computes in f64 and never narrows to f32 (on an H100 a float computation of doubles was
// off by 4e-7). PTX, since this host cannot run the kernel; the flags are cpp_extension's.
TEST(TorchCppExtensionSourceTest, ScaleAddComputesDoublesInDouble) {
  const std::string venv = TorchVenv();
  ASSERT_TRUE(fs::exists(venv + "/bin/python"))
      << "no torch 2.9.1 venv at " << venv << ": run `bash scripts/install-torch.sh`";
  auto includes = RunCommand(
      {venv + "/bin/python", "-c",
       "from torch.utils.cpp_extension import include_paths; print('\\n'.join(include_paths()))"},
      absl::Minutes(2), {"LD_LIBRARY_PATH=" + venv + "/cuda-runtime-stubs"});
  ASSERT_TRUE(includes.ok() && includes->exit_code == 0)
      << (includes.ok() ? includes->stderr_text : includes.status().ToString());
  TempDir dir("scale-add-ptx");
  const std::string ptx = dir / "scale_add.ptx";
  std::vector<std::string> argv = {std::string(kCudaHome) + "/bin/nvcc",
                                   "-ptx",
                                   "-arch=compute_90",
                                   "-std=c++17",
                                   "-O2",
                                   "--use_fast_math",
                                   "-DTORCH_EXTENSION_NAME=" + std::string(kModule)};
  for (absl::string_view dir_line :
       absl::StrSplit(includes->stdout_text, '\n', absl::SkipEmpty())) {
    argv.insert(argv.end(), {"-isystem", std::string(dir_line)});
  }
  argv.insert(
      argv.end(),
      {std::string(FARM_SOURCE_DIR) + "/examples/torch-cpp-ext/csrc/scale_add.cu", "-o", ptx});
  auto compiled = RunCommand(argv, absl::Minutes(10));
  ASSERT_TRUE(compiled.ok() && compiled->exit_code == 0)
      << (compiled.ok() ? compiled->stderr_text : compiled.status().ToString());
  // The kernel for double: from its .entry to the next one.
  const std::string text = ReadFile(ptx);
  const size_t entry = text.find(".entry _ZN17wheelfarm_example14ScaleAddKernelId");
  ASSERT_NE(entry, std::string::npos) << "no double instantiation in the PTX";
  const size_t next = text.find(".entry", entry + 1);
  const std::string body = text.substr(entry, next == std::string::npos ? next : next - entry);
  EXPECT_THAT(body, HasSubstr(".f64"));
  EXPECT_EQ(LinesWith(body, "f32"), "") << "the double kernel computes in float";
}

}  // namespace
}  // namespace farm::testing
