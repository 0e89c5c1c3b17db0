// Runs the installed nvcc (13.0) with --dryrun and checks the steps are classified and
// grouped per arch exactly; nvcc's real output is the fixture.
#include "libfarm/nvcc/nvcc_dryrun.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "libfarm/process/path_search.h"
#include "libfarm/process/subprocess.h"

namespace farm {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr char kNvcc[] = "/usr/local/cuda/bin/nvcc";

// Device code that differs per arch, so a wrong __CUDA_ARCH__ would change the cubin.
constexpr char kKernel[] = R"(
__global__ void k(float* x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  x[threadIdx.x] = __CUDA_ARCH__ * 2.0f;
#elif defined(__CUDA_ARCH__)
  x[threadIdx.x] = __CUDA_ARCH__;
#endif
}
)";

class NvccDryrunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "/nvcc_dryrun_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    std::ofstream(dir_ + "/k.cu") << kKernel;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  NvccDryrun Dryrun(const std::vector<std::string>& args) {
    auto dryrun = RunNvccDryrun(kNvcc, args, dir_);
    EXPECT_TRUE(dryrun.ok()) << dryrun.status();
    return dryrun.ok() ? *dryrun : NvccDryrun{};
  }

  std::string dir_;
};

std::vector<std::string> GroupArchs(const NvccDryrun& d) {
  std::vector<std::string> archs;
  for (const DeviceGroup& g : d.device_groups) archs.push_back(g.virtual_arch);
  return archs;
}

TEST_F(NvccDryrunTest, ThreeGencodesGiveThreeGroups) {
  NvccDryrun d =
      Dryrun({"-c", "k.cu", "-o", "k.o", "-gencode", "arch=compute_75,code=sm_75", "-gencode",
              "arch=compute_90,code=sm_90", "-gencode", "arch=compute_121,code=sm_121"});
  EXPECT_THAT(GroupArchs(d), ElementsAre("compute_75", "compute_90", "compute_121"));
  const int archs[] = {750, 900, 1210};
  for (size_t i = 0; i < d.device_groups.size(); ++i) {
    const DeviceGroup& g = d.device_groups[i];
    EXPECT_EQ(g.cuda_arch, archs[i]);
    EXPECT_EQ(d.steps[g.preprocess].kind, DryrunStepKind::kDevicePreprocess);
    EXPECT_EQ(d.steps[g.cicc].kind, DryrunStepKind::kCicc);
    ASSERT_THAT(g.ptxas, SizeIs(1));
    ASSERT_THAT(g.cubins, SizeIs(1));
    EXPECT_FALSE(g.ptx_in_fatbin);
    // cicc reads the module id cudafe++ writes (CUDA 12.8+): it must travel with the action.
    EXPECT_THAT(d.steps[g.cicc].line, HasSubstr(d.module_id_file));
  }
  EXPECT_THAT(d.StepsOfKind(DryrunStepKind::kHostPreprocess), SizeIs(1));
  EXPECT_THAT(d.StepsOfKind(DryrunStepKind::kCudafe), SizeIs(1));
  EXPECT_THAT(d.StepsOfKind(DryrunStepKind::kHostCompile), SizeIs(1));
  EXPECT_FALSE(d.module_id_file.empty());
  ASSERT_TRUE(d.fatbinary.has_value());
  const auto& images = d.steps[*d.fatbinary].images;
  ASSERT_THAT(images, SizeIs(3));
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(images[i].kind, "elf");
    EXPECT_EQ(images[i].file, d.device_groups[i].cubins[0].second);
    EXPECT_EQ(images[i].sm, d.device_groups[i].cubins[0].first);
  }
  EXPECT_EQ(images[2].sm, "121");
  // nvcc's environment lines are kept, including the ones cicc needs to find libdevice.
  bool has_nvvmir = false;
  for (const auto& [name, value] : d.environment) has_nvvmir |= name == "NVVMIR_LIBRARY_DIR";
  EXPECT_TRUE(has_nvvmir);
  EXPECT_THAT(d.steps[d.device_groups[0].cicc].tool, "cicc");
  EXPECT_THAT(ExpandedArgv(d, d.steps[d.device_groups[0].cicc])[0], HasSubstr("/nvvm/bin/cicc"));
}

TEST_F(NvccDryrunTest, PtxAndSassFromOneVirtualArch) {
  NvccDryrun d = Dryrun({"-c", "k.cu", "-gencode", "arch=compute_90,code=[compute_90,sm_90]"});
  ASSERT_THAT(d.device_groups, SizeIs(1));
  EXPECT_TRUE(d.device_groups[0].ptx_in_fatbin);
  EXPECT_THAT(d.device_groups[0].cubins, SizeIs(1));
  EXPECT_THAT(d.steps[*d.fatbinary].images, SizeIs(2));
}

// sccache #2862: a PTX-only target runs ptxas with no -o, as a syntax check.
TEST_F(NvccDryrunTest, PtxOnlyTargetHasSyntaxCheckPtxas) {
  NvccDryrun d = Dryrun({"-c", "k.cu", "-gencode", "arch=compute_90,code=compute_90"});
  ASSERT_THAT(d.device_groups, SizeIs(1));
  const DeviceGroup& g = d.device_groups[0];
  ASSERT_THAT(g.ptxas, SizeIs(1));
  EXPECT_EQ(d.steps[g.ptxas[0]].output, "");
  EXPECT_EQ(d.steps[g.ptxas[0]].arch, "compute_90");
  EXPECT_THAT(g.cubins, IsEmpty());
  EXPECT_TRUE(g.ptx_in_fatbin);
}

// -arch=sm_90a builds compute_90 PTX and compute_90a PTX+SASS; both have __CUDA_ARCH__=900,
// so only the virtual arch tells the groups apart.
TEST_F(NvccDryrunTest, ArchSpecificTargetGroupsByVirtualArch) {
  NvccDryrun d = Dryrun({"-c", "k.cu", "-arch=sm_90a"});
  EXPECT_THAT(GroupArchs(d), ElementsAre("compute_90", "compute_90a"));
  EXPECT_EQ(d.device_groups[0].cuda_arch, 900);
  EXPECT_EQ(d.device_groups[1].cuda_arch, 900);
  EXPECT_THAT(d.device_groups[0].cubins, IsEmpty());
  ASSERT_THAT(d.device_groups[1].cubins, SizeIs(1));
  EXPECT_EQ(d.device_groups[1].cubins[0].first, "90a");
  EXPECT_THAT(d.steps[d.device_groups[1].preprocess].argv, Contains("-D__CUDA_ARCH_FEAT_SM90_ALL"));
}

TEST_F(NvccDryrunTest, RelocatableDeviceCode) {
  NvccDryrun d = Dryrun({"-rdc=true", "-c", "k.cu", "-arch=sm_90"});
  ASSERT_THAT(d.device_groups, SizeIs(1));
  EXPECT_THAT(d.steps[d.device_groups[0].ptxas[0]].argv, Contains("--compile-only"));
  EXPECT_THAT(d.steps[*d.fatbinary].argv, Contains("--device-c"));
}

TEST_F(NvccDryrunTest, DeviceLinkHasNoDeviceGroups) {
  auto compile = RunCommand({"env", "-C", dir_, kNvcc, "-rdc=true", "-c", "k.cu", "-arch=sm_90"},
                            absl::Seconds(120));
  ASSERT_TRUE(compile.ok() && compile->exit_code == 0) << compile->stderr_text;
  NvccDryrun d = Dryrun({"-dlink", "k.o", "-o", "dl.o", "-arch=sm_90"});
  EXPECT_THAT(d.device_groups, IsEmpty());
  ASSERT_THAT(d.StepsOfKind(DryrunStepKind::kNvlink), SizeIs(1));
  ASSERT_TRUE(d.fatbinary.has_value());
  EXPECT_EQ(d.steps[*d.fatbinary].images[0].file,
            d.steps[d.StepsOfKind(DryrunStepKind::kNvlink)[0]].output);
  EXPECT_THAT(d.StepsOfKind(DryrunStepKind::kHostCompile), SizeIs(1));
}

TEST_F(NvccDryrunTest, OptionsFileAndHostOptions) {
  std::ofstream(dir_ + "/opts.txt") << "-gencode arch=compute_75,code=sm_75\n"
                                       "-gencode arch=compute_90,code=sm_90\n";
  NvccDryrun d = Dryrun({"-c", "k.cu", "--options-file", "opts.txt", "-Xcompiler", "-fPIC"});
  EXPECT_THAT(GroupArchs(d), ElementsAre("compute_75", "compute_90"));
  for (size_t s : d.StepsOfKind(DryrunStepKind::kHostCompile)) {
    EXPECT_THAT(d.steps[s].argv, Contains("-fPIC"));
  }
  for (const DeviceGroup& g : d.device_groups) {
    EXPECT_THAT(d.steps[g.preprocess].argv, Contains("-fPIC"));
  }
}

// -t and -MD reorder the steps, add redirections and an nvcc-internal dependency step.
TEST_F(NvccDryrunTest, CompressThreadsAndDependencies) {
  NvccDryrun d =
      Dryrun({"-c", "k.cu", "-o", "k.o", "--compress-mode=size", "-t", "2", "-MD", "-MF", "k.d",
              "-gencode", "arch=compute_75,code=sm_75", "-gencode", "arch=compute_90,code=sm_90"});
  EXPECT_THAT(GroupArchs(d), ElementsAre("compute_75", "compute_90"));
  EXPECT_THAT(d.steps[*d.fatbinary].argv, Contains("--compress-mode=size"));
  const DeviceGroup& g = d.device_groups[0];
  EXPECT_THAT(d.steps[g.ptxas[0]].stdout_redirect, HasSubstr("_stdout"));
  EXPECT_THAT(d.steps[g.ptxas[0]].stderr_redirect, HasSubstr("_stderr"));
  ASSERT_THAT(d.StepsOfKind(DryrunStepKind::kDependencyFilter), SizeIs(1));
  EXPECT_EQ(d.steps[d.StepsOfKind(DryrunStepKind::kDependencyFilter)[0]].stdout_redirect, "k.d");
}

TEST(NvccDryrunParseTest, RefusesPtxasWithoutProducer) {
  auto d = ParseNvccDryrun("#$ ptxas -arch=sm_90 -m64 \"/tmp/x.ptx\" -o \"/tmp/x.cubin\"\n");
  EXPECT_FALSE(d.ok());
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The fact farm-nvcc rests on: nvcc's own per-arch steps, run by us, give the same cubin
// nvcc gives, byte for byte.
TEST_F(NvccDryrunTest, ReplayedDeviceStepsGiveNvccsCubin) {
  // TMPDIR keeps nvcc's tmpxft files inside the test directory.
  const std::vector<std::string> env = {"TMPDIR=" + dir_};
  auto run = RunCommand({"env", "-C", dir_, kNvcc, "--dryrun", "-c", "k.cu", "-o", "k.o",
                         "-gencode", "arch=compute_90,code=sm_90"},
                        absl::Seconds(60), env);
  ASSERT_TRUE(run.ok() && run->exit_code == 0);
  auto d = ParseNvccDryrun(run->stderr_text);
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_THAT(d->device_groups, SizeIs(1));
  std::vector<std::string> step_env = env;
  std::string path_value;
  for (const auto& [name, value] : d->environment) {
    step_env.push_back(name + "=" + value);
    if (name == "PATH") path_value = value;
  }
  // cicc needs the .module_id that cudafe++ writes, and cudafe++ the host preprocess output.
  const DeviceGroup& g = d->device_groups[0];
  std::vector<size_t> order = {d->StepsOfKind(DryrunStepKind::kHostPreprocess)[0],
                               d->StepsOfKind(DryrunStepKind::kCudafe)[0], g.preprocess, g.cicc,
                               g.ptxas[0]};
  for (size_t s : order) {
    std::vector<std::string> argv = ExpandedArgv(*d, d->steps[s]);
    argv[0] = FindOnPath(argv[0], path_value).value_or(argv[0]);
    argv.insert(argv.begin(), {"env", "-C", dir_});
    auto step = RunCommand(argv, absl::Seconds(120), step_env);
    ASSERT_TRUE(step.ok()) << step.status();
    ASSERT_EQ(step->exit_code, 0) << d->steps[s].line << "\n" << step->stderr_text;
  }
  auto ref =
      RunCommand({"env", "-C", dir_, kNvcc, "-cubin", "-arch=sm_90", "k.cu", "-o", "ref.cubin"},
                 absl::Seconds(120));
  ASSERT_TRUE(ref.ok() && ref->exit_code == 0) << ref->stderr_text;
  const std::string replayed = ReadAll(g.cubins[0].second);
  ASSERT_FALSE(replayed.empty());
  EXPECT_TRUE(replayed == ReadAll(dir_ + "/ref.cubin")) << "cubins differ";
}

}  // namespace
}  // namespace farm

namespace farm {
namespace {

TEST_F(NvccDryrunTest, NamesTheToolkitReleaseThatPlannedIt) {
  auto toolkit = ToolkitOfDryrun(Dryrun({"-c", "k.cu", "-o", "k.o", "-arch=sm_90"}));
  ASSERT_TRUE(toolkit.ok()) << toolkit.status();
  // What `nvcc --version` says of the same nvcc ("V13.0.88").
  auto version = RunCommand({kNvcc, "--version"});
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_THAT(version->stdout_text,
              HasSubstr(absl::StrCat("release ", toolkit->version, ", V", toolkit->release, "\n")));
}

TEST(NvccDryrunParseTest, APlanWithoutABuildNumberIsNotDecomposable) {
  NvccDryrun d;
  d.steps.push_back({});
  d.steps.back().argv = {"gcc", "-D__CUDACC_VER_MAJOR__=13", "-D__CUDACC_VER_MINOR__=0", "-E"};
  EXPECT_EQ(ToolkitOfDryrun(d).status().code(), absl::StatusCode::kUnimplemented);
  d.steps.back().argv.push_back("-D__CUDACC_VER_BUILD__=88");
  auto toolkit = ToolkitOfDryrun(d);
  ASSERT_TRUE(toolkit.ok()) << toolkit.status();
  EXPECT_EQ(toolkit->version, "13.0");
  EXPECT_EQ(toolkit->release, "13.0.88");
  d.steps.back().argv.back() = "-D__CUDACC_VER_BUILD__=88;rm";
  EXPECT_FALSE(ToolkitOfDryrun(d).ok());
}

}  // namespace
}  // namespace farm
