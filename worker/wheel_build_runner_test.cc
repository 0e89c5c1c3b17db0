#include "worker/wheel_build_runner.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "libfarm/process/subprocess.h"

namespace farm::worker {
namespace {

namespace fs = std::filesystem;

TEST(WheelBuildRunnerTest, ScriptEchoesEachStepKeepsWordsIntactAndStopsAtTheFirstFailureNamingIt) {
  farm::v1::WheelBuildTask task;
  task.mutable_source()->set_kind("upload");
  const std::string script =
      WheelBuildRunner::Script(task, {{"printf", "%s|%s\\n", "a b", "it's $HOME"},
                                      {"sh", "-c", "echo to-stderr >&2; exit 7"},
                                      {"echo", "never"}});
  const fs::path dir = fs::temp_directory_path() / "wheel-build-script-test";
  fs::remove_all(dir);
  fs::create_directories(dir / "src");
  auto r = RunCommand({"env", "-C", dir.string(), "/bin/sh", "-c", script}, absl::Seconds(10));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 7);
  // One stream, in order: each step's echo, then what it printed (stderr included), and the
  // step that failed, by number and words.
  EXPECT_EQ(
      r->stdout_text,
      "+ 'printf' '%s|%s\\n' 'a b' 'it'\\''s $HOME'\n"
      "a b|it's $HOME\n"
      "+ 'sh' '-c' 'echo to-stderr >&2; exit 7'\n"
      "to-stderr\n"
      "wheelfarm: build step 2 of 3 failed (exit 7): 'sh' '-c' 'echo to-stderr >&2; exit 7'\n");
  EXPECT_EQ(r->stderr_text, "");
  fs::remove_all(dir);
}

TEST(WheelBuildRunnerTest, APypiSourceIsUnpackedFromItsFetchedInputBeforeTheSteps) {
  farm::v1::WheelBuildTask task;
  task.mutable_source()->set_kind("pypi");
  const std::string script = WheelBuildRunner::Script(task, {{"true"}});
  EXPECT_NE(script.find("'python' '.wheelfarm/source_archive.py' 'unpack' "
                        "'.wheelfarm/source-archive' 'src'\ncd src\n"),
            std::string::npos)
      << script;
}

TEST(WheelBuildRunnerTest, AnArchiveSourceFetchedOrUploadedIsUnpackedTheSameWay) {
  farm::v1::WheelBuildTask task;
  task.mutable_source()->set_kind("archive");
  task.mutable_source()->set_archive_url("https://example.com/x-{version}.tar.gz");
  for (bool uploaded : {false, true}) {
    if (uploaded) task.mutable_source()->clear_archive_url();
    const std::string script = WheelBuildRunner::Script(task, {{"true"}});
    EXPECT_NE(script.find("'python' '.wheelfarm/source_archive.py' 'unpack' "
                          "'.wheelfarm/source-archive' 'src'\ncd src\n"),
              std::string::npos)
        << script;
    EXPECT_EQ(script.find("git"), std::string::npos) << script;
  }
}

TEST(WheelBuildRunnerTest, GitSourcesAreClonedAtTheVersionsTag) {
  farm::v1::WheelBuildTask task;
  task.set_version("2.9.1");
  auto* source = task.mutable_source();
  source->set_kind("git");
  source->set_git_url("https://github.com/pytorch/pytorch");
  source->set_tag_pattern("v{version}");
  source->set_submodules(true);
  const std::string script = WheelBuildRunner::Script(task, {});
  EXPECT_NE(script.find("\n'git' 'clone' '--depth' '1' '--branch' 'v2.9.1' "
                        "'--recurse-submodules' '--shallow-submodules' "
                        "'https://github.com/pytorch/pytorch' 'src'\ncd src\n"),
            std::string::npos)
      << script;
}

TEST(WheelBuildRunnerTest, BuildsReachFarmNvccThroughCMakeAndCppExtension) {
  WheelBuildOptions options;
  options.farm_nvcc = "/opt/wheel farm/farm-nvcc";
  options.coordinator = "127.0.0.1:7420";
  options.token_file = "/etc/wheelfarm/token";
  auto env = WheelBuildRunner::FarmNvccEnvironment(options, "/usr/local/cuda-13.0", "b1", false);
  EXPECT_EQ(env["CMAKE_CUDA_COMPILER_LAUNCHER"], "/opt/wheel farm/farm-nvcc");
  // cpp_extension writes it into build.ninja, which /bin/sh runs: quoted words.
  EXPECT_EQ(env["PYTORCH_NVCC"], "'/opt/wheel farm/farm-nvcc' '/usr/local/cuda-13.0/bin/nvcc'");
  EXPECT_EQ(env["FARM_BUILD_ID"], "b1");
  EXPECT_EQ(env["FARM_COORDINATOR"], "127.0.0.1:7420");
  EXPECT_EQ(env["FARM_TOKEN_FILE"], "/etc/wheelfarm/token");
  EXPECT_EQ(env.count("FARM_NVCC_STRICT"), 0u);
  EXPECT_EQ(env.count("CMAKE_CXX_COMPILER_LAUNCHER"), 0u);
  options.farm_cc = "/opt/wheel farm/farm-cc";
  env = WheelBuildRunner::FarmNvccEnvironment(options, "/usr/local/cuda-13.0", "b1", false);
  EXPECT_EQ(env["CMAKE_C_COMPILER_LAUNCHER"], "/opt/wheel farm/farm-cc");
  EXPECT_EQ(env["CMAKE_CXX_COMPILER_LAUNCHER"], "/opt/wheel farm/farm-cc");
  EXPECT_EQ(env.count("FARM_CC_STRICT"), 0u);
  EXPECT_EQ(
      WheelBuildRunner::FarmNvccEnvironment(options, "/c", "b1", false, true)["FARM_CC_STRICT"],
      "1");
  EXPECT_EQ(WheelBuildRunner::FarmNvccEnvironment(options, "/c", "b1", true)["FARM_NVCC_STRICT"],
            "1");
}

}  // namespace
}  // namespace farm::worker
