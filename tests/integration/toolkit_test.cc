// Two CUDA toolkits side by side on one x86 farm: the installed /usr/local/cuda (13.0) and a
// PyPI 13.2 that `farmctl toolkit install` assembles in a cache outside the clone (reused
// when present; PyPI unreachable fails here, loudly). Worker wA offers only 13.0, wB only
// 13.2: device actions go to the worker with the exact release that planned them, and the
// action cache never answers one release with another's result. Also the toolkit checks:
// an unknown release, a release pip cannot find, a worker with a broken toolkit.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/auth/token.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/toolkit/toolkit_check.h"
#include "libfarm/toolkit/toolkit_probe.h"
#include "tests/support/device_payloads.h"
#include "tests/support/suite_fixture.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kInstalledRoot[] = "/usr/local/cuda";
// The PyPI toolkit: a 13.2 release, so the two differ in minor version and release.
constexpr char kPyPIRelease[] = "13.2.86";

std::string SourceDir() { return std::string(FARM_SOURCE_DIR) + "/tests/data/cuda"; }

// Where PyPI toolkits are kept between runs: never inside the clone, so `git clean` and a
// fresh checkout in CI keep them.
std::string ToolkitCache() {
  if (const char* dir = std::getenv("WHEELFARM_TOOLKIT_CACHE"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/wheelfarm/toolkits";
  }
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : "/tmp") + "/.cache/wheelfarm/toolkits";
}

// "13.0.88" from the toolkit's own `nvcc --version`.
std::string ReleaseOf(const std::string& root) {
  auto info = ProbeToolkit(root);
  EXPECT_TRUE(info.ok()) << info.status();
  return info.ok() ? info->release.substr(1) : "";
}

class ToolkitsSideBySideTest : public SuiteFixture<ToolkitsSideBySideTest> {
 protected:
  static void SetUpSuite() {
    dir_ = std::make_unique<TempDir>("toolkits");
    pypi_root_ =
        std::make_unique<std::string>(absl::StrCat(ToolkitCache(), "/", kPyPIRelease, "-x86_64"));
    // farmctl itself, as a user runs it: the first run downloads (~115 MB), later ones find
    // the checked toolkit and return at once.
    const absl::Time start = absl::Now();
    auto install = RunCommand(
        {FarmBinary("farmctl"), "toolkit", "install", kPyPIRelease, "--prefix", *pypi_root_},
        absl::Minutes(20));
    ASSERT_TRUE(install.ok()) << install.status();
    ASSERT_EQ(install->exit_code, 0)
        << "farmctl toolkit install " << kPyPIRelease << " failed (is PyPI reachable?):\n"
        << install->stderr_text;
    std::cerr << "toolkit install " << kPyPIRelease << ": "
              << absl::FormatDuration(absl::Now() - start) << "\n"
              << install->stdout_text;
    installed_release_ = std::make_unique<std::string>(ReleaseOf(kInstalledRoot));
    ASSERT_EQ(ReleaseOf(*pypi_root_), kPyPIRelease);
    ASSERT_NE(*installed_release_, kPyPIRelease);

    auto farm = TestFarm::Start(
        dir_->path(), {.workers = {{.name = "wA", .args = {"--cuda-path", kInstalledRoot}},
                                   {.name = "wB", .args = {"--cuda-path", *pypi_root_}}}});
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
  }
  static void TearDownSuite() {
    farm_.reset();
    dir_.reset();
    pypi_root_.reset();
    installed_release_.reset();
  }

  CommandResult Run(const std::vector<std::string>& argv, const std::string& cwd) {
    std::vector<std::string> full = {"env", "-C", cwd};
    full.insert(full.end(), argv.begin(), argv.end());
    std::vector<std::string> env = farm_->ClientEnvironment();
    env.push_back("FARM_NVCC_LOG=debug");
    env.push_back("FARM_BUILD_ID=toolkits");
    auto r = RunCommand(full, absl::Minutes(5), env);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{};
  }

  std::string WorkDir(const std::string& label) {
    const std::string d = *dir_ / label;
    fs::create_directories(d);
    fs::copy_file(SourceDir() + "/saxpy.cu", d + "/saxpy.cu", fs::copy_options::overwrite_existing);
    return d;
  }

  static inline std::unique_ptr<TempDir> dir_;
  static inline std::unique_ptr<TestFarm> farm_;
  static inline std::unique_ptr<std::string> pypi_root_;
  static inline std::unique_ptr<std::string> installed_release_;
};

// Each nvcc's device actions run only on the worker with its release, and give the bytes
// that toolkit's plain nvcc gives: the PyPI layout works with the $FARM_CUDA_ROOT scripts.
TEST_F(ToolkitsSideBySideTest, DeviceActionsRunOnlyWhereTheirExactToolkitIs) {
  const std::vector<std::string> archs = {"-gencode", "arch=compute_75,code=sm_75", "-gencode",
                                          "arch=compute_90,code=sm_90"};
  for (const auto& [root, worker, other] :
       {std::tuple<std::string, std::string, std::string>{kInstalledRoot, "wA", "wB"},
        {*pypi_root_, "wB", "wA"}}) {
    SCOPED_TRACE(root);
    const std::string nvcc = root + "/bin/nvcc";
    const std::string d = WorkDir(worker);
    std::vector<std::string> plain = {nvcc, "-c", "saxpy.cu", "-o", "plain.o"};
    plain.insert(plain.end(), archs.begin(), archs.end());
    CommandResult p = Run(plain, d);
    ASSERT_EQ(p.exit_code, 0) << p.stderr_text;
    std::vector<std::string> farm = {
        FarmBinary("farm-nvcc"), nvcc, "-c", "saxpy.cu", "-o", "farm.o"};
    farm.insert(farm.end(), archs.begin(), archs.end());
    CommandResult f = Run(farm, d);
    ASSERT_EQ(f.exit_code, 0) << f.stderr_text;
    EXPECT_THAT(f.stderr_text, HasSubstr("farm-nvcc: sm_75: ran on " + worker)) << f.stderr_text;
    EXPECT_THAT(f.stderr_text, HasSubstr("farm-nvcc: sm_90: ran on " + worker)) << f.stderr_text;
    EXPECT_THAT(f.stderr_text, Not(HasSubstr("ran on " + other)));
    EXPECT_THAT(f.stderr_text, Not(HasSubstr("running plain nvcc")));
    ExpectSamePayloads(d + "/plain.o", d + "/farm.o");
  }
}

// The same translation unit through both toolkits: 13.2 is never answered with 13.0's
// device code, while 13.0 again is.
TEST_F(ToolkitsSideBySideTest, TheActionCacheNeverAnswersOneReleaseWithAnother) {
  const std::string d = WorkDir("cache");
  auto compile = [&](const std::string& root, const std::string& out,
                     const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {
        FarmBinary("farm-nvcc"), root + "/bin/nvcc", "-c", "saxpy.cu", "-o", out, "-arch=sm_90"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    CommandResult r = Run(argv, d);
    EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
    return r.stderr_text;
  };
  EXPECT_THAT(compile(kInstalledRoot, "a.o"), HasSubstr("farm-nvcc: sm_90: ran on wA"));
  const std::string newer = compile(*pypi_root_, "b.o");
  EXPECT_THAT(newer, HasSubstr("farm-nvcc: sm_90: ran on wB"));
  EXPECT_THAT(newer, Not(HasSubstr("action cache")));
  EXPECT_THAT(newer, Not(HasSubstr("compile cache")));
  // 13.0 again, under another name: the whole-compile cache answers (the object does not
  // embed its name). With a host-only warning flag it misses that cache, and the device
  // action, the same as the first one's, comes from the action cache.
  EXPECT_THAT(compile(kInstalledRoot, "c.o"), HasSubstr("saxpy.cu: compile cache"));
  EXPECT_THAT(compile(kInstalledRoot, "d.o", {"-Xcompiler", "-Wall"}),
              HasSubstr("farm-nvcc: sm_90: action cache"));
}

// One action, byte for byte, that differs only in the release it requires: each runs on its
// worker with that toolkit as $FARM_CUDA_ROOT, and neither result answers the other.
TEST_F(ToolkitsSideBySideTest, AnActionRequiringAReleaseGetsThatToolkitAndItsOwnCacheEntry) {
  auto actions = ActionClient::Connect(farm_->address(), farm_->AdminToken());
  auto cas = CasClient::Connect(farm_->address(), farm_->AdminToken());
  auto run = [&](const std::string& release) {
    farm::v1::Action a;
    a.add_argv("/bin/sh");
    a.add_argv("-c");
    a.add_argv("\"$FARM_CUDA_ROOT/bin/nvcc\" --version > version.txt");
    (*a.mutable_env())["PATH"] = "/usr/bin:/bin";
    a.add_output_paths("version.txt");
    a.mutable_requirements()->set_os("linux");
    a.mutable_requirements()->set_cuda_release(release);
    a.set_build_id("toolkits");
    auto submitted = actions->Execute({a});
    EXPECT_TRUE(submitted.ok()) << submitted.status();
    auto done = actions->WaitAll({submitted->front().action_id()}, absl::Seconds(60));
    EXPECT_TRUE(done.ok()) << done.status();
    const farm::v1::ActionStatus st = done->front();
    EXPECT_EQ(st.state(), farm::v1::ACTION_STATE_COMPLETED) << st.error();
    std::string version;
    if (st.result().outputs_size() == 1) {
      auto bytes = cas->DownloadBytes(st.result().outputs(0).digest(), 1 << 20);
      EXPECT_TRUE(bytes.ok()) << bytes.status();
      if (bytes.ok()) version = *bytes;
    }
    return std::make_tuple(st.result().worker(), st.result().cache_hit(), version);
  };
  const auto [w1, hit1, v1] = run(*installed_release_);
  EXPECT_EQ(w1, "wA");
  EXPECT_FALSE(hit1);
  EXPECT_THAT(v1, HasSubstr(", V" + *installed_release_ + "\n"));
  const auto [w2, hit2, v2] = run(kPyPIRelease);
  EXPECT_EQ(w2, "wB");
  EXPECT_FALSE(hit2) << "a " << kPyPIRelease << " action answered from a " << *installed_release_
                     << " result";
  EXPECT_THAT(v2, HasSubstr(absl::StrCat(", V", kPyPIRelease, "\n")));
  const auto [w3, hit3, v3] = run(*installed_release_);
  EXPECT_TRUE(hit3);
  EXPECT_EQ(v3, v1);
}

// No worker has the release: refused at once, naming what each worker has.
TEST_F(ToolkitsSideBySideTest, AReleaseNoWorkerHasIsRefusedNamingTheReleasesOnOffer) {
  auto actions = ActionClient::Connect(farm_->address(), farm_->AdminToken());
  farm::v1::Action a;
  a.add_argv("true");
  a.mutable_requirements()->set_cuda_release("13.0.1");
  auto submitted = actions->Execute({a});
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  const farm::v1::ActionStatus& st = submitted->front();
  EXPECT_EQ(st.state(), farm::v1::ACTION_STATE_FAILED);
  EXPECT_THAT(st.error(), HasSubstr("wA needs CUDA 13.0.1, has CUDA " + *installed_release_));
  EXPECT_THAT(st.error(), HasSubstr(absl::StrCat("wB needs CUDA 13.0.1, has CUDA ", kPyPIRelease)));
}

// ---- Bad input: no farm needed.

TEST(ToolkitInstallTest, AnUnknownReleaseNamesThePackageAndTheVersionsOnOffer) {
  TempDir dir("toolkit-unknown");
  CommandResult r = RunFarmctl({"toolkit", "install", "13.0.99", "--prefix", dir / "tk"});
  EXPECT_EQ(r.exit_code, 2) << r.stderr_text;
  EXPECT_THAT(r.stderr_text, HasSubstr("no pinned CUDA toolkit 13.0.99: farmctl installs "));
  // From PyPI itself: fails here when PyPI cannot be asked.
  EXPECT_THAT(r.stderr_text,
              HasSubstr("nvidia-cuda-nvcc on PyPI for manylinux2014_x86_64 has versions: "));
  EXPECT_THAT(r.stderr_text, HasSubstr(" 13.0.88"));
  EXPECT_FALSE(fs::exists(dir / "tk"));
}

// A pinned release the index does not have: pip's own words, naming the package.
TEST(ToolkitInstallTest, APinnedReleasePipCannotFindSaysSoInPipsWords) {
  TempDir dir("toolkit-noindex");
  fs::create_directories(dir / "empty-index");
  CommandResult r = RunFarmctl(
      {"toolkit", "install", kPyPIRelease, "--prefix", dir / "tk"},
      {"PIP_INDEX_URL=file://" + (dir / "empty-index"), "PIP_FIND_LINKS=", "PIP_NO_CACHE_DIR=1"});
  EXPECT_EQ(r.exit_code, 2) << r.stderr_text;
  EXPECT_THAT(r.stderr_text,
              HasSubstr(absl::StrCat("pip could not download nvidia-cuda-nvcc==", kPyPIRelease,
                                     " for manylinux2014_x86_64: Could not find a version that "
                                     "satisfies the requirement nvidia-cuda-nvcc==",
                                     kPyPIRelease, " (from versions: none)")));
  for (const char* left : {"tk", "tk.partial", "tk.download"}) {
    EXPECT_FALSE(fs::exists(dir / left)) << left;
  }
}

// A worker whose --cuda-path is broken never registers: it exits at start naming the path.
TEST(WorkerToolkitTest, AToolkitMissingCiccOrThatCannotRunIsRefusedAtStart) {
  TempDir dir("toolkit-worker");
  auto farm = TestFarm::Start(dir.path(), FarmOptions{});
  ASSERT_TRUE(farm.ok()) << farm.status();
  // Files linked from the installed toolkit, less cicc; and one whose nvcc is for a CPU
  // nothing here runs (ELF machine 0x1234: exec fails with ENOEXEC).
  const fs::path no_cicc = dir.path() / "no-cicc";
  const fs::path foreign = dir.path() / "foreign";
  for (const ToolkitFile& f : RequiredToolkitFiles()) {
    for (const fs::path& root : {no_cicc, foreign}) {
      if (root == no_cicc && std::string(f.path) == "nvvm/bin/cicc") continue;
      if (root == foreign && std::string(f.path) == "bin/nvcc") continue;
      fs::create_directories((root / f.path).parent_path());
      fs::create_symlink(fs::path(kInstalledRoot) / f.path, root / f.path);
    }
  }
  fs::copy_file("/bin/true", foreign / "bin/nvcc");
  {
    std::fstream nvcc(foreign / "bin/nvcc", std::ios::in | std::ios::out | std::ios::binary);
    nvcc.seekp(18);
    nvcc.write("\x34\x12", 2);
  }
  struct Case {
    fs::path root;
    std::string says;
  };
  for (const Case& c :
       {Case{no_cicc, absl::StrCat("missing ", (no_cicc / "nvvm/bin/cicc").string())},
        Case{foreign, absl::StrCat((foreign / "bin/nvcc").string(),
                                   " is an ELF machine 4660 executable and this x86_64 host "
                                   "cannot run it")}}) {
    const std::string name = c.root.filename().string();
    SCOPED_TRACE(name);
    auto w =
        (*farm)->StartWorker({.name = name, .args = {"--cuda-path", c.root.string()}, .slots = 0});
    ASSERT_TRUE(w.ok()) << w.status();
    auto exit_code = (*w)->process().Wait(absl::Seconds(30));
    ASSERT_TRUE(exit_code.has_value()) << "the worker kept running";
    EXPECT_EQ(*exit_code, 2);
    const std::string log = ReadFile((*w)->log_path());
    EXPECT_THAT(log, HasSubstr("--cuda-path " + c.root.string() + " refused: "));
    EXPECT_THAT(log, HasSubstr(c.says)) << log;
    EXPECT_THAT(log, HasSubstr("Fix: "));
    EXPECT_EQ((*farm)->WorkerState(name), "");
  }
}

}  // namespace
}  // namespace farm::testing
