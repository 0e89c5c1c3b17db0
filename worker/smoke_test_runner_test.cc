#include "worker/smoke_test_runner.h"

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm::worker {
namespace {

using ::testing::HasSubstr;

farm::v1::SmokeTestTask Task() {
  farm::v1::SmokeTestTask task;
  task.set_python("3.11");
  task.set_wheel("wheel/demo-0.1-py3-none-any.whl");
  task.set_sm("sm_121");
  task.set_arch("sm_120");
  task.set_index_url("http://127.0.0.1:7421/simple/");
  task.mutable_smoke()->add_requirements("numpy>=2");
  task.mutable_smoke()->mutable_command()->set_shell("python -c 'print(1)' {sm}");
  return task;
}

TEST(SmokeTestRunnerTest, TheScriptMakesAFreshEnvironmentInstallsTheWheelAndRunsTheCommand) {
  const std::string script = SmokeTestRunner::Script(Task(), "/usr/bin/python3.11");
  const size_t venv = script.find("\n'/usr/bin/python3.11' '-m' 'venv' '.smoke-env'\n");
  const size_t pip = script.find(
      "\n'.smoke-env/bin/python' '-m' 'pip' 'install' '--no-input' '--progress-bar' 'off' "
      "'--extra-index-url' 'http://127.0.0.1:7421/simple/' '--' "
      "'./wheel/demo-0.1-py3-none-any.whl' 'numpy>=2'\n");
  const size_t path = script.find("PATH=\"$FARM_SMOKE_ENV/bin:$PATH\"");
  // The shell string, {sm} filled in, run by /bin/sh -c.
  const size_t command = script.find("\n'/bin/sh' '-c' 'python -c '");
  EXPECT_THAT(script, HasSubstr("print(1)'\\'' sm_121'\n"));
  ASSERT_NE(venv, std::string::npos) << script;
  ASSERT_NE(pip, std::string::npos) << script;
  ASSERT_NE(path, std::string::npos) << script;
  ASSERT_NE(command, std::string::npos) << script;
  EXPECT_LT(venv, pip);
  EXPECT_LT(pip, path);
  EXPECT_LT(path, command);
  EXPECT_THAT(script, HasSubstr("set -e\nexec 2>&1\n"));
}

TEST(SmokeTestRunnerTest, AnArgvCommandGetsTheSmToo) {
  farm::v1::SmokeTestTask task = Task();
  task.set_index_url("");
  task.mutable_smoke()->mutable_command()->clear_shell();
  for (const char* a : {"python", "-m", "mypkg.selftest", "--sm={sm}"}) {
    task.mutable_smoke()->mutable_command()->add_argv(a);
  }
  const std::string script = SmokeTestRunner::Script(task, "/usr/bin/python3.11");
  EXPECT_THAT(script, HasSubstr("\n'python' '-m' 'mypkg.selftest' '--sm=sm_121'\n"));
  EXPECT_THAT(script, ::testing::Not(HasSubstr("--extra-index-url")));
}

TEST(SmokeTestRunnerTest, FindsTheNvidiaDeviceNodes) {
  const auto dir = std::filesystem::temp_directory_path() / "smoke-runner-dev-test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  for (const char* name : {"nvidia0", "nvidiactl", "nvidia-uvm", "null", "sda"}) {
    std::ofstream(dir / name).put('x');
  }
  EXPECT_THAT(SmokeTestRunner::NvidiaDevices(dir.string()),
              ::testing::ElementsAre((dir / "nvidia-uvm").string(), (dir / "nvidia0").string(),
                                     (dir / "nvidiactl").string()));
  std::filesystem::remove_all(dir);
  // This host has no GPU: nothing to show a smoke test.
  EXPECT_THAT(SmokeTestRunner::NvidiaDevices(), ::testing::IsEmpty());
}

}  // namespace
}  // namespace farm::worker
