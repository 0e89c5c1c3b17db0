// Builds examples/demo-cuda-ext's wheel with plain nvcc for "7.5;9.0" (from a copy of the
// tree, so the repo stays clean), checks the library's device code with libfarm's
// inspector, retags it, verifies it and installs it with pip.
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "libfarm/coverage/binary_inspector.h"
#include "libfarm/coverage/wheel_verifier.h"
#include "libfarm/cuda/arch_list.h"
#include "libfarm/files/file_contents.h"
#include "libfarm/host/host_probe.h"
#include "libfarm/process/subprocess.h"
#include "libfarm/recipes/build_render.h"
#include "libfarm/retag/wheel_retag.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

CommandResult RunTool(const std::vector<std::string>& argv,
                      const std::vector<std::string>& env = {}) {
  auto r = RunCommand(argv, absl::Seconds(280), env);
  EXPECT_TRUE(r.ok()) << argv[0] << ": " << r.status();
  if (!r.ok()) return CommandResult{};
  EXPECT_EQ(r->exit_code, 0) << r->stdout_text << r->stderr_text;
  return *r;
}

TEST(DemoCudaExtTest, WheelCarriesExactlyTheRequestedSassAndInstalls) {
  const fs::path root = fs::temp_directory_path() / absl::StrCat("demo_ext_test_", ::getpid());
  fs::remove_all(root);
  fs::create_directories(root);
  const fs::path src = root / "demo-cuda-ext";
  fs::copy(FARM_DEMO_CUDA_EXT_DIR, src, fs::copy_options::recursive);
  fs::remove_all(src / "build");  // a developer's leftovers must not leak into the test

  RunTool({FARM_TOOLS_PYTHON, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
           (root / "dist").string(), src.string()},
          {"DEMO_CUDA_ARCHS=7.5;9.0", "CMAKE_CUDA_COMPILER_LAUNCHER="});
  std::string wheel;
  for (const auto& e : fs::directory_iterator(root / "dist")) wheel = e.path().string();
  ASSERT_FALSE(wheel.empty()) << "pip wheel produced no wheel";
  EXPECT_NE(wheel.find("demo_cuda_ext-0.1.0-py3-none-linux_"), std::string::npos) << wheel;

  // The inspector sees SASS for sm_75 and sm_90 in the library, and nothing else.
  auto inspection = InspectPath(wheel);
  ASSERT_TRUE(inspection.ok()) << inspection.status();
  std::set<std::string> sass, ptx;
  bool found_library = false;
  for (const InspectedFile& f : inspection->files) {
    EXPECT_TRUE(f.error.empty()) << f.path << ": " << f.error;
    if (f.path.find("demo_cuda_ext/libdemo_cuda_ext.so") == std::string::npos) continue;
    found_library = true;
    for (const InspectedContainer& c : f.containers) {
      for (const InspectedEntry& e : c.entries) {
        if (e.kind == FatbinEntryKind::kCubin) sass.insert(e.arch);
        if (e.kind == FatbinEntryKind::kPtx) ptx.insert(e.arch);
      }
    }
  }
  ASSERT_TRUE(found_library);
  EXPECT_EQ(sass, (std::set<std::string>{"sm_75", "sm_90"}));
  EXPECT_TRUE(ptx.empty()) << "the build asked for SASS only (CMake NN-real)";

  // Retag, then the verifier (archs, RECORD, tags, glibc) and pip accept it.
  fs::create_directories(root / "out");
  auto retagged = RetagWheel(
      wheel,
      RetagOptions{{13, 0}, ProbeHost().cpu_arch, DottedVersion{{2, 36}}, (root / "out").string()});
  ASSERT_TRUE(retagged.ok()) << retagged.status();
  EXPECT_EQ(retagged->version, "0.1.0+cu130");
  auto archs = ParseArchList("7.5;9.0");
  ASSERT_TRUE(archs.ok());
  auto report = VerifyWheel(retagged->path, VerifyPolicy{*archs, DottedVersion{{2, 36}}});
  ASSERT_TRUE(report.ok()) << report.status();
  for (const VerifyFinding& f : report->failures) {
    ADD_FAILURE() << f.check << " " << f.path << ": " << f.message;
  }
  auto more = ParseArchList("7.5;9.0;12.1");
  auto missing = VerifyWheel(retagged->path, VerifyPolicy{*more, DottedVersion{{2, 36}}});
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->Passed()) << "sm_121 was not built, so verification must fail";

  const std::string site = (root / "site").string();
  RunTool({FARM_TOOLS_PYTHON, "-m", "pip", "install", "--no-deps", "--no-index", "-q", "--target",
           site, retagged->path});
  CommandResult out = RunTool(
      {FARM_TOOLS_PYTHON, "-c",
       "import importlib.metadata as m, demo_cuda_ext as d\n"
       "print(m.version('demo-cuda-ext'), d.compiled_archs(), d.kernels(), d.device_count())\n"},
      {absl::StrCat("PYTHONPATH=", site)});
  EXPECT_EQ(out.stdout_text,
            "0.1.0+cu130 ['sm_75', 'sm_90'] ['saxpy_kernel', 'block_sum_kernel', "
            "'arch_probe_kernel'] 0\n");
  fs::remove_all(root);
}

// The demo recipe hands the build its archs as {cmake_archs} (DEMO_CUDA_ARCHS), which the demo's
// CMakeLists reads in either form: one arch must come out as asked, SASS alone or SASS and PTX.
// Only CMake's configure step runs: the nvcc flags it writes are what the build compiles.
TEST(DemoCudaExtTest, OneRequestedArchBuildsSassAloneOrWithPtxAsAsked) {
  const fs::path root = fs::temp_directory_path() / absl::StrCat("demo_ext_archs_", ::getpid());
  fs::remove_all(root);
  int n = 0;
  for (const auto& [request, codes] : std::vector<std::pair<std::string, std::set<std::string>>>{
           {"8.0", {"sm_80"}},
           {"8.0+PTX", {"sm_80", "compute_80"}},
           {"9.0a", {"sm_90a"}},
           {"12.0+PTX", {"sm_120", "compute_120"}},
           {"7.5;8.0+PTX", {"sm_75", "sm_80", "compute_80"}}}) {
    SCOPED_TRACE(request);
    auto archs = ParseArchList(request);
    ASSERT_TRUE(archs.ok()) << archs.status();
    const fs::path build = root / absl::StrCat("build", ++n);
    RunTool(
        {"cmake", "-S", FARM_DEMO_CUDA_EXT_DIR, "-B", build.string(), "-G", "Ninja",
         "-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc"},
        {absl::StrCat("DEMO_CUDA_ARCHS=", CmakeArchs(*archs)), "CMAKE_CUDA_COMPILER_LAUNCHER="});
    auto ninja = ReadFileContents((build / "build.ninja").string());
    ASSERT_TRUE(ninja.ok()) << ninja.status();
    // "--generate-code=arch=compute_80,code=[compute_80,sm_80]": what nvcc writes, SASS or PTX.
    std::set<std::string> found;
    for (size_t at = ninja->find("code=["); at != std::string::npos;
         at = ninja->find("code=[", at + 1)) {
      const size_t start = at + std::string("code=[").size();
      const std::string list = ninja->substr(start, ninja->find(']', start) - start);
      for (absl::string_view code : absl::StrSplit(list, ',')) found.emplace(code);
    }
    EXPECT_EQ(found, codes);
  }
  fs::remove_all(root);
}

}  // namespace
}  // namespace farm
