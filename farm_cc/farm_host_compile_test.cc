#include "farm_cc/farm_host_compile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "farm_cc/locale_files.h"
#include "libfarm/launcher/fallback_reason.h"

namespace farm {
namespace {

using ::testing::HasSubstr;

// The worker's compile sees what GCC reads from the environment, and nothing that would make
// it read or write files the farm does not carry.
TEST(CompileEnvironmentTest, PassesWhatTheCompilerReadsAndRefusesSideChannels) {
  auto env = CompileEnvironment({{"PATH", "/usr/bin:/bin"},
                                 {"LANG", "C.UTF-8"},
                                 {"CPATH", "/opt/inc"},
                                 {"HOME", "/root"},
                                 {"FARM_TOKEN_FILE", "/secret"},
                                 {"PWD", "/build"}},
                                "/build");
  ASSERT_TRUE(env.ok()) << env.status();
  EXPECT_EQ(env->at("PATH"), "/usr/bin:/bin");
  EXPECT_EQ(env->at("LANG"), "C.UTF-8");
  EXPECT_EQ(env->at("CPATH"), "/opt/inc");
  EXPECT_EQ(env->at("PWD"), "/build");
  EXPECT_EQ(env->count("HOME"), 0u);
  EXPECT_EQ(env->count("FARM_TOKEN_FILE"), 0u);
  for (const char* name : {"DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES", "LD_PRELOAD"}) {
    auto refused = CompileEnvironment({{name, "x"}}, "/build");
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << name;
    EXPECT_THAT(refused.status().message(), HasSubstr(name));
  }
  // A PWD elsewhere is not GCC's name for the directory: dropped.
  auto other = CompileEnvironment({{"PWD", "/elsewhere"}}, "/build");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->count("PWD"), 0u);
}

// farm-cc knows "no worker for this toolchain" from ActionStatus.unplaceable, whatever the
// scheduler's words, and counts it as no_worker; a failed action that merely reads like it
// is the farm's trouble, not a missing worker.
TEST(NoWorkerForToolchainTest, IsToldByTheStatusNotByItsWording) {
  farm::v1::ActionStatus unplaceable;
  unplaceable.set_state(farm::v1::ACTION_STATE_FAILED);
  unplaceable.set_unplaceable(true);
  unplaceable.set_error("refused at submit");  // no wording farm-cc could match
  unplaceable.add_placement_refusals("x1 needs cpu_arch aarch64, has x86_64");
  unplaceable.add_placement_refusals("arm1 runs with --no-sandbox");
  const absl::Status none = NoWorkerForToolchain(unplaceable, "aarch64");
  EXPECT_EQ(none.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(FallbackReasonOf(none, farm::v1::FALLBACK_REASON_FARM_ERROR),
            farm::v1::FALLBACK_REASON_NO_WORKER);
  EXPECT_THAT(none.message(),
              HasSubstr("no online aarch64 worker with a sandbox to run this aarch64 toolchain: "
                        "x1 needs cpu_arch aarch64, has x86_64; arm1 runs with --no-sandbox. "
                        "Fix: "));

  farm::v1::ActionStatus alone = unplaceable;
  alone.clear_placement_refusals();
  EXPECT_THAT(NoWorkerForToolchain(alone, "x86_64").message(), HasSubstr(": no worker is online"));

  farm::v1::ActionStatus lost;
  lost.set_state(farm::v1::ACTION_STATE_FAILED);
  lost.set_error("no online worker can run this action: lost worker w1");
  EXPECT_TRUE(NoWorkerForToolchain(lost, "x86_64").ok());
}

TEST(LocaleFilesTest, NoneForTheCLocale) {
  EXPECT_TRUE(LocaleFiles({}).empty());
  EXPECT_TRUE(LocaleFiles({{"LANG", "C"}, {"LC_ALL", "POSIX"}}).empty());
}

// Debian's C.UTF-8 lives in /usr/lib/locale/C.utf8: a compile under it ships those files, so
// the worker's GCC quotes as this host's does.
TEST(LocaleFilesTest, AUtf8LocaleShipsItsFiles) {
  ASSERT_TRUE(std::filesystem::is_directory("/usr/lib/locale/C.utf8"))
      << "this test needs Debian's C.utf8 locale (package libc-bin)";
  const auto files = LocaleFiles({{"LANG", "C.UTF-8"}});
  EXPECT_THAT(files, ::testing::Contains(HasSubstr("/usr/lib/locale/C.utf8/LC_CTYPE")));
}

}  // namespace
}  // namespace farm
