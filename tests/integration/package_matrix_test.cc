// The shipped recipes (recipes/*.toml) against a real 2-worker farm: `farmctl submit
// --dry-run` of each package for the seed targets plans what the package can build, or is
// refused at plan time for the reason docs/packages.md gives. Nothing is built.
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/support/suite_fixture.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

class PackageMatrixTest : public SuiteFixture<PackageMatrixTest> {
 protected:
  static void SetUpSuite() {
    dir_ = std::make_unique<TempDir>("package-matrix-test");
    auto farm = TestFarm::Start(dir_->path(),
                                {.coordinator_args = {"--recipes-dir", FARM_SOURCE_DIR "/recipes"},
                                 .workers = NumberedWorkers(2, {.slots = 2})});
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
  }

  static void TearDownSuite() {
    farm_.reset();
    dir_.reset();
  }

  // A dry run as docs/packages.md runs it: these workers are x86_64 Debian 12 hosts with
  // python3.11 and glibc 2.36, while the recipes ask for python3.10 and glibc <= 2.35.
  static CommandResult DryRun(const std::string& ref, const std::string& archs) {
    return farm_->Farmctl(
        {"submit", ref, "--archs", archs, "--dry-run", "--python", "3.11", "--glibc-max", "2.36"});
  }

  static inline std::unique_ptr<TempDir> dir_;
  static inline std::unique_ptr<TestFarm> farm_;
};

struct Planned {
  std::string ref, archs;
  std::vector<std::string> expected;  // lines of the plan
};

TEST_F(PackageMatrixTest, EachPackagePlansWhatItCanBuildForTheSeedTargets) {
  const std::vector<Planned> cases = {
      {"bitsandbytes-0.50.1", "7.5;9.0;11.0;12.1", {"archs      7.5;9.0;11.0;12.1\n"}},
      {"bitsandbytes-0.50.1", "12.1", {"archs      12.1\n", "sm_121"}},
  };
  for (const Planned& c : cases) {
    CommandResult r = DryRun(c.ref, c.archs);
    ASSERT_EQ(r.exit_code, 0) << c.ref << " " << c.archs << "\n" << Output(r);
    EXPECT_NE(r.stdout_text.find("dry run: nothing was queued"), std::string::npos);
    for (const std::string& line : c.expected) {
      EXPECT_NE(r.stdout_text.find(line), std::string::npos)
          << c.ref << " " << c.archs << ": expected '" << line << "' in\n"
          << r.stdout_text;
    }
  }
}

// The packages built against torch take the farm's own torch 2.9.1 for the same arch set
// (farm_requirements), and this farm has built none: each is refused at plan time, after its
// arch rules passed (the arch set named is the one asked for: flash-attn asked for 12.1 needs
// the torch of 12.1 though it compiles sm_120), naming the fix. PyTorch itself needs aarch64
// build hosts, so a stack with it is refused too, for that.
TEST_F(PackageMatrixTest, TorchPackagesNeedTheFarmsTorchForTheirArchSet) {
  const std::vector<Planned> cases = {
      {"flash-attn-2.8.3", "12.1", {"arch set sm121"}},
      {"flash-attn-2.8.3", "9.0", {"arch set sm90"}},
      {"flash-attn-2.8.3", "8.6;9.0;12.1", {"arch set sm86-sm90-sm121"}},
      {"torchvision-0.24.1", "12.1", {"arch set sm121"}},
      {"torchvision-0.24.1", "7.5;9.0;12.1", {"arch set sm75-sm90-sm121"}},
      {"torchaudio-2.9.1", "7.5;9.0;12.1", {"arch set sm75-sm90-sm121"}},
      {"torchvision-0.24.1", "7.5;9.0;11.0;12.1", {"arch set sm75-sm90-sm110-sm121"}},
      {"deepspeed-0.19.5", "7.5", {"arch set sm75"}},
      {"deepspeed-0.19.5", "9.0;11.0;12.1", {"arch set sm90-sm110-sm121"}},
      {"xformers-0.0.33.post2", "7.5;9.0;12.1", {"arch set sm75-sm90-sm121"}},
      {"torchaudio-2.9.1", "7.5;9.0;11.0;12.1", {"arch set sm75-sm90-sm110-sm121"}},
  };
  for (const Planned& c : cases) {
    CommandResult r = DryRun(c.ref, c.archs);
    EXPECT_NE(r.exit_code, 0) << c.ref << " " << c.archs << "\n" << Output(r);
    std::vector<std::string> expected = c.expected;
    expected.push_back("the farm has no torch==2.9.1 wheel for this build (x86_64, CUDA 13.0, ");
    expected.push_back("the farm has built none of that version");
    expected.push_back(absl::StrCat("Fix: farmctl submit pytorch-2.9.1 --archs \"", c.archs,
                                    "\" first, or submit them as a stack: farmctl submit "
                                    "pytorch-2.9.1 ",
                                    c.ref, " --archs \"", c.archs, "\""));
    // No fallback in these recipes (PyPI's torch 2.9.1 is CUDA 12.8): how to declare one.
    expected.push_back("add [python.farm_fallback.torch] to ");
    expected.push_back("which must be a CUDA 13 release like this build's toolkit (13.0)");
    for (const std::string& text : expected) {
      EXPECT_NE(r.stderr_text.find(text), std::string::npos)
          << c.ref << " " << c.archs << ": expected '" << text << "' in\n"
          << Output(r);
    }
  }
  CommandResult stack =
      farm_->Farmctl({"submit", "torchvision-0.24.1", "pytorch-2.9.1", "--archs", "7.5",
                      "--dry-run", "--python", "3.11", "--glibc-max", "2.36"});
  EXPECT_NE(stack.exit_code, 0) << Output(stack);
  EXPECT_NE(stack.stderr_text.find("pytorch-2.9.1: no online worker can host the build"),
            std::string::npos)
      << Output(stack);
}

TEST_F(PackageMatrixTest, AnArchAPackageCannotServeIsRefusedAtPlanTimeWithTheReason) {
  const std::vector<Planned> cases = {
      // flash-attn: nothing below sm_80, naming its minimum and what it builds.
      {"flash-attn-2.8.3",
       "7.5",
       {"recipe 'flash-attn' (flash_attn) cannot serve 7.5: it needs sm_80 or newer",
        "FlashAttention only supports Ampere GPUs or newer",
        "it builds sm_80, sm_90, sm_100, sm_120, SASS only (no PTX)", "Fix: drop 7.5"}},
      // Thor: no sm_11x cubin among its four, and no PTX to JIT.
      {"flash-attn-2.8.3", "11.0", {"cannot serve 11.0: none of its archs runs on sm_110"}},
      {"flash-attn-2.8.3", "9.0+PTX", {"flash_attn emits no PTX"}},
      // DeepSpeed: one 7.5 entry turns BF16 off for every arch of the build.
      {"deepspeed-0.19.5",
       "7.5;9.0",
       {"recipe 'deepspeed' (deepspeed) cannot build 7.5 together with 9.0", "turns BF16 off",
        "Fix: submit them apart, --archs \"7.5\" and --archs \"9.0\""}},
  };
  for (const Planned& c : cases) {
    CommandResult r = DryRun(c.ref, c.archs);
    EXPECT_NE(r.exit_code, 0) << c.ref << " " << c.archs << "\n" << Output(r);
    for (const std::string& text : c.expected) {
      EXPECT_NE(r.stderr_text.find(text), std::string::npos)
          << c.ref << " " << c.archs << ": expected '" << text << "' in\n"
          << Output(r);
    }
  }
}

}  // namespace
}  // namespace farm::testing
