// `farmctl submit` end to end on loopback: a coordinator with its recipes, 2 workers, and the
// demo CUDA extension built for three archs through farm-nvcc, retagged, verified, published
// to the built-in index and pip-installed back. Then the action cache across builds, a
// coordinator restart mid-build, cancellation, and bad input of every kind. Nothing is
// mocked; the Python tools (pypiserver) come from the repository's .venv
// (scripts/install-deps.sh), never the workers': they start without any virtualenv on PATH.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "farm/v1/builds.grpc.pb.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/digest/digest.h"
#include "libfarm/process/subprocess.h"
#include "libfarm/recipes/python_environment.h"
#include "libfarm/rpc/channel.h"
#include "libfarm/rpc/token_auth.h"
#include "tests/support/demo_recipe.h"
#include "tests/support/fake_wheel.h"
#include "tests/support/suite_fixture.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kVenvBin = FARM_SOURCE_DIR "/.venv/bin";

const std::string kBuildCommand =
    "command = [\"python{python}\", \"-m\", \"pip\", \"wheel\", \"--no-deps\", "
    "\"--no-build-isolation\",\n           \"--wheel-dir\", \"dist\", \".\"]";
const std::string kRequirements = "requirements = [\"setuptools>=70.1\", \"wheel\"]";

// A worker's secret that no build may see (issue 24).
constexpr char kWorkerSecret[] = "hunter2-of-the-worker";

// `text` as a TOML basic string.
std::string TomlString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// A build command that runs `python` (no braces: they would be placeholders) in the
// recipe's environment.
std::string PythonCommand(const std::string& python) {
  return absl::StrCat("command = [\"python{python}\", \"-c\", ", TomlString(python), "]");
}

// An sdist of `wheelfarm-probe-victim` 1.0 whose in-tree build backend needs nothing from an
// index: pip builds it, offline, into a wheel whose module says where it came from.
void WriteVictimSdist(const fs::path& links) {
  const fs::path src = links.parent_path() / "victim-src" / "wheelfarm_probe_victim-1.0";
  WriteText(src / "pyproject.toml",
            "[build-system]\nrequires = []\nbuild-backend = \"backend\"\nbackend-path = [\".\"]\n");
  WriteText(src / "backend.py", R"(import base64, hashlib, os, zipfile
NAME, VERSION = "wheelfarm_probe_victim", "1.0"
def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    info = NAME + "-" + VERSION + ".dist-info"
    files = {
        NAME + ".py": b"ORIGIN = 'built from its sdist'\n",
        info + "/METADATA": b"Metadata-Version: 2.1\nName: wheelfarm-probe-victim\nVersion: 1.0\n",
        info + "/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(path + ",sha256=" + digest + "," + str(len(data)))
    record.append(info + "/RECORD,,")
    name = NAME + "-" + VERSION + "-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as z:
        for path, data in files.items():
            z.writestr(path, data)
        z.writestr(info + "/RECORD", "\n".join(record) + "\n")
    return name
)");
  fs::create_directories(links);
  auto tar = RunCommand({"tar", "czf", (links / "wheelfarm_probe_victim-1.0.tar.gz").string(), "-C",
                         src.parent_path().string(), src.filename().string()});
  ASSERT_TRUE(tar.ok() && tar->exit_code == 0) << (tar.ok() ? Output(*tar) : "spawn failed");
}

// What a hostile build does with pip's cache: computes where pip would look for a wheel built
// from the victim's sdist (pip's own code, in the build's environment) and puts its own wheel
// there, in its PIP_CACHE_DIR and in the cache every host's builds used to share.
const std::string kPlantWheel = R"(import glob, inspect, os, sys, zipfile
from pip._internal.cache import SimpleWheelCache
from pip._internal.models.format_control import FormatControl
from pip._internal.models.link import Link
from pip._internal.utils.urls import path_to_url
extra = [FormatControl()] if 'format_control' in inspect.signature(SimpleWheelCache).parameters else []
caches = [os.environ['PIP_CACHE_DIR'], os.path.join(os.path.dirname(os.environ['VIRTUAL_ENV']), 'pip-cache')]
for cache in caches:
    for links in os.environ['PIP_FIND_LINKS'].split():
        for sdist in glob.glob(os.path.join(links, 'wheelfarm_probe_victim-*.tar.gz')):
            where = SimpleWheelCache(cache, *extra).get_path_for_link(Link(path_to_url(sdist)))
            try:
                os.makedirs(where, exist_ok=True)
                with zipfile.ZipFile(os.path.join(where, 'wheelfarm_probe_victim-1.0-py3-none-any.whl'), 'w') as z:
                    z.writestr('wheelfarm_probe_victim.py', 'ORIGIN = ' + repr('PLANTED') + chr(10))
                    info = 'wheelfarm_probe_victim-1.0.dist-info/'
                    z.writestr(info + 'METADATA', 'Metadata-Version: 2.1' + chr(10) + 'Name: wheelfarm-probe-victim' + chr(10) + 'Version: 1.0' + chr(10))
                    z.writestr(info + 'WHEEL', 'Wheel-Version: 1.0' + chr(10) + 'Root-Is-Purelib: true' + chr(10) + 'Tag: py3-none-any' + chr(10))
                    z.writestr(info + 'RECORD', '')
                print('PLANTED IN', where)
            except OSError as e:
                print('NOT PLANTED IN', where, e)
sys.exit(3)
)";

class SubmitTest : public SuiteFixture<SubmitTest> {
 protected:
  static void SetUpSuite() {
    // The workers start with a stock environment: no virtualenv on PATH (not the tools venv
    // this test drives pypiserver from, not one ctest was started in). The recipe's build
    // environment is theirs to make.
    ASSERT_TRUE(fs::exists(kVenvBin + "/python3.11"))
        << "the tools venv is missing. Fix: bash scripts/install-deps.sh";
    LeaveVirtualenvs();
    dir_ = std::make_unique<TempDir>("submit-test");
    const std::string recipes = *dir_ / "recipes";
    WriteText(recipes + "/demo.toml", DemoRecipe("demo"));
    WriteText(recipes + "/pytorch.toml", ReadFile(FARM_SOURCE_DIR "/recipes/pytorch.toml"));
    WriteText(recipes + "/old-cuda.toml",
              DemoRecipe("old-cuda", {{"cuda_max = \"13.0\"", "cuda_max = \"12.8\""}}));
    WriteText(recipes + "/failing.toml",
              DemoRecipe("failing",
                         {{kBuildCommand,
                           "command = \"echo 'saxpy.cu(12): error: identifier \\\"blockDimx\\\" is "
                           "undefined' >&2; exit 3\""}}));
    // Runs long enough for its coordinator to be killed and restarted while it builds.
    WriteText(recipes + "/outlives.toml",
              DemoRecipe("outlives", {{kBuildCommand,
                                       "command = \"echo before-restart; sleep 20; echo "
                                       "after-restart; exit 3\""}}));
    // Builds sm_75 whatever was asked: a wheel that must not pass verification.
    WriteText(recipes + "/unverified.toml",
              DemoRecipe("unverified",
                         {{"DEMO_CUDA_ARCHS = \"{cmake_archs}\"", "DEMO_CUDA_ARCHS = \"75\""}}));
    // A requirement no index has: the build fails at its environment step.
    WriteText(recipes + "/badreq.toml",
              DemoRecipe("badreq", {{kRequirements,
                                     "requirements = [\"wheelfarm-no-such-package-xyz==1.0\"]"}}));
    // An interpreter no worker has.
    WriteText(recipes + "/oldpython.toml",
              DemoRecipe("oldpython", {{"version = \"3.11\"", "version = \"3.5\""}}));
    // Prerequisites. A host library no worker's loader knows: refused at plan time, by name.
    WriteText(recipes + "/needslib.toml",
              DemoRecipe("needslib") +
                  "\n[[prerequisites]]\nname = \"Absent\"\nversion = "
                  "\">=7\"\nhost_library = \"libwheelfarm-absent.so.7\"\n");
    // One every worker has: the plan names the hosts.
    WriteText(recipes + "/haslib.toml",
              DemoRecipe("haslib") +
                  "\n[[prerequisites]]\nname = \"glibc\"\nhost_library = \"libc.so.6\"\n");
    // A wheel no index has: the build fails at its environment step with pip's message.
    WriteText(recipes + "/badprereq.toml", DemoRecipe("badprereq") +
                                               "\n[[prerequisites]]\nname = \"Missing\"\nwheel = "
                                               "\"wheelfarm-no-such-prereq-xyz>=1.0\"\n");
    // A real wheel (from --find-links, below) whose variables the build command checks, then
    // stops with exit 7: the prerequisite reached the build without compiling anything.
    ASSERT_TRUE(WriteFakeLibraryWheel(*dir_ / "wheels").ok());
    WriteVictimSdist(*dir_ / "sdists");
    const char* links = std::getenv("PIP_FIND_LINKS");
    setenv("PIP_FIND_LINKS",
           absl::StrCat(links == nullptr ? "" : links, links == nullptr ? "" : " ",
                        *dir_ / "wheels", " ", *dir_ / "sdists")
               .c_str(),
           1);
    // In the workers' environment, as a secret in a systemd unit would be.
    setenv("FARM_TEST_SECRET", kWorkerSecret, 1);
    // Prints the environment the build gets.
    WriteText(recipes + "/envprobe.toml",
              DemoRecipe("envprobe", {{kBuildCommand,
                                       "command = \"env | sed 's/^/ENVPROBE /'; "
                                       "exit 3\""}}));
    // A build that plants a wheel in pip's cache, and a later one of another recipe whose
    // environment needs that wheel's project (issue 24).
    WriteText(recipes + "/pipplant.toml",
              DemoRecipe("pipplant", {{kBuildCommand, PythonCommand(kPlantWheel)}}));
    WriteText(
        recipes + "/pipvictim.toml",
        DemoRecipe("pipvictim",
                   {{kRequirements, "requirements = [\"wheelfarm-probe-victim==1.0\"]"},
                    {kBuildCommand, PythonCommand("import sys, wheelfarm_probe_victim as v\n"
                                                  "print('VICTIM ' + v.ORIGIN)\nsys.exit(3)\n")}}));
    WriteText(recipes + "/fakeprereq.toml",
              DemoRecipe("fakeprereq",
                         {{kBuildCommand,
                           "command = \"test -e \\\"$FAKE_LIB_DIR/libfake.so\\\" && test -e "
                           "\\\"$FAKE_INCLUDE_DIR/fake.h\\\" && echo \\\"FAKE_OK "
                           "$USE_SYSTEM_FAKE\\\" && exit 7\""}}) +
                  "\n[[prerequisites]]\nname = \"Fake\"\nversion = \">=1.2\"\nwheel = "
                  "\"wheelfarm-prereq-fake>=1.2\"\nlinker_names = "
                  "[\"{site_packages}/wheelfarm_prereq_fake/lib/libfake.so.3\"]\n"
                  "[prerequisites.env]\nFAKE_INCLUDE_DIR = "
                  "\"{site_packages}/wheelfarm_prereq_fake/include\"\nFAKE_LIB_DIR = "
                  "\"{site_packages}/wheelfarm_prereq_fake/lib\"\nUSE_SYSTEM_FAKE = \"1\"\n");
    WriteText(recipes + "/slow.toml",
              DemoRecipe("slow", {{kBuildCommand, "command = \"sleep 300\""}}));
    // Shows the token the build got (FARM_TOKEN_FILE, what its farm-nvcc uses), then waits.
    WriteText(recipes + "/tokenprobe.toml",
              DemoRecipe("tokenprobe", {{kBuildCommand,
                                         "command = \"echo BUILD_TOKEN=$(cat "
                                         "\\\"$FARM_TOKEN_FILE\\\"); sleep 300\""}}));
    // The same package version, published by a command hook into a directory (the built-in
    // index keeps the first file of a name, so another build of it could not go there).
    fs::create_directories(*dir_ / "hook-published");
    fs::create_directories(*dir_ / "hook-published-4");
    WriteText(recipes + "/demo-hook.toml",
              DemoRecipe("demo-hook", {{"[[publish]]\nkind = \"builtin\"\n",
                                        absl::StrCat("[[publish]]\nkind = \"command\"\ncommand = "
                                                     "[\"cp\", \"{wheel}\", \"",
                                                     *dir_ / "hook-published", "/\"]\n")}}));
    // Step 4's wheel (another arch set of 0.1.0) goes to a hook directory of its own, where it
    // meets no wheel of the same name, and to a real pypiserver through the legacy upload API, with
    // a password the coordinator reads from its environment.
    StartPypiserver();
    setenv("WHEELFARM_TEST_PYPI_PASSWORD", "s3cret", 1);
    WriteText(recipes + "/demo-pypi.toml",
              DemoRecipe("demo-pypi",
                         {{"[[publish]]\nkind = \"builtin\"\n",
                           absl::StrCat("[[publish]]\nkind = \"command\"\ncommand = [\"cp\", "
                                        "\"{wheel}\", \"",
                                        *dir_ / "hook-published-4",
                                        "/\"]\n\n[[publish]]\nkind = \"repository\"\nurl = "
                                        "\"",
                                        pypi_url_,
                                        "\"\nusername = \"alice\"\npassword_env = "
                                        "\"WHEELFARM_TEST_PYPI_PASSWORD\"\n")}}));
    auto farm = TestFarm::Start(dir_->path(), WheelFarmOptions(dir_->path(), *dir_ / "recipes"));
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
  }

  static void StartPypiserver() {
    const std::string htpasswd = *dir_ / "htpasswd";
    auto pw = RunCommand({kVenvBin + "/python", "-c",
                          "import sys\nfrom passlib.apache import HtpasswdFile\n"
                          "h = HtpasswdFile(sys.argv[1], new=True)\n"
                          "h.set_password('alice', 's3cret')\nh.save()\n",
                          htpasswd});
    ASSERT_TRUE(pw.ok() && pw->exit_code == 0) << (pw.ok() ? Output(*pw) : "spawn failed");
    fs::create_directories(*dir_ / "pypi-packages");
    const int port = FreePort();
    auto server = Subprocess::Spawn(
        {kVenvBin + "/python", "-m", "pypiserver", "run", "-i", "127.0.0.1", "-p",
         std::to_string(port), "-P", htpasswd, "-a", "update", *dir_ / "pypi-packages"},
        {.log_path = *dir_ / "pypiserver.log"});
    ASSERT_TRUE(server.ok()) << server.status();
    pypiserver_ = std::make_unique<Subprocess>(*server);
    pypi_url_ = absl::StrCat("http://127.0.0.1:", port, "/");
    ASSERT_TRUE(WaitFor(
        [&] {
          auto r = RunCommand(
              {kVenvBin + "/python", "-c",
               "import sys, urllib.request; urllib.request.urlopen(sys.argv[1])", pypi_url_},
              absl::Seconds(5));
          return r.ok() && r->exit_code == 0;
        },
        absl::Seconds(30)))
        << ReadFile(*dir_ / "pypiserver.log");
  }

  static void TearDownSuite() {
    farm_.reset();
    if (pypiserver_ != nullptr) {
      pypiserver_->Signal(SIGKILL);
      pypiserver_->Wait(absl::Seconds(5));
    }
    pypiserver_.reset();
    dir_.reset();
  }

  static CommandResult Farmctl(const std::vector<std::string>& args) {
    return farm_->Farmctl(args);
  }

  static nlohmann::json BuildJson(const std::string& id) {
    CommandResult r = Farmctl({"--json", "build", id});
    return nlohmann::json::parse(r.stdout_text, nullptr, false);
  }

  // Shard name -> {done, cached}.
  static std::map<std::string, std::pair<int, int>> Shards(const nlohmann::json& build) {
    std::map<std::string, std::pair<int, int>> out;
    for (const auto& s : build.value("shards", nlohmann::json::array())) {
      out[s.value("name", "")] = {s.value("done", 0), s.value("cached", 0)};
    }
    return out;
  }

  // Submits the tokenprobe recipe with `token_file` and returns its build id and the build
  // token it printed (what its build's code can read), once it runs; empty on failure.
  static std::pair<std::string, std::string> StartTokenProbe(const std::string& token_file) {
    CommandResult r = RunFarmctl({"--coordinator", farm_->address(), "--token-file", token_file,
                                  "submit", "tokenprobe-0.1.0", "--archs", "9.0"});
    EXPECT_EQ(r.exit_code, 0) << Output(r);
    const std::string id = SubmittedBuildId(r);
    if (id.empty()) return {};
    std::string token;
    const bool printed = WaitFor(
        [&] {
          const std::string log = Farmctl({"logs", id}).stdout_text;
          // The line the command printed (the log also echoes the command itself).
          const size_t at = log.find("\nBUILD_TOKEN=");
          if (at == std::string::npos || log.size() < at + 13 + 64) return false;
          token = log.substr(at + 13, 64);
          return token.find_first_not_of("0123456789abcdef") == std::string::npos;
        },
        absl::Seconds(90));
    EXPECT_TRUE(printed) << Farmctl({"logs", id}).stdout_text;
    return {id, printed ? token : ""};
  }

  // A new token of `role` in a file named after `name`; the file.
  static std::string MakeToken(const std::string& role, const std::string& name) {
    auto made = farm_->CreateToken(role, name);
    EXPECT_TRUE(made.ok()) << made.status();
    return made.ok() ? made->file : "";
  }

  // Whether some build holds a build tree under the workers' shared --builds-dir (a host's
  // BuildDirectory keeps its `.lock` flocked until the build's command has stopped).
  static bool SomeBuildTreeIsHeld() {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(*dir_ / "builds", ec)) {
      if (e.path().extension() != ".lock") continue;
      const int fd = ::open(e.path().c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) continue;
      const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0;
      ::close(fd);
      if (held) return true;
    }
    return false;
  }

  static inline std::unique_ptr<TempDir> dir_;
  static inline std::unique_ptr<TestFarm> farm_;
  static inline std::unique_ptr<Subprocess> pypiserver_;
  static inline std::string pypi_url_;
};

TEST_F(SubmitTest, DryRunPrintsThePlanAndQueuesNothing) {
  CommandResult r = Farmctl({"submit", "demo-0.1.0", "--archs", "7.5;9.0;12.1", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << Output(r);
  EXPECT_NE(r.stdout_text.find("dry run: nothing was queued"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("CUDA       13.0"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("w1, w2"), std::string::npos) << r.stdout_text;
  for (const std::string shard : {"sm_75", "sm_90", "sm_121"}) {
    EXPECT_NE(r.stdout_text.find(shard + "  "), std::string::npos) << shard << r.stdout_text;
  }
  // 0.1 MiB + 3 x 0.3 MiB per arch, from the recipe.
  EXPECT_NE(r.stdout_text.find("wheel size ~1.0 MiB"), std::string::npos) << r.stdout_text;
  // The build environment: the recipe's Python and requirements, and the hash they cache by.
  EXPECT_NE(r.stdout_text.find("python env python3.11 virtualenv, requirements "
                               "setuptools>=70.1, wheel (hash " +
                               PythonRequirementsHash({"setuptools>=70.1", "wheel"})),
            std::string::npos)
      << r.stdout_text;
  CommandResult builds = Farmctl({"--json", "builds"});
  EXPECT_EQ(builds.stdout_text.find("\"demo-cuda-ext\""), std::string::npos) << builds.stdout_text;
}

TEST_F(SubmitTest, RefusesBadInputWithAPreciseMessage) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"nosuch-1.0", "--archs", "9.0"}, "no recipe named 'nosuch'"},
      {{"demo-9.9.9", "--archs", "9.0"}, "has no version '9.9.9'"},
      {{"demo", "--archs", "9.0"}, "demo"},
      {{"demo-0.1.0", "--archs", "7.5;banana"}, "banana"},
      {{"demo-0.1.0", "--archs", "9.7"}, "9.7"},
      // The recipe allows CUDA up to 12.8; sm_121 needs 12.9.
      {{"old-cuda-0.1.0", "--archs", "12.1"}, "sm_121"},
      // CUDA 13.0, the only toolkit here, has nothing below sm_75.
      {{"demo-0.1.0", "--archs", "7.0"}, "sm_70"},
      // PyTorch's policy wants aarch64 hosts; these workers are x86_64.
      {{"pytorch-2.9.1", "--archs", "9.0", "--dry-run"}, "no online worker can host the build"},
      {{"demo-0.1.0", "--archs", "9.0", "--source", *dir_ / "no-such-dir"}, "no-such-dir"},
      // No worker has python3.5: refused at plan time, naming each host and the fix.
      {{"oldpython-0.1.0", "--archs", "9.0", "--dry-run"}, "no build host has python3.5 (w1: 3."},
      {{"oldpython-0.1.0", "--archs", "9.0"}, "Fix: install python3.5 on a build host"},
      // A host_library no worker advertises: refused at plan time, naming it, the hosts, the fix.
      {{"needslib-0.1.0", "--archs", "9.0", "--dry-run"},
       "no build host has the prerequisite Absent, host_library = \"libwheelfarm-absent.so.7\""},
      {{"needslib-0.1.0", "--archs", "9.0"}, "w1 lacks libwheelfarm-absent.so.7; w2 lacks "},
      {{"needslib-0.1.0", "--archs", "9.0"},
       "Fix: install Absent on a build host so its dynamic loader lists libwheelfarm-absent.so.7"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> args = {"submit"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    CommandResult r = Farmctl(args);
    EXPECT_NE(r.exit_code, 0) << c.args[0] << "\n" << Output(r);
    EXPECT_NE(r.stderr_text.find(c.message), std::string::npos)
        << "expected '" << c.message << "' in:\n"
        << Output(r);
    EXPECT_EQ(r.stderr_text.find("Aborted"), std::string::npos) << Output(r);
  }
  CommandResult missing_source =
      Farmctl({"submit", "demo-0.1.0", "--archs", "9.0", "--source", *dir_ / "no-such-dir"});
  EXPECT_NE(missing_source.stderr_text.find("does not exist. Nothing was submitted"),
            std::string::npos)
      << Output(missing_source);
  // The coordinator kept serving, and nothing refused was queued.
  CommandResult status = Farmctl({"status"});
  EXPECT_EQ(status.exit_code, 0) << Output(status);
  CommandResult builds = Farmctl({"--json", "builds"});
  EXPECT_EQ(builds.stdout_text.find("\"needslib\""), std::string::npos) << builds.stdout_text;
}

TEST_F(SubmitTest, DryRunListsEachPrerequisiteAndWhereItComesFrom) {
  CommandResult host = Farmctl({"submit", "haslib-0.1.0", "--archs", "9.0", "--dry-run"});
  ASSERT_EQ(host.exit_code, 0) << Output(host);
  EXPECT_NE(host.stdout_text.find("prereq     glibc: host library libc.so.6 on w1, w2\n"),
            std::string::npos)
      << host.stdout_text;
  CommandResult wheel = Farmctl({"submit", "fakeprereq-0.1.0", "--archs", "9.0", "--dry-run"});
  ASSERT_EQ(wheel.exit_code, 0) << Output(wheel);
  EXPECT_NE(wheel.stdout_text.find("prereq     Fake >=1.2: wheel wheelfarm-prereq-fake>=1.2 into "
                                   "the python env (sets FAKE_INCLUDE_DIR, FAKE_LIB_DIR, "
                                   "USE_SYSTEM_FAKE)\n"),
            std::string::npos)
      << wheel.stdout_text;
  // The refusal of another recipe's missing library changed nothing for the rest of the farm.
  CommandResult refused = Farmctl({"submit", "needslib-0.1.0", "--archs", "9.0"});
  EXPECT_NE(refused.exit_code, 0) << Output(refused);
  EXPECT_EQ(Farmctl({"submit", "demo-0.1.0", "--archs", "9.0", "--dry-run"}).exit_code, 0);
  auto ws = farm_->ListWorkers();
  EXPECT_EQ(StateOf(ws, "w1"), "online");
  EXPECT_EQ(StateOf(ws, "w2"), "online");
}

TEST_F(SubmitTest, AWheelPrerequisiteReachesTheBuildWithItsVariables) {
  CommandResult r = Farmctl({"submit", "fakeprereq-0.1.0", "--archs", "9.0", "--wait"});
  // The recipe's command checks the variables, prints FAKE_OK and stops with exit 7.
  EXPECT_NE(r.stderr_text.find("failed with exit code 7"), std::string::npos) << Output(r);
  CommandResult logs = Farmctl({"logs", SubmittedBuildId(r)});
  EXPECT_NE(logs.stdout_text.find("wheelfarm: prerequisite Fake >=1.2: wheelfarm-prereq-fake "
                                  "1.2.3 (wheel)"),
            std::string::npos)
      << Output(logs);
  EXPECT_NE(logs.stdout_text.find("wheelfarm: FAKE_LIB_DIR=" + (*dir_ / "builds/.envs/")),
            std::string::npos)
      << Output(logs);
  EXPECT_NE(logs.stdout_text.find("FAKE_OK 1"), std::string::npos) << Output(logs);
}

TEST_F(SubmitTest, AnUninstallablePrerequisiteWheelFailsAtTheEnvironmentStepNamingIt) {
  CommandResult r = Farmctl({"submit", "badprereq-0.1.0", "--archs", "9.0", "--wait"});
  EXPECT_NE(r.exit_code, 0) << Output(r);
  EXPECT_NE(r.stderr_text.find("No matching distribution found for wheelfarm-no-such-prereq-xyz"),
            std::string::npos)
      << Output(r);
  EXPECT_NE(r.stderr_text.find("wheelfarm: the environment step failed: pip could not install the "
                               "prerequisite Missing's wheelfarm-no-such-prereq-xyz>=1.0 (CUDA "
                               "13.0), from [[prerequisites]] \"Missing\" wheel = "
                               "\"wheelfarm-no-such-prereq-xyz>=1.0\" (" +
                               (*dir_ / "recipes/badprereq.toml") + ":"),
            std::string::npos)
      << Output(r);
  CommandResult logs = Farmctl({"logs", SubmittedBuildId(r)});
  EXPECT_EQ(logs.stdout_text.find("'pip' 'wheel'"), std::string::npos) << Output(logs);
}

TEST_F(SubmitTest, AFailingBuildCommandShowsItsErrorText) {
  CommandResult r = Farmctl({"submit", "failing-0.1.0", "--archs", "9.0", "--wait"});
  EXPECT_NE(r.exit_code, 0) << Output(r);
  EXPECT_NE(r.stderr_text.find("failed with exit code 3"), std::string::npos) << Output(r);
  EXPECT_NE(r.stderr_text.find("identifier \"blockDimx\" is undefined"), std::string::npos)
      << Output(r);
  const std::string id = SubmittedBuildId(r);
  CommandResult logs = Farmctl({"logs", id});
  EXPECT_NE(logs.stdout_text.find("blockDimx"), std::string::npos) << Output(logs);
}

// The build goes on on its host while the coordinator restarts, so the commands following it
// wait for the coordinator to come back (saying so) and end with the build, not with the
// outage.
TEST_F(SubmitTest, WatchAndLogsFollowRideOutACoordinatorRestart) {
  CommandResult r = Farmctl({"submit", "outlives-0.1.0", "--archs", "9.0"});
  ASSERT_EQ(r.exit_code, 0) << Output(r);
  const std::string id = SubmittedBuildId(r);
  ASSERT_TRUE(WaitFor(
      [&] {
        return absl::StrContains(Farmctl({"logs", id}).stdout_text, "before-restart");
      },
      absl::Seconds(120)))
      << Output(Farmctl({"build", id})) << Output(Farmctl({"logs", id}));
  const std::string grpc = farm_->address();
  auto follower = [&](std::vector<std::string> args, const std::string& log) {
    args.insert(args.begin(), {FarmBinary("farmctl"), "--coordinator", grpc, "--token-file",
                               farm_->admin_token_file()});
    return Subprocess::Spawn(args, {.log_path = log});
  };
  const std::string watch_log = *dir_ / "watch-restart.log";
  const std::string logs_log = *dir_ / "logs-restart.log";
  auto watch = follower({"watch", id, "--interval", "0.2"}, watch_log);
  auto logs = follower({"logs", id, "--follow"}, logs_log);
  ASSERT_TRUE(watch.ok() && logs.ok());
  // Both have had their first answer.
  ASSERT_TRUE(WaitFor(
      [&] {
        return absl::StrContains(ReadFile(logs_log), "before-restart") &&
               absl::StrContains(ReadFile(watch_log), id);
      },
      absl::Seconds(30)))
      << ReadFile(watch_log) << ReadFile(logs_log);

  farm_->coordinator().process().Signal(SIGKILL);
  ASSERT_EQ(farm_->coordinator().process().Wait(absl::Seconds(10)), 128 + SIGKILL);
  absl::SleepFor(absl::Seconds(2));
  EXPECT_FALSE(watch->Wait(absl::ZeroDuration()).has_value())
      << "watch ended with the coordinator:\n"
      << ReadFile(watch_log);
  EXPECT_FALSE(logs->Wait(absl::ZeroDuration()).has_value())
      << "logs --follow ended with the coordinator:\n"
      << ReadFile(logs_log);
  absl::Status restarted = farm_->RestartCoordinator();
  ASSERT_TRUE(restarted.ok()) << restarted;

  // The build's command fails (exit 3) after the restart: watch says so with exit 1, and
  // logs --follow printed what came after the restart.
  EXPECT_EQ(watch->Wait(absl::Seconds(120)), 1) << ReadFile(watch_log);
  EXPECT_EQ(logs->Wait(absl::Seconds(120)), 0) << ReadFile(logs_log);
  const std::string watched = ReadFile(watch_log);
  EXPECT_THAT(watched, HasSubstr("farmctl: lost the coordinator"));
  EXPECT_THAT(watched, HasSubstr("farmctl: the coordinator is back"));
  EXPECT_THAT(watched, HasSubstr("build " + id + " failed"));
  const std::string followed = ReadFile(logs_log);
  EXPECT_THAT(followed, HasSubstr("farmctl: lost the coordinator"));
  // Each line of the command's output once (the echoed command line names both too).
  EXPECT_EQ(CountOccurrences(followed, "\nbefore-restart\n"), 1) << followed;
  EXPECT_EQ(CountOccurrences(followed, "\nafter-restart\n"), 1) << followed;
}

TEST_F(SubmitTest, ARequirementNoIndexHasFailsAtTheEnvironmentStepWithPipsMessage) {
  CommandResult r = Farmctl({"submit", "badreq-0.1.0", "--archs", "9.0", "--wait"});
  EXPECT_NE(r.exit_code, 0) << Output(r);
  EXPECT_NE(r.stderr_text.find("No matching distribution found for "
                               "wheelfarm-no-such-package-xyz==1.0"),
            std::string::npos)
      << Output(r);
  EXPECT_NE(r.stderr_text.find("wheelfarm: the environment step failed: pip could not install "
                               "the recipe's [python] requirements = "
                               "[\"wheelfarm-no-such-package-xyz==1.0\"]"),
            std::string::npos)
      << Output(r);
  // It stopped there: the recipe's build command never ran.
  CommandResult logs = Farmctl({"logs", SubmittedBuildId(r)});
  EXPECT_NE(logs.stdout_text.find("'pip' 'install'"), std::string::npos) << Output(logs);
  EXPECT_EQ(logs.stdout_text.find("'pip' 'wheel'"), std::string::npos) << Output(logs);
  // Nothing half-made is left in the hosts' environment cache: only links to finished ones.
  for (const auto& e : fs::directory_iterator(*dir_ / "builds/.envs")) {
    const std::string name = e.path().filename().string();
    EXPECT_TRUE(name == "pip-caches" || absl::EndsWith(name, ".lock") || e.is_symlink() ||
                fs::exists(e.path() / "made.log"))
        << name;
  }
}

TEST_F(SubmitTest, AWheelThatFailsVerificationIsNotPublished) {
  CommandResult r = Farmctl({"submit", "unverified-0.1.0", "--archs", "7.5;9.0", "--wait"});
  EXPECT_NE(r.exit_code, 0) << Output(r);
  EXPECT_NE(r.stderr_text.find("verification failed, not published"), std::string::npos)
      << Output(r);
  EXPECT_NE(r.stderr_text.find("sm_90"), std::string::npos) << Output(r);
  const nlohmann::json build = BuildJson(SubmittedBuildId(r));
  EXPECT_EQ(build.value("state", ""), "BUILD_STATE_FAILED") << build.dump(2);
  EXPECT_FALSE(build.contains("published_to") && !build["published_to"].empty()) << build.dump(2);
}

TEST_F(SubmitTest, CancelStopsABuildAndCannotCancelTwice) {
  CommandResult r = Farmctl({"submit", "slow-0.1.0", "--archs", "9.0"});
  ASSERT_EQ(r.exit_code, 0) << Output(r);
  const std::string id = SubmittedBuildId(r);
  ASSERT_FALSE(id.empty()) << Output(r);
  ASSERT_TRUE(WaitFor([&] { return BuildJson(id).value("state", "") == "BUILD_STATE_BUILDING"; },
                      absl::Seconds(60)));
  CommandResult cancel = Farmctl({"cancel", id});
  ASSERT_EQ(cancel.exit_code, 0) << Output(cancel);
  EXPECT_NE(cancel.stdout_text.find("cancelled"), std::string::npos) << Output(cancel);
  CommandResult again = Farmctl({"cancel", id});
  EXPECT_NE(again.exit_code, 0) << Output(again);
  EXPECT_NE(again.stderr_text.find("has already cancelled"), std::string::npos) << Output(again);
  // The host stopped the command: its action ends cancelled, not still running.
  EXPECT_TRUE(WaitFor(
      [&] {
        CommandResult running = Farmctl({"--json", "workers"});
        return running.stdout_text.find(id) == std::string::npos;
      },
      absl::Seconds(30)))
      << Farmctl({"--json", "workers"}).stdout_text;
}

TEST_F(SubmitTest, AWheelBuildsTokenActsForThatBuildOnlyAndOnlyWhileItRuns) {
  const std::pair<std::string, std::string> probe = StartTokenProbe(farm_->admin_token_file());
  const std::string& id = probe.first;
  const std::string& token = probe.second;
  ASSERT_FALSE(token.empty());
  // Not the worker's token (nor the coordinator's, which the workers here hold).
  EXPECT_NE(token, ReadFile(farm_->admin_token_file()).substr(0, 64));
  const std::string token_file = *dir_ / "build.token";
  WriteText(token_file, token + "\n");
  auto as_build = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--coordinator", farm_->address(), "--token-file", token_file});
    return RunFarmctl(args);
  };
  // Nothing a build's farm-nvcc does not do: no fleet status, no logs, no submits.
  for (const std::vector<std::string>& args : {std::vector<std::string>{"status"},
                                               {"logs", id},
                                               {"workers"},
                                               {"submit", "demo-0.1.0", "--archs", "9.0"}}) {
    CommandResult refused = as_build(args);
    EXPECT_NE(refused.exit_code, 0) << Output(refused);
    EXPECT_THAT(refused.stderr_text, HasSubstr("'build' token may not call")) << Output(refused);
  }
  // Its own build's log, yes; another build's, no.
  auto channel = DialCoordinator(farm_->address());
  auto builds = farm::v1::BuildService::NewStub(channel);
  auto append = [&](const std::string& build, const std::string& with = "") {
    grpc::ClientContext ctx;
    AttachToken(ctx, with.empty() ? token : with);
    farm::v1::AppendBuildLogRequest req;
    req.set_build_id(build);
    req.set_data("from the build's token\n");
    farm::v1::AppendBuildLogResponse resp;
    return builds->AppendBuildLog(&ctx, req, &resp);
  };
  EXPECT_TRUE(append(id).ok()) << append(id).error_message();
  grpc::Status other = append("someone-elses-build");
  EXPECT_EQ(other.error_code(), grpc::StatusCode::PERMISSION_DENIED) << other.error_message();
  EXPECT_THAT(other.error_message(), HasSubstr("belongs to build '" + id + "'"));
  // Issue 24: nor another build's actions, whose status names their outputs.
  const std::string admin = farm_->AdminToken();
  farm::v1::Action theirs;
  theirs.add_argv("true");
  theirs.set_build_id("someone-elses-build");
  auto queued = ActionClient::Connect(farm_->address(), admin)->Execute({theirs});
  ASSERT_TRUE(queued.ok()) << queued.status();
  const std::string their_id = queued->front().action_id();
  auto as_build_actions = ActionClient::Connect(farm_->address(), token);
  for (const absl::Status& refused :
       {as_build_actions->Get(their_id).status(),
        as_build_actions->WaitAll({their_id}, absl::Seconds(1)).status()}) {
    EXPECT_EQ(refused.code(), absl::StatusCode::kPermissionDenied) << refused;
    EXPECT_THAT(refused.message(), HasSubstr("belongs to build '" + id + "'"));
  }
  // Issue 24: a worker token writes no build's log (the worker streams this one with the
  // build's token, as the BUILD_TOKEN line above shows).
  const std::string worker(absl::StripAsciiWhitespace(ReadFile(MakeToken("worker", "log-writer"))));
  grpc::Status by_worker = append(id, worker);
  EXPECT_EQ(by_worker.error_code(), grpc::StatusCode::PERMISSION_DENIED)
      << by_worker.error_message();
  EXPECT_THAT(by_worker.error_message(),
              HasSubstr("a 'worker' token may not call BuildService.AppendBuildLog"));
  // Listed (without its text) while the build runs...
  CommandResult listed = Farmctl({"token", "list"});
  EXPECT_THAT(listed.stdout_text, HasSubstr(id)) << Output(listed);
  EXPECT_THAT(listed.stdout_text, Not(HasSubstr(token))) << Output(listed);
  // ...and refused once the build ended.
  ASSERT_EQ(Farmctl({"cancel", id}).exit_code, 0);
  EXPECT_TRUE(WaitFor([&] { return append(id).error_code() == grpc::StatusCode::UNAUTHENTICATED; },
                      absl::Seconds(10)))
      << append(id).error_message();
  EXPECT_TRUE(WaitFor(
      [&] {
        return Farmctl({"token", "list"}).stdout_text.find(id) == std::string::npos;
      },
      absl::Seconds(10)))
      << Output(Farmctl({"token", "list"}));
}

// Issue 24, hole 3: a wheel build's code can read its build token, and a submit token's
// build wrote the compile cache entry of an admin's compile: the admin's next compile restored
// the build's bytes as its object. Now a build token's entries answer only its own
// submitter's builds of its package version.
TEST_F(SubmitTest, ASubmitTokensBuildCannotAnswerAnAdminsCompile) {
  const std::pair<std::string, std::string> probe =
      StartTokenProbe(MakeToken("submit", "ci-attacker"));
  const std::string& build_token = probe.second;
  ASSERT_FALSE(build_token.empty());

  // The admin's farm-nvcc compile, recorded in the compile cache.
  const std::string work = *dir_ / "admin-compile";
  WriteText(work + "/k.cu", "__global__ void k(float* x) { x[threadIdx.x] += 1.0f; }\n");
  auto admin_compile = [&] {
    auto r = RunCommand(
        {"env", "-C", work, FarmBinary("farm-nvcc"), "/usr/local/cuda/bin/nvcc", "-c", "k.cu", "-o",
         "k.o", "-arch=sm_90"},
        absl::Minutes(3),
        {"FARM_COORDINATOR=" + farm_->address(), "FARM_TOKEN_FILE=" + farm_->admin_token_file(),
         "FARM_NVCC_LOG=debug", "FARM_BUILD_ID=admin-compile"});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{};
  };
  CommandResult first = admin_compile();
  ASSERT_EQ(first.exit_code, 0) << Output(first);
  const std::string key = LoggedCompileCacheKey(first.stderr_text);
  ASSERT_EQ(key.size(), 64u) << first.stderr_text;
  const std::string honest = ReadFile(work + "/k.o");

  // The build's code puts its own object under that key, with the token it can read.
  auto trojan = CasClient::Connect(farm_->address(), build_token)->UploadBytes("trojan object\n");
  ASSERT_TRUE(trojan.ok()) << trojan.status();
  farm::v1::CompileResult entry;
  auto* object = entry.add_outputs();
  object->set_path("object");
  *object->mutable_digest() = *trojan;
  EXPECT_TRUE(
      ActionClient::Connect(farm_->address(), build_token)->PutCompileResult(key, entry).ok());

  // The admin's next compile restores the admin's own object.
  std::filesystem::remove(work + "/k.o");
  CommandResult again = admin_compile();
  ASSERT_EQ(again.exit_code, 0) << Output(again);
  EXPECT_THAT(again.stderr_text, HasSubstr("farm-nvcc: k.cu: compile cache")) << again.stderr_text;
  EXPECT_EQ(ReadFile(work + "/k.o"), honest);
  EXPECT_EQ(Farmctl({"cancel", probe.first}).exit_code, 0);
}

// Issue 24, hole 4: every build on a host shared pip's cache. A build planted a wheel there,
// and a later recipe's environment installed it without building the sdist it stands for.
TEST_F(SubmitTest, AWheelABuildPlantsInPipsCacheReachesNoLaterEnvironment) {
  CommandResult plant = Farmctl({"submit", "pipplant-0.1.0", "--archs", "9.0", "--wait"});
  EXPECT_NE(plant.exit_code, 0) << Output(plant);
  const std::string plant_log = Farmctl({"logs", SubmittedBuildId(plant)}).stdout_text;
  // It planted at least in the cache it was given.
  ASSERT_THAT(plant_log, HasSubstr("\nPLANTED IN ")) << plant_log;

  CommandResult victim = Farmctl({"submit", "pipvictim-0.1.0", "--archs", "9.0", "--wait"});
  EXPECT_NE(victim.exit_code, 0) << Output(victim);
  const std::string log = Farmctl({"logs", SubmittedBuildId(victim)}).stdout_text;
  EXPECT_THAT(log, HasSubstr("\nVICTIM built from its sdist\n")) << log;
  EXPECT_THAT(log, Not(HasSubstr("VICTIM PLANTED"))) << log;
}

// Issue 24: a wheel build inherited the worker's whole environment, its secrets included.
TEST_F(SubmitTest, AWorkersSecretsNeverReachItsBuilds) {
  CommandResult r = Farmctl({"submit", "envprobe-0.1.0", "--archs", "9.0", "--wait"});
  EXPECT_NE(r.exit_code, 0) << Output(r);
  const std::string log = Farmctl({"logs", SubmittedBuildId(r)}).stdout_text;
  // What a build needs of the host does arrive: pip's settings, PATH.
  EXPECT_THAT(log, HasSubstr("\nENVPROBE PIP_FIND_LINKS=")) << log;
  EXPECT_THAT(log, HasSubstr("\nENVPROBE PATH=")) << log;
  EXPECT_THAT(log, Not(HasSubstr("FARM_TEST_SECRET"))) << log;
  EXPECT_THAT(log, Not(HasSubstr(kWorkerSecret))) << log;
}

TEST_F(SubmitTest, BuildsVerifiesPublishesAndInstallsTheDemo) {
  // Step 3 rebuilds in the same build tree as step 1 (another tree is another module id, so
  // another compile): builds cancelled by earlier tests must have let go of theirs, which
  // takes until their hosts hear of the cancellation.
  ASSERT_TRUE(WaitFor([] { return !SomeBuildTreeIsHeld(); }, absl::Seconds(60)))
      << "a build tree under " << *dir_ / "builds"
      << " is still held";
  // 1. The headline: three archs, through farm-nvcc on both workers.
  CommandResult r = Farmctl({"submit", "demo-0.1.0", "--archs", "7.5;9.0;12.1", "--wait"});
  ASSERT_EQ(r.exit_code, 0) << Output(r);
  const std::string id = SubmittedBuildId(r);
  EXPECT_NE(r.stdout_text.find("verification passed"), std::string::npos) << r.stdout_text;
  const std::string pip_hint =
      "pip install --index-url http://" + farm_->coordinator().http_address() +
      "/sm75-sm90-sm121/simple/ demo-cuda-ext==0.1.0+cu130.sm75.sm90.sm121";
  EXPECT_NE(r.stdout_text.find(pip_hint), std::string::npos) << r.stdout_text;
  nlohmann::json build = BuildJson(id);
  EXPECT_EQ(build.value("state", ""), "BUILD_STATE_SUCCEEDED") << build.dump(2);
  auto shards = Shards(build);
  for (const std::string sm : {"sm_75", "sm_90", "sm_121"}) {
    EXPECT_GT(shards[sm].first, 0) << sm << " ran no device compile: " << build.dump(2);
  }
  const std::string filename = build["wheel"].value("filename", "");
  EXPECT_EQ(filename.rfind("demo_cuda_ext-0.1.0+cu130.sm75.sm90.sm121-py3-none-manylinux_2_", 0),
            0u)
      << filename;
  // Every call split: none ran plain nvcc.
  CommandResult shown = Farmctl({"build", id});
  EXPECT_NE(shown.stdout_text.find("none ran plain nvcc"), std::string::npos) << Output(shown);

  // Another arch set of 0.1.0 is another file name, published beside this one.
  CommandResult other = Farmctl({"submit", "demo-0.1.0", "--archs", "8.0", "--dry-run"});
  EXPECT_EQ(other.exit_code, 0) << Output(other);
  EXPECT_THAT(other.stdout_text, HasSubstr("0.1.0+cu130.sm80 (arch-set index /sm80/simple/)"))
      << Output(other);

  // The build ran in the recipe's own environment, made (or reused) before the command.
  CommandResult logs = Farmctl({"logs", id});
  EXPECT_NE(logs.stdout_text.find("python3.11"), std::string::npos) << Output(logs);
  EXPECT_TRUE(logs.stdout_text.find("wheelfarm: making the build environment") !=
                  std::string::npos ||
              logs.stdout_text.find(", reused") != std::string::npos)
      << Output(logs);

  // 2. pip installs it from the built-in index into a fresh venv; the module loads.
  const std::string venv = *dir_ / "venv";
  auto made = RunCommand({"/usr/bin/python3", "-m", "venv", venv}, absl::Minutes(2));
  ASSERT_TRUE(made.ok() && made->exit_code == 0) << (made.ok() ? Output(*made) : "spawn failed");
  auto pip =
      RunCommand({venv + "/bin/pip", "install", "-q", "--disable-pip-version-check", "--index-url",
                  "http://" + farm_->coordinator().http_address() + "/simple/",
                  "demo-cuda-ext==0.1.0+cu130.sm75.sm90.sm121"},
                 absl::Minutes(3));
  ASSERT_TRUE(pip.ok() && pip->exit_code == 0) << (pip.ok() ? Output(*pip) : "spawn failed");
  auto imported = RunCommand(
      {venv + "/bin/python", "-c", "import demo_cuda_ext as d; print(d.compiled_archs())"},
      absl::Minutes(1));
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(imported->stdout_text, "['sm_75', 'sm_90', 'sm_121']\n") << Output(*imported);
  std::string library;
  for (const auto& e : fs::recursive_directory_iterator(venv)) {
    if (e.path().filename() == "libdemo_cuda_ext.so") library = e.path().string();
  }
  ASSERT_FALSE(library.empty());
  CommandResult inspect = Farmctl({"inspect", library});
  ASSERT_EQ(inspect.exit_code, 0) << Output(inspect);
  for (const std::string sm : {"sm_75", "sm_90", "sm_121"}) {
    EXPECT_NE(inspect.stdout_text.find(sm), std::string::npos) << sm << inspect.stdout_text;
  }

  // 3. The same build again, with the coordinator killed and restarted while it builds: it
  // still succeeds, and no device compile runs on the farm (every shard answered by the cache).
  // (Published by the hook: a compile that falls back to local nvcc during the outage embeds
  // nvcc's random temp names, so the bytes may differ, and the index keeps the first file.)
  CommandResult again = Farmctl({"submit", "demo-hook-0.1.0", "--archs", "7.5;9.0;12.1"});
  ASSERT_EQ(again.exit_code, 0) << Output(again);
  const std::string again_id = SubmittedBuildId(again);
  ASSERT_TRUE(
      WaitFor([&] { return BuildJson(again_id).value("state", "") == "BUILD_STATE_BUILDING"; },
              absl::Seconds(60)));
  farm_->StopCoordinator();
  absl::Status restarted = farm_->RestartCoordinator();
  ASSERT_TRUE(restarted.ok()) << restarted;
  CommandResult waited = Farmctl({"watch", again_id});
  ASSERT_EQ(waited.exit_code, 0) << Output(waited) << ReadFile(farm_->coordinator().log_path());
  build = BuildJson(again_id);
  shards = Shards(build);
  for (const std::string sm : {"sm_75", "sm_90", "sm_121"}) {
    // A compile that hit the outage ran plain nvcc locally and is not counted here.
    EXPECT_EQ(shards[sm].second, shards[sm].first) << sm << " compiled again: " << build.dump(2);
  }

  // 4. Adding 10.0 with its PTX compiles sm_100 (and compute_100, which verification then
  // requires); the other archs come from the cache, except translation units whose device
  // code names the arch list (CUB's namespace embeds __CUDA_ARCH_LIST__).
  CommandResult more =
      Farmctl({"submit", "demo-pypi-0.1.0", "--archs", "7.5;9.0;10.0+PTX;12.1", "--wait"});
  ASSERT_EQ(more.exit_code, 0) << Output(more);
  build = BuildJson(SubmittedBuildId(more));
  shards = Shards(build);
  EXPECT_GT(shards["sm_100"].first, 0) << build.dump(2);
  EXPECT_EQ(shards["sm_100"].second, 0) << "sm_100 was never built before: " << build.dump(2);
  for (const std::string sm : {"sm_75", "sm_90", "sm_121"}) {
    EXPECT_GT(shards[sm].second, 0) << sm << " had no cache hit: " << build.dump(2);
  }
  // The hook and pypiserver got the verified, retagged wheel; pip downloads it back.
  const std::string name = build["wheel"].value("filename", "?");
  EXPECT_TRUE(fs::exists(fs::path(*dir_ / "hook-published-4") / name)) << build.dump(2);
  auto fetched = RunCommand(
      {kVenvBin + "/python", "-m", "pip", "download", "--no-deps", "--no-cache-dir",
       "--disable-pip-version-check", "-d", *dir_ / "dl", "--index-url", pypi_url_ + "simple/",
       "demo-cuda-ext==0.1.0+cu130.sm75.sm90.sm100.compute100.sm121"},
      absl::Minutes(2));
  ASSERT_TRUE(fetched.ok() && fetched->exit_code == 0)
      << (fetched.ok() ? Output(*fetched) : "spawn failed") << ReadFile(*dir_ / "pypiserver.log");
  EXPECT_EQ(ReadFile(*dir_ / "dl" + "/" + name), ReadFile(*dir_ / "hook-published-4" + "/" + name));
  EXPECT_EQ(build["published_to"].size(), 2u) << build.dump(2);
}

// Issue 26 item 6: "T4G only" and "T4G + H100" of one version, side by side. Each wheel is
// labelled with its SMs, published beside the other, and pip gets each from its arch set's
// index; the plain /simple/ lists both, for a pinned install.
TEST_F(SubmitTest, TwoArchSetsOfOneVersionArePublishedSideBySideEachWithItsOwnIndex) {
  ASSERT_TRUE(WaitFor([] { return !SomeBuildTreeIsHeld(); }, absl::Seconds(60)))
      << "a build tree under " << *dir_ / "builds"
      << " is still held";
  const std::string http = "http://" + farm_->coordinator().http_address();
  // The dry run names the wheel's version and index before anything compiles.
  CommandResult planned = Farmctl({"submit", "demo-0.1.0", "--archs", "9.0 7.5", "--dry-run"});
  ASSERT_EQ(planned.exit_code, 0) << Output(planned);
  EXPECT_THAT(planned.stdout_text, HasSubstr("wheel      demo-cuda-ext 0.1.0+cu130.sm75.sm90 "
                                             "(arch-set index /sm75-sm90/simple/)"));

  struct Wheel {
    std::string version, index, filename, sha256;
  };
  std::vector<Wheel> wheels;
  for (const auto& [archs, label, set] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"7.5", "cu130.sm75", "sm75"}, {"9.0;7.5", "cu130.sm75.sm90", "sm75-sm90"}}) {
    CommandResult r = Farmctl({"submit", "demo-0.1.0", "--archs", archs, "--wait"});
    ASSERT_EQ(r.exit_code, 0) << Output(r);
    Wheel w{.version = "0.1.0+" + label, .index = http + "/" + set + "/simple/"};
    // The report names the labelled version and the arch set's index; the pip line uses both.
    EXPECT_THAT(r.stdout_text, HasSubstr("\nversion    " + w.version + "\n")) << r.stdout_text;
    EXPECT_THAT(r.stdout_text, HasSubstr("\nindex      " + w.index + "\n")) << r.stdout_text;
    EXPECT_THAT(r.stdout_text,
                HasSubstr("pip install --index-url " + w.index + " demo-cuda-ext==" + w.version))
        << r.stdout_text;
    nlohmann::json build = BuildJson(SubmittedBuildId(r));
    EXPECT_EQ(build.value("state", ""), "BUILD_STATE_SUCCEEDED") << build.dump(2);
    w.filename = build["wheel"].value("filename", "");
    w.sha256 = build["wheel"].value("sha256", "");
    EXPECT_EQ(w.filename.rfind("demo_cuda_ext-" + w.version + "-py3-none-manylinux_2_", 0), 0u)
        << w.filename;
    wheels.push_back(w);
  }

  // pip takes each arch set's wheel from its index, and only that one.
  auto download = [&](const std::string& index, const std::string& requirement,
                      const std::string& into) {
    auto r =
        RunCommand({kVenvBin + "/python", "-m", "pip", "download", "--no-deps", "--no-cache-dir",
                    "--disable-pip-version-check", "-d", into, "--index-url", index, requirement},
                   absl::Minutes(2));
    EXPECT_TRUE(r.ok() && r->exit_code == 0) << (r.ok() ? Output(*r) : "spawn failed");
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(into)) names.push_back(e.path().filename());
    return names;
  };
  for (size_t i = 0; i < wheels.size(); ++i) {
    const std::string into = *dir_ / absl::StrCat("archset-dl-", i);
    EXPECT_EQ(download(wheels[i].index, "demo-cuda-ext", into),
              std::vector<std::string>{wheels[i].filename});
    EXPECT_EQ(DigestOfBytes(ReadFile(into + "/" + wheels[i].filename)).hash(), wheels[i].sha256);
  }
  // pip installs the sm75+sm90 one from its index: pip reports the labelled version, and the
  // module holds those SMs.
  const std::string target = *dir_ / "archset-site";
  auto installed = RunCommand({kVenvBin + "/python", "-m", "pip", "install", "-q", "--no-deps",
                               "--no-cache-dir", "--disable-pip-version-check", "--target", target,
                               "--index-url", wheels[1].index, "demo-cuda-ext"},
                              absl::Minutes(2));
  ASSERT_TRUE(installed.ok() && installed->exit_code == 0)
      << (installed.ok() ? Output(*installed) : "spawn failed");
  auto version = RunCommand({kVenvBin + "/python", "-c",
                             "import importlib.metadata as m, demo_cuda_ext as d\n"
                             "print(m.version('demo-cuda-ext'), d.compiled_archs())"},
                            absl::Minutes(1), {"PYTHONPATH=" + target});
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(version->stdout_text, "0.1.0+cu130.sm75.sm90 ['sm_75', 'sm_90']\n") << Output(*version);

  // The plain /simple/ lists both; a pinned label picks one there.
  CommandResult page = RunCommand({kVenvBin + "/python", "-c",
                                   "import sys, urllib.request\n"
                                   "print(urllib.request.urlopen(sys.argv[1]).read().decode())",
                                   http + "/simple/demo-cuda-ext/"})
                           .value_or(CommandResult{-1, "", "spawn failed"});
  for (const Wheel& w : wheels)
    EXPECT_THAT(page.stdout_text, HasSubstr(w.filename)) << Output(page);
  EXPECT_EQ(download(http + "/simple/", "demo-cuda-ext==" + wheels[0].version,
                     *dir_ / "archset-dl-plain"),
            std::vector<std::string>{wheels[0].filename});
  // An arch set nobody built is no index; a path that is no arch set is a 404, not a path.
  for (const std::string path : {"/sm80/simple/demo-cuda-ext/", "/..%2f..%2fdata/simple/"}) {
    CommandResult missing = RunCommand({kVenvBin + "/python", "-c",
                                        "import sys, urllib.request, urllib.error\n"
                                        "try: urllib.request.urlopen(sys.argv[1]); print(200)\n"
                                        "except urllib.error.HTTPError as e: print(e.code)",
                                        http + path})
                                .value_or(CommandResult{-1, "", "spawn failed"});
    EXPECT_EQ(missing.stdout_text, "404\n") << path << ": " << Output(missing);
  }
}

}  // namespace
}  // namespace farm::testing
