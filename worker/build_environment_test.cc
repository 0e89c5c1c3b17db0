#include "worker/build_environment.h"

#include <grpcpp/grpcpp.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "farm/v1/cas.grpc.pb.h"
#include "libfarm/process/subprocess.h"
#include "libfarm/recipes/python_environment.h"
#include "tests/support/fake_wheel.h"
#include "worker/python_interpreters.h"
#include "worker/wheel_prerequisites.h"

namespace farm::worker {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A store that already has every blob: the runner's log uploads succeed without bytes.
class HasEverythingCas final : public farm::v1::CasService::Service {
  grpc::Status FindMissing(grpc::ServerContext*, const farm::v1::FindMissingRequest*,
                           farm::v1::FindMissingResponse*) override {
    return grpc::Status::OK;
  }
};

void WriteExecutable(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path) << text;
  fs::permissions(path, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
}

TEST(BuildEnvironmentTest, StepScriptKeepsHostileRequirementsAsPipArgumentsAfterDashDash) {
  const fs::path dir = fs::temp_directory_path() / "build-env-script-test";
  fs::remove_all(dir);
  // A virtualenv whose python prints each argument it gets.
  WriteExecutable(dir / "env" / "bin" / "python",
                  "#!/bin/sh\nfor a in \"$@\"; do printf '[%s]\\n' \"$a\"; done\nexit 3\n");
  const std::vector<std::string> reqs = {"numpy<2; touch " + (dir / "pwned").string(), "$(id)",
                                         "--index-url=http://evil.invalid/"};
  const std::string script =
      BuildEnvironments::StepScript("/bin/true", (dir / "env").string(), reqs);
  auto r = RunCommand({"/bin/sh", "-c", script}, absl::Seconds(10));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 3);
  const std::string env = (dir / "env").string();
  EXPECT_EQ(r->stdout_text,
            "+ '/bin/true' '-m' 'venv' '" + env + "'\n" + "+ '" + env +
                "/bin/python' '-m' 'pip' 'install' '--no-input' '--progress-bar' "
                "'off' '--' 'numpy<2; touch " +
                (dir / "pwned").string() +
                "' '$(id)' '--index-url=http://evil.invalid/'\n"
                "[-m]\n[pip]\n[install]\n[--no-input]\n[--progress-bar]\n[off]\n[--]\n"
                "[numpy<2; touch " +
                (dir / "pwned").string() +
                "]\n[$(id)]\n"
                "[--index-url=http://evil.invalid/]\n");
  EXPECT_FALSE(fs::exists(dir / "pwned"));
  // A failed venv step stops the script; no requirements: no pip step.
  auto failed = RunCommand(
      {"/bin/sh", "-c", BuildEnvironments::StepScript("/bin/false", env, reqs)}, absl::Seconds(10));
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->exit_code, 1);
  EXPECT_EQ(failed->stdout_text, "+ '/bin/false' '-m' 'venv' '" + env + "'\n");
  EXPECT_EQ(BuildEnvironments::StepScript("/bin/true", env, {}).find("pip"), std::string::npos);
  fs::remove_all(dir);
}

// A farm wheel is installed first, alone, from the farm's index only (the host's pip
// sources dropped by --isolated), then named again with the requirements so pip adds its
// dependencies.
TEST(BuildEnvironmentTest, StepScriptInstallsFarmWheelsFromTheFarmsIndexOnlyFirst) {
  const fs::path dir = fs::temp_directory_path() / "build-env-farm-script-test";
  fs::remove_all(dir);
  WriteExecutable(dir / "env" / "bin" / "python",
                  "#!/bin/sh\necho \"PIP_FIND_LINKS=$PIP_FIND_LINKS\"\nprintf '%s|' \"$@\"\n"
                  "echo\n");
  const std::string env = (dir / "env").string();
  const std::string script =
      BuildEnvironments::StepScript("/bin/true", env, {"wheel"},
                                    {{.requirement = "torch==2.9.1+cu130.sm75",
                                      .index_url = "http://10.0.0.5:7421/sm75/simple/"}});
  auto r = RunCommand({"/bin/sh", "-c", script}, absl::Seconds(10));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 0) << r->stdout_text;
  const size_t farm = r->stdout_text.find(
      "-m|pip|--isolated|install|--no-input|--progress-bar|off|--disable-pip-version-check|"
      "--no-cache-dir|--no-deps|--only-binary|:all:|--index-url|http://10.0.0.5:7421/sm75/"
      "simple/|--trusted-host|10.0.0.5:7421|--|torch==2.9.1+cu130.sm75|");
  const size_t rest = r->stdout_text.find(
      "-m|pip|install|--no-input|--progress-bar|off|--|wheel|torch==2.9.1+cu130.sm75|");
  ASSERT_NE(farm, std::string::npos) << r->stdout_text;
  ASSERT_NE(rest, std::string::npos) << r->stdout_text;
  EXPECT_LT(farm, rest);
  fs::remove_all(dir);
}

// A farm requirement's fallback (the farm had none): a wheel of its pin, without
// dependencies, from the recipe's index only (--isolated), or from the host's own index when
// the recipe names none; then named with the requirements, as a farm wheel is.
TEST(BuildEnvironmentTest, StepScriptInstallsAFallbackFromItsPackageIndex) {
  const fs::path dir = fs::temp_directory_path() / "build-env-fallback-script-test";
  fs::remove_all(dir);
  WriteExecutable(dir / "env" / "bin" / "python", "#!/bin/sh\nprintf '%s|' \"$@\"\necho\n");
  const std::string env = (dir / "env").string();
  const std::string script = BuildEnvironments::StepScript(
      "/bin/true", env, {"wheel"},
      {{.requirement = "torch==2.11.0",
        .index_url = "https://download.pytorch.org/whl/cu130",
        .from_package_index = true},
       {.requirement = "--index-url=http://evil/", .from_package_index = true}});
  auto r = RunCommand({"/bin/sh", "-c", script}, absl::Seconds(10));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->exit_code, 0) << r->stdout_text;
  const size_t named = r->stdout_text.find(
      "-m|pip|--isolated|install|--no-input|--progress-bar|off|--disable-pip-version-check|"
      "--no-deps|--only-binary|:all:|--index-url|https://download.pytorch.org/whl/cu130|--|"
      "torch==2.11.0|");
  // No index named: the host's configuration, so no --isolated; the pin stays an argument.
  const size_t host = r->stdout_text.find(
      "-m|pip|install|--no-input|--progress-bar|off|--disable-pip-version-check|--no-deps|"
      "--only-binary|:all:|--|--index-url=http://evil/|");
  const size_t rest = r->stdout_text.find(
      "-m|pip|install|--no-input|--progress-bar|off|--|wheel|torch==2.11.0|--index-url=http://"
      "evil/|");
  ASSERT_NE(named, std::string::npos) << r->stdout_text;
  ASSERT_NE(host, std::string::npos) << r->stdout_text;
  ASSERT_NE(rest, std::string::npos) << r->stdout_text;
  EXPECT_LT(named, rest);
  EXPECT_LT(host, rest);
  fs::remove_all(dir);
}

TEST(BuildEnvironmentTest, AWildcardIndexHostBecomesTheCoordinatorsHost) {
  EXPECT_EQ(BuildEnvironments::FarmIndexBase("http://0.0.0.0:7421", "farm.example:7420"),
            "http://farm.example:7421");
  EXPECT_EQ(BuildEnvironments::FarmIndexBase("https://[::]:7421", "10.0.0.5:7420"),
            "https://10.0.0.5:7421");
  EXPECT_EQ(BuildEnvironments::FarmIndexBase("http://127.0.0.1:7421", "10.0.0.5:7420"),
            "http://127.0.0.1:7421");
}

TEST(BuildEnvironmentTest, ActivatePutsTheEnvironmentFirstAndDropsOtherVirtualenvs) {
  const fs::path dir = fs::temp_directory_path() / "build-env-activate-test";
  fs::remove_all(dir);
  fs::create_directories(dir / "toolsvenv" / "bin");
  std::ofstream(dir / "toolsvenv" / "pyvenv.cfg") << "home = /usr/bin\n";
  std::map<std::string, std::string> env = {
      {"PATH", (dir / "toolsvenv" / "bin").string() + ":/usr/local/bin:/usr/bin"},
      {"PYTHONPATH", "/somewhere"},
      {"PYTHONHOME", "/elsewhere"},
      {"VIRTUAL_ENV", (dir / "toolsvenv").string()},
      {"PIP_CACHE_DIR", "/var/cache/pip-of-the-host"}};
  BuildEnvironments::Activate("/e/abc", "/b/demo-1.0/root/.pip-cache", env);
  EXPECT_EQ(env["PATH"], "/e/abc/bin:/usr/local/bin:/usr/bin");
  EXPECT_EQ(env["VIRTUAL_ENV"], "/e/abc");
  // The build's own pip cache, never one another build could have written.
  EXPECT_EQ(env["PIP_CACHE_DIR"], "/b/demo-1.0/root/.pip-cache");
  EXPECT_EQ(env.count("PYTHONPATH"), 0u);
  EXPECT_EQ(env.count("PYTHONHOME"), 0u);
  fs::remove_all(dir);
}

class PrepareTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           absl::StrCat("build-env-prepare-test-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name(), "-",
                        getpid());  // ctest runs each test in its own process, in parallel
    fs::remove_all(dir_);
    server_ = grpc::ServerBuilder().RegisterService(&cas_service_).BuildAndStart();
    grpc::ChannelArguments args;
    cas_ = std::make_unique<CasClient>(
        farm::v1::CasService::NewStub(server_->InProcessChannel(args)), "token");
    runner_ = std::make_unique<ActionRunner>((dir_ / "scratch").string(), nullptr, cas_.get());
    // The host's python3.11 (Debian 12's), found the way a worker finds it.
    for (const auto& p : FindPythonInterpreters({"/usr/bin"})) {
      if (p.version() == "3.11") python_ = p;
    }
    ASSERT_EQ(python_.path(), "/usr/bin/python3.11")
        << "Fix: apt-get install python3.11 python3.11-venv";
    lease_.set_lease_id("lease-1");
    lease_.mutable_action()->set_build_id("b-1");
    lease_.mutable_action()->set_timeout_seconds(300);
  }
  void TearDown() override {
    server_->Shutdown();
    fs::remove_all(dir_);
  }

  farm::v1::Completion Prepare(BuildEnvironments& envs, const EnvironmentRequest& request,
                               std::string* env_dir, std::string* notes,
                               PreparedEnvironment* prepared = nullptr) {
    std::atomic<bool> cancel{false};
    PreparedEnvironment out;
    farm::v1::Completion c = envs.Prepare(
        lease_, request, cancel, nullptr, [notes](const std::string& t) { *notes += t; }, &out);
    *env_dir = out.dir;
    if (prepared != nullptr) *prepared = out;
    return c;
  }

  EnvironmentRequest Request(std::vector<std::string> requirements,
                             std::vector<Prerequisite> prerequisites = {}) {
    EnvironmentRequest r{.python = python_, .cuda = {13, 0}, .cuda_home = "/usr/local/cuda"};
    r.recipe.file = "/recipes/demo.toml";
    r.recipe.python = "3.11";
    r.recipe.python_requirements = std::move(requirements);
    r.recipe.prerequisites = std::move(prerequisites);
    r.env["PATH"] = "/usr/local/bin:/usr/bin:/bin";
    r.env["HOME"] = dir_.string();
    // No index: pip answers as it does for a name PyPI lacks, without the network.
    r.env["PIP_NO_INDEX"] = "1";
    return r;
  }

  fs::path dir_;
  HasEverythingCas cas_service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<CasClient> cas_;
  std::unique_ptr<ActionRunner> runner_;
  farm::v1::PythonInterpreter python_;
  farm::v1::Lease lease_;
};

TEST_F(PrepareTest, MakesTheEnvironmentOnceAndReusesIt) {
  BuildEnvironments envs((dir_ / "envs").string(), runner_.get());
  // The cache every build shared before issue 24, where one could plant wheels: removed.
  fs::create_directories(dir_ / "envs" / "pip-cache" / "wheels" / "planted");
  std::string env_dir, notes;
  farm::v1::Completion c = Prepare(envs, Request({}), &env_dir, &notes);
  ASSERT_TRUE(c.infra_error().empty()) << c.infra_error();
  ASSERT_EQ(c.result().exit_code(), 0) << c.result().stdout_tail() << c.result().stderr_tail();
  const std::string key =
      PythonEnvironmentKey(python_.path(), python_.release(), std::vector<std::string>{});
  EXPECT_EQ(env_dir, (dir_ / "envs" / key).string());
  EXPECT_TRUE(fs::is_symlink(env_dir));
  // pip's cache is this environment's own.
  EXPECT_TRUE(fs::is_directory(dir_ / "envs" / "pip-caches" / key));
  EXPECT_FALSE(fs::exists(dir_ / "envs" / "pip-cache"));
  EXPECT_THAT(c.result().stdout_tail(), HasSubstr("+ '/usr/bin/python3.11' '-m' 'venv'"));
  EXPECT_THAT(notes, HasSubstr("making the build environment"));
  // A real virtualenv of that interpreter, its own prefix.
  auto r = RunCommand({env_dir + "/bin/python3.11", "-c",
                       "import sys; print(sys.prefix != sys.base_prefix, sys.base_prefix)"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stdout_text, "True /usr\n");

  std::string again_dir, again_notes;
  c = Prepare(envs, Request({}), &again_dir, &again_notes);
  ASSERT_EQ(c.result().exit_code(), 0);
  EXPECT_EQ(again_dir, env_dir);
  EXPECT_THAT(again_notes, HasSubstr("reused"));
  EXPECT_EQ(c.result().stdout_tail(), "");  // nothing ran
}

TEST_F(PrepareTest, ANonexistentRequirementFailsWithPipsMessageAndLeavesNothingCached) {
  BuildEnvironments envs((dir_ / "envs").string(), runner_.get());
  std::string env_dir, notes;
  const std::vector<std::string> reqs = {"wheelfarm-no-such-package-xyz==1.0"};
  farm::v1::Completion c = Prepare(envs, Request(reqs), &env_dir, &notes);
  EXPECT_TRUE(c.infra_error().empty()) << c.infra_error();
  EXPECT_NE(c.result().exit_code(), 0);
  EXPECT_EQ(env_dir, "");
  const std::string& tail = c.result().stderr_tail();
  EXPECT_THAT(tail, HasSubstr("No matching distribution found for "
                              "wheelfarm-no-such-package-xyz==1.0"));
  EXPECT_THAT(tail, HasSubstr("wheelfarm: the environment step failed: pip could not install "
                              "the recipe's [python] requirements = "
                              "[\"wheelfarm-no-such-package-xyz==1.0\"] (/recipes/demo.toml)"));
  EXPECT_THAT(notes, HasSubstr("the environment step failed"));
  // Only the lock and pip's caches remain: no environment, no half-made directory.
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir_ / "envs")) {
    left.push_back(e.path().filename().string());
  }
  const std::string key = PythonEnvironmentKey(python_.path(), python_.release(), reqs);
  EXPECT_THAT(left, ::testing::UnorderedElementsAre("pip-caches", key + ".lock"));
}

// The NCCL-style prerequisite of the fake wheel.
Prerequisite FakePrerequisite() {
  return Prerequisite{.name = "Fake",
                      .version = ">=1.2",
                      .wheel = "wheelfarm-prereq-fake>=1.2",
                      .linker_names = {"{site_packages}/wheelfarm_prereq_fake/lib/libfake.so.3"},
                      .env = {{"FAKE_INCLUDE_DIR", "{site_packages}/wheelfarm_prereq_fake/include"},
                              {"FAKE_LIB_DIR", "{site_packages}/wheelfarm_prereq_fake/lib"},
                              {"USE_SYSTEM_FAKE", "1"}},
                      .line = 12};
}

class PrerequisitePrepareTest : public PrepareTest {
 protected:
  void SetUp() override {
    PrepareTest::SetUp();
    ASSERT_TRUE(farm::testing::WriteFakeLibraryWheel(dir_ / "wheels").ok());
  }
  EnvironmentRequest WithWheels(EnvironmentRequest r) {
    r.env["PIP_FIND_LINKS"] = (dir_ / "wheels").string();
    return r;
  }
  // What is left in the cache directory besides pip's cache and the locks.
  std::vector<std::string> Environments() {
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(dir_ / "envs")) {
      const std::string name = e.path().filename().string();
      if (name != "pip-caches" && !absl::EndsWith(name, ".lock")) left.push_back(name);
    }
    return left;
  }
};

TEST_F(PrerequisitePrepareTest, AWheelPrerequisiteLandsWithItsLinkerNameAndSitePackages) {
  BuildEnvironments envs((dir_ / "envs").string(), runner_.get());
  const EnvironmentRequest request = WithWheels(Request({}, {FakePrerequisite()}));
  std::string env_dir, notes;
  PreparedEnvironment prepared;
  farm::v1::Completion c = Prepare(envs, request, &env_dir, &notes, &prepared);
  ASSERT_TRUE(c.infra_error().empty()) << c.infra_error();
  ASSERT_EQ(c.result().exit_code(), 0) << c.result().stdout_tail() << c.result().stderr_tail();
  // One pip install for the [python] requirements and the prerequisite wheels, all keyed.
  EXPECT_THAT(c.result().stdout_tail(), HasSubstr("'--' 'wheelfarm-prereq-fake>=1.2'"));
  auto contents = EnvironmentContentsFor(request.recipe, {13, 0});
  ASSERT_TRUE(contents.ok());
  EXPECT_EQ(env_dir,
            (dir_ / "envs" / PythonEnvironmentKey(python_.path(), python_.release(), *contents))
                .string());
  // {site_packages} is the environment's own purelib, reached through its published name.
  EXPECT_EQ(prepared.site_packages, env_dir + "/lib/python3.11/site-packages");
  const fs::path lib = fs::path(prepared.site_packages) / "wheelfarm_prereq_fake" / "lib";
  EXPECT_TRUE(fs::is_regular_file(lib / "libfake.so.3"));
  ASSERT_TRUE(fs::is_symlink(lib / "libfake.so"));
  EXPECT_EQ(fs::read_symlink(lib / "libfake.so"), "libfake.so.3");
  EXPECT_THAT(notes, HasSubstr("wheelfarm: prerequisite Fake >=1.2: wheelfarm-prereq-fake 1.2.3 "
                               "(wheel)\n"));
  // The variables the build gets point at files that are there.
  auto vars = PrerequisiteVariables(
      request.recipe, {.site_packages = prepared.site_packages, .cuda = {13, 0}, .cuda_home = ""});
  ASSERT_TRUE(vars.ok()) << vars.status();
  EXPECT_EQ(vars->at("FAKE_LIB_DIR"), lib.string());
  EXPECT_EQ(vars->at("USE_SYSTEM_FAKE"), "1");
  EXPECT_TRUE(fs::exists(fs::path(vars->at("FAKE_INCLUDE_DIR")) / "fake.h"));

  // Reused, and checked again: a prerequisite removed from the cached environment is named.
  std::string again_dir, again_notes;
  c = Prepare(envs, request, &again_dir, &again_notes);
  ASSERT_EQ(c.result().exit_code(), 0) << c.result().stderr_tail();
  EXPECT_THAT(again_notes, HasSubstr("reused"));
  EXPECT_THAT(again_notes, HasSubstr("prerequisite Fake >=1.2: wheelfarm-prereq-fake 1.2.3"));
  fs::remove_all(lib.parent_path() / "include");
  std::string broken_dir, broken_notes;
  c = Prepare(envs, request, &broken_dir, &broken_notes);
  EXPECT_NE(c.result().exit_code(), 0);
  EXPECT_THAT(c.result().stderr_tail(),
              HasSubstr("prerequisite Fake: FAKE_INCLUDE_DIR names " +
                        (lib.parent_path() / "include").string() + ", which does not exist"));
  EXPECT_THAT(c.result().stderr_tail(), HasSubstr("remove it to make it again"));
}

TEST_F(PrerequisitePrepareTest, AMissingPathOrVersionFailsTheStepNamingThePrerequisite) {
  BuildEnvironments envs((dir_ / "envs").string(), runner_.get());
  Prerequisite wrong_dir = FakePrerequisite();
  wrong_dir.env["FAKE_LIB_DIR"] = "{site_packages}/wheelfarm_prereq_fake/lib64";
  std::string env_dir, notes;
  farm::v1::Completion c = Prepare(envs, WithWheels(Request({}, {wrong_dir})), &env_dir, &notes);
  EXPECT_TRUE(c.infra_error().empty()) << c.infra_error();
  EXPECT_NE(c.result().exit_code(), 0);
  EXPECT_EQ(env_dir, "");
  EXPECT_THAT(c.result().stderr_tail(),
              HasSubstr("wheelfarm: the environment step failed: prerequisite Fake: FAKE_LIB_DIR "
                        "names "));
  EXPECT_THAT(c.result().stderr_tail(),
              HasSubstr("wheelfarm_prereq_fake/lib64, which does not exist ([[prerequisites]] "
                        "\"Fake\" wheel = \"wheelfarm-prereq-fake>=1.2\" "
                        "(/recipes/demo.toml:12)). Fix: point FAKE_LIB_DIR at what the wheel "
                        "installs (pip show -f wheelfarm-prereq-fake lists it)"));
  EXPECT_THAT(notes, HasSubstr("the environment step failed: prerequisite Fake"));
  EXPECT_THAT(Environments(), ::testing::IsEmpty());  // nothing half-made is cached

  Prerequisite too_old = FakePrerequisite();
  too_old.version = ">=2.0";
  c = Prepare(envs, WithWheels(Request({}, {too_old})), &env_dir, &notes);
  EXPECT_NE(c.result().exit_code(), 0);
  EXPECT_THAT(c.result().stderr_tail(),
              HasSubstr("prerequisite Fake: wheelfarm-prereq-fake 1.2.3 was installed, and Fake "
                        ">=2.0 is needed"));
  EXPECT_THAT(Environments(), ::testing::IsEmpty());

  Prerequisite bad_link = FakePrerequisite();
  bad_link.linker_names = {"{site_packages}/wheelfarm_prereq_fake/lib/libother.so.1"};
  c = Prepare(envs, WithWheels(Request({}, {bad_link})), &env_dir, &notes);
  EXPECT_NE(c.result().exit_code(), 0);
  EXPECT_THAT(c.result().stderr_tail(),
              HasSubstr("wheelfarm_prereq_fake/lib/libother.so.1 (linker_names) does not exist "
                        "after installing wheelfarm-prereq-fake>=1.2"));
  EXPECT_THAT(Environments(), ::testing::IsEmpty());
}

TEST_F(PrerequisitePrepareTest, AnUninstallablePrerequisiteWheelFailsWithPipsMessageAndItsLine) {
  BuildEnvironments envs((dir_ / "envs").string(), runner_.get());
  Prerequisite missing{
      .name = "NCCL", .wheel = "wheelfarm-no-such-nccl-cu{cuda_major}>=2.27", .line = 31};
  std::string env_dir, notes;
  farm::v1::Completion c =
      Prepare(envs, WithWheels(Request({"setuptools"}, {missing})), &env_dir, &notes);
  EXPECT_TRUE(c.infra_error().empty()) << c.infra_error();
  EXPECT_NE(c.result().exit_code(), 0);
  const std::string& tail = c.result().stderr_tail();
  EXPECT_THAT(tail, HasSubstr("No matching distribution found for wheelfarm-no-such-nccl-cu13"));
  EXPECT_THAT(tail, HasSubstr("wheelfarm: the environment step failed: pip could not install the "
                              "prerequisite NCCL's wheelfarm-no-such-nccl-cu13>=2.27 (CUDA 13.0), "
                              "from [[prerequisites]] \"NCCL\" wheel = "
                              "\"wheelfarm-no-such-nccl-cu{cuda_major}>=2.27\" "
                              "(/recipes/demo.toml:31). Fix: "));
  EXPECT_THAT(Environments(), ::testing::IsEmpty());
}

// A fallback from the host's package index (here a directory of wheels): installed, noted in
// the build log with the index and the CUDA release of its wheels, and part of the key, so
// the same requirements without it (or from another index) make another environment.
TEST_F(PrerequisitePrepareTest, AFallbackIsInstalledFromThePackageIndexAndKeyed) {
  BuildEnvironments envs((dir_ / "envs").string(), runner_.get());
  EnvironmentRequest request = WithWheels(Request({}));
  farm::v1::FarmWheel fallback;
  fallback.set_requirement("wheelfarm-prereq-fake==1.2.3");
  fallback.set_from_package_index(true);
  fallback.set_cuda_version("13.0");
  fallback.set_origin(
      "the recipe's [python.farm_fallback.wheelfarm-prereq-fake]: the farm has "
      "none");
  request.farm_wheels = {fallback};
  // No farm wheel: no farm index needed.
  std::string env_dir, notes;
  farm::v1::Completion c = Prepare(envs, request, &env_dir, &notes);
  ASSERT_TRUE(c.infra_error().empty()) << c.infra_error();
  ASSERT_EQ(c.result().exit_code(), 0) << c.result().stdout_tail() << c.result().stderr_tail();
  EXPECT_THAT(notes, HasSubstr("wheelfarm: farm requirement wheelfarm-prereq-fake==1.2.3 from the "
                               "build host's package index (PIP_INDEX_URL, else PyPI), wheels "
                               "built for CUDA 13.0 (the recipe's [python.farm_fallback."
                               "wheelfarm-prereq-fake]: the farm has none)\n"));
  EXPECT_THAT(c.result().stdout_tail(),
              HasSubstr("'--only-binary' ':all:' '--' 'wheelfarm-prereq-fake==1.2.3'"));
  auto contents = EnvironmentContentsFor(request.recipe, {13, 0});
  ASSERT_TRUE(contents.ok());
  const std::string without = PythonEnvironmentKey(python_.path(), python_.release(), *contents);
  contents->farm_wheels.push_back(FallbackWheelEntry("wheelfarm-prereq-fake==1.2.3", ""));
  EXPECT_EQ(env_dir,
            (dir_ / "envs" / PythonEnvironmentKey(python_.path(), python_.release(), *contents))
                .string());
  EXPECT_NE(env_dir, (dir_ / "envs" / without).string());
  auto r =
      RunCommand({env_dir + "/bin/python", "-c",
                  "import importlib.metadata as m; print(m.version('wheelfarm-prereq-fake'))"});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->stdout_text, "1.2.3\n");
  EXPECT_NE(FallbackWheelEntry("x==1", ""), FallbackWheelEntry("x==1", "https://i/simple"));
}

}  // namespace
}  // namespace farm::worker
