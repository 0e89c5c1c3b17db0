// A build's wheel is hostile input (issue 24): the build's own code names it and writes its
// metadata. On loopback, a coordinator and a worker build the demo CUDA extension, whose
// recipe then rewrites the real, verifiable wheel the way an attacker would: as another
// project, or with a file name that is shell text. The build must fail naming what it saw,
// publish nothing, and run nothing.
#include <cstdlib>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "libfarm/net/address.h"
#include "tests/support/demo_recipe.h"
#include "tests/support/suite_fixture.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kBuildCommand =
    "command = [\"python{python}\", \"-m\", \"pip\", \"wheel\", \"--no-deps\", "
    "\"--no-build-isolation\",\n           \"--wheel-dir\", \"dist\", \".\"]";
const std::string kBuiltinPublish = "[[publish]]\nkind = \"builtin\"\n";

// Rewrites the one wheel in argv[1] as project argv[3] at version argv[4] into argv[2]: file
// name, .dist-info folder, METADATA and RECORD, so nothing but the identity changes.
constexpr char kRenameWheel[] = R"(import base64, hashlib, os, sys, zipfile
src_dir, out_dir, name, version = sys.argv[1:5]
[src] = [f for f in os.listdir(src_dir) if f.endswith(".whl")]
parts = src[:-4].split("-")
old_info, new_info = f"{parts[0]}-{parts[1]}.dist-info", f"{name}-{version}.dist-info"
os.makedirs(out_dir, exist_ok=True)
out = os.path.join(out_dir, "-".join([name, version] + parts[2:]) + ".whl")
record = []
with zipfile.ZipFile(os.path.join(src_dir, src)) as zin, zipfile.ZipFile(out, "w") as zout:
    for info in zin.infolist():
        data, member = zin.read(info), info.filename
        if member.startswith(old_info + "/"):
            leaf = member[len(old_info) + 1:]
            if leaf == "RECORD":
                continue
            member = f"{new_info}/{leaf}"
            if leaf == "METADATA":
                lines = data.decode().split("\n")
                for i, line in enumerate(lines):
                    if line.startswith("Name:"):
                        lines[i] = f"Name: {name}"
                    elif line.startswith("Version:"):
                        lines[i] = f"Version: {version}"
                data = "\n".join(lines).encode()
        new = zipfile.ZipInfo(member, info.date_time)
        new.external_attr, new.compress_type = info.external_attr, zipfile.ZIP_DEFLATED
        zout.writestr(new, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{member},sha256={digest},{len(data)}")
    record.append(f"{new_info}/RECORD,,")
    zout.writestr(f"{new_info}/RECORD", "\n".join(record) + "\n")
)";

// The file name the attacker's build gives its wheel, and what it runs if a shell sees it.
const std::string kInjectedVersion = "0.1.0$(id>PWNED)";

class BuiltWheelTest : public SuiteFixture<BuiltWheelTest> {
 protected:
  static void SetUpSuite() {
    // As in submit_test: the workers make the recipe's environment themselves.
    LeaveVirtualenvs();
    dir_ = std::make_unique<TempDir>("built-wheel-test");
    // The demo's source with the rename script beside it: the build's own code.
    const fs::path src = *dir_ / "src";
    fs::copy(FARM_SOURCE_DIR "/examples/demo-cuda-ext", src, fs::copy_options::recursive);
    for (const char* leftover : {"build", "dist", "demo_cuda_ext.egg-info"}) {
      fs::remove_all(src / leftover);
    }
    WriteText(src / "rename_wheel.py", kRenameWheel);
    fs::create_directories(*dir_ / "hook");

    const std::string recipes = *dir_ / "recipes";
    auto attack = [&](const std::string& name, const std::string& project,
                      const std::string& version, const std::string& publish) {
      WriteText(
          absl::StrCat(recipes, "/", name, ".toml"),
          DemoRecipe(name,
                     {{FARM_SOURCE_DIR "/examples/demo-cuda-ext", src.string()},
                      {kBuildCommand,
                       absl::StrCat("command = \"python{python} -m pip wheel --no-deps "
                                    "--no-build-isolation --wheel-dir built . && python{python} "
                                    "rename_wheel.py built dist ",
                                    project, " '", version, "'\"")},
                      {kBuiltinPublish, publish}}));
    };
    // Issue 24 hole 2: a build of demo-cuda-ext 0.1.0 publishes numpy 99.0.
    attack("impostor", "numpy", "99.0", kBuiltinPublish);
    // Hole 1: a hook given as argv, and a wheel name that is shell text.
    attack(
        "injected", "demo_cuda_ext", kInjectedVersion,
        absl::StrCat("[[publish]]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"cd \\\"$1\\\" "
                     "&& cp \\\"$2\\\" .\", \"sh\", \"",
                     *dir_ / "hook", "\", \"{wheel}\"]\n"));
    // Hole 1 as the probe found it: the hook a shell string, the name spliced into it.
    attack("shellhook", "demo_cuda_ext", kInjectedVersion,
           absl::StrCat("[[publish]]\nkind = \"command\"\ncommand = \"cd ", *dir_ / "hook",
                        " && cp {wheel} .\"\n"));

    auto farm = TestFarm::Start(dir_->path(), WheelFarmOptions(dir_->path(), recipes, 1));
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
  }

  static void TearDownSuite() {
    farm_.reset();
    dir_.reset();
  }

  static CommandResult Farmctl(const std::vector<std::string>& args) {
    return farm_->Farmctl(args);
  }

  static nlohmann::json BuildJson(const std::string& id) {
    return nlohmann::json::parse(Farmctl({"--json", "build", id}).stdout_text, nullptr, false);
  }

  // The built-in index's status for a project page (404: it has no such project).
  static int IndexStatus(const std::string& project) {
    auto hp = ParseHostPort(farm_->coordinator().http_address());
    if (!hp.ok()) return -1;
    httplib::Client client(hp->host, hp->port);
    auto res = client.Get(absl::StrCat("/simple/", project, "/"));
    return res ? res->status : -1;
  }

  // What the hook directory holds: anything at all is something published or run.
  static std::vector<std::string> HookFiles() {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(*dir_ / "hook")) {
      names.push_back(e.path().filename().string());
    }
    return names;
  }

  static inline std::unique_ptr<TempDir> dir_;
  static inline std::unique_ptr<TestFarm> farm_;
};

TEST_F(BuiltWheelTest, AWheelOfAnotherProjectFailsTheBuildNamingBothAndIsNotPublished) {
  CommandResult r = Farmctl({"submit", "impostor-0.1.0", "--archs", "9.0", "--wait"});
  EXPECT_NE(r.exit_code, 0) << Output(r);
  EXPECT_THAT(r.stderr_text, HasSubstr("the build of demo-cuda-ext 0.1.0 produced numpy-99.0-"))
      << Output(r);
  EXPECT_THAT(r.stderr_text, HasSubstr(", a wheel of numpy 99.0: a build publishes only its own "
                                       "package and version"))
      << Output(r);
  const nlohmann::json build = BuildJson(SubmittedBuildId(r));
  EXPECT_EQ(build.value("state", ""), "BUILD_STATE_FAILED") << build.dump(2);
  EXPECT_FALSE(build.contains("published_to") && !build["published_to"].empty()) << build.dump(2);
  EXPECT_EQ(IndexStatus("numpy"), 404);
  EXPECT_EQ(IndexStatus("demo-cuda-ext"), 404);
}

TEST_F(BuiltWheelTest, AWheelNamedAsShellTextFailsTheBuildAndNeverReachesTheHook) {
  CommandResult r = Farmctl({"submit", "injected-0.1.0", "--archs", "9.0", "--wait"});
  EXPECT_NE(r.exit_code, 0) << Output(r);
  EXPECT_THAT(r.stderr_text, HasSubstr("the build's wheel is refused: wheel file name "
                                       "\"demo_cuda_ext-0.1.0$(id>PWNED)-py3-none-"))
      << Output(r);
  EXPECT_THAT(r.stderr_text, HasSubstr("the version \"0.1.0$(id>PWNED)\" is not a PEP 440 version"))
      << Output(r);
  const nlohmann::json build = BuildJson(SubmittedBuildId(r));
  EXPECT_EQ(build.value("state", ""), "BUILD_STATE_FAILED") << build.dump(2);
  EXPECT_FALSE(build.contains("published_to") && !build["published_to"].empty()) << build.dump(2);
  EXPECT_THAT(HookFiles(), ::testing::IsEmpty());
}

// The probe's attack whole: a shell-string hook never loads, so nothing the build names
// reaches a shell on the coordinator.
TEST_F(BuiltWheelTest, AShellStringHookIsRefusedAtLoadAndRunsNothing) {
  CommandResult recipes = Farmctl({"recipes"});
  EXPECT_THAT(recipes.stderr_text, HasSubstr("shellhook.toml:")) << Output(recipes);
  EXPECT_THAT(recipes.stderr_text, HasSubstr("publish.command: a shell string is refused here"))
      << Output(recipes);
  CommandResult r = Farmctl({"submit", "shellhook-0.1.0", "--archs", "9.0", "--wait"});
  EXPECT_NE(r.exit_code, 0) << Output(r);
  EXPECT_THAT(r.stderr_text, HasSubstr("no recipe named 'shellhook'")) << Output(r);
  EXPECT_FALSE(fs::exists(*dir_ / "hook/PWNED")) << ReadFile(*dir_ / "hook/PWNED");
  EXPECT_THAT(HookFiles(), ::testing::IsEmpty());
}

}  // namespace
}  // namespace farm::testing
