// Build dependencies from the farm itself and stacks (issue 26, items 2 and 3), end to end on
// loopback: a coordinator with its recipes and 2 workers. A second recipe, `consumer`, needs
// the demo CUDA extension the farm builds (`farm_requirements = ["demo-cuda-ext==0.1.0"]`):
// its build imports demo_cuda_ext from its build environment and prints the version and the
// archs compiled into it, so the log proves the wheel came from the farm's own index for the
// same arch set. Nothing is mocked; builds are for sm_75 only, to keep the run short.
#include <cstdlib>
#include <filesystem>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "tests/support/demo_recipe.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kBuildCommand =
    "command = [\"python{python}\", \"-m\", \"pip\", \"wheel\", \"--no-deps\", "
    "\"--no-build-isolation\",\n           \"--wheel-dir\", \"dist\", \".\"]";
const std::string kRequirements = "requirements = [\"setuptools>=70.1\", \"wheel\"]";
const std::string kPackage = "package = \"demo-cuda-ext\"";

// The consumer's prepare step (no braces: they would be placeholders). It turns the demo tree
// it builds (read-only files: each is replaced, not written) into the project demo-consumer,
// then imports the demo from the build environment, not the source folder beside it, and says
// what it is.
const std::string kConsumerPrepare = R"(import importlib.metadata as m, os, shutil, sys
for name, pairs in (('pyproject.toml', (('demo-cuda-ext', 'demo-consumer'), ('demo_cuda_ext', 'demo_consumer'))), ('setup.py', (('"demo_cuda_ext")', '"demo_consumer")'),))):
    text = open(name).read()
    for old, new in pairs:
        text = text.replace(old, new)
    os.remove(name)
    open(name, 'w').write(text)
shutil.copytree('demo_cuda_ext', 'demo_consumer')
sys.path = [p for p in sys.path if p not in ('', os.getcwd())]
import demo_cuda_ext as d
print('FARM_DEP', m.version('demo-cuda-ext'), d.compiled_archs(), d.__file__.startswith(sys.prefix))
)";

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

class StackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The workers start with a stock environment: no virtualenv on PATH.
    LeaveVirtualenvs();
    dir_ = std::make_unique<TempDir>("stack-test");
    const std::string recipes = *dir_ / "recipes";
    WriteText(recipes + "/demo.toml", DemoRecipe("demo"));
    WriteText(recipes + "/consumer.toml",
              DemoRecipe("consumer",
                         {{kPackage, "package = \"demo-consumer\""},
                          {kRequirements,
                           kRequirements + "\nfarm_requirements = [\"demo-cuda-ext==0.1.0\"]"},
                          {"[build]\n", "[build]\nprepare = [[\"python{python}\", \"-c\", " +
                                            TomlString(kConsumerPrepare) + "]]\n"}}));
    // A package whose build fails, and one that installs its wheel: never built.
    WriteText(recipes + "/broken-base.toml",
              DemoRecipe("broken-base", {{kPackage, "package = \"wheelfarm-broken-base\""},
                                         {kBuildCommand, "command = \"echo broken; exit 3\""}}));
    WriteText(recipes + "/broken-dep.toml",
              DemoRecipe("broken-dep",
                         {{kPackage, "package = \"wheelfarm-broken-dep\""},
                          {kRequirements, kRequirements + "\nfarm_requirements = "
                                                          "[\"wheelfarm-broken-base==0.1.0\"]"},
                          {kBuildCommand, "command = \"echo NEVER-RUNS; exit 3\""}}));
    auto farm = TestFarm::Start(dir_->path(), WheelFarmOptions(dir_->path(), recipes));
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
  }

  CommandResult Farmctl(const std::vector<std::string>& args) { return farm_->Farmctl(args); }

  // The farm's builds by package.
  std::map<std::string, nlohmann::json> BuildsByPackage() {
    CommandResult r = Farmctl({"--json", "builds"});
    std::map<std::string, nlohmann::json> out;
    auto parsed = nlohmann::json::parse(r.stdout_text, nullptr, false);
    for (const auto& b : parsed.value("builds", nlohmann::json::array())) {
      out[b.value("package", "")] = b;
    }
    return out;
  }

  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<TestFarm> farm_;
};

// Bad input: a build dependency the farm's index lacks is refused at plan time, with or
// without --dry-run, naming the wheel it looked for and the fix; nothing is queued.
TEST_F(StackTest, AFarmRequirementTheFarmHasNotBuiltIsRefusedAtPlanTime) {
  for (const bool dry_run : {true, false}) {
    std::vector<std::string> args = {"submit", "consumer-0.1.0", "--archs", "7.5"};
    if (dry_run) args.push_back("--dry-run");
    CommandResult r = Farmctl(args);
    EXPECT_NE(r.exit_code, 0) << Output(r);
    EXPECT_THAT(r.stderr_text,
                HasSubstr("the farm has no demo-cuda-ext==0.1.0 wheel for this build (x86_64, "
                          "CUDA 13.0, arch set sm75, Python 3.11)"))
        << Output(r);
    EXPECT_THAT(r.stderr_text, HasSubstr("the farm has built none of that version")) << Output(r);
    EXPECT_THAT(r.stderr_text,
                HasSubstr("Fix: farmctl submit demo-0.1.0 --archs \"7.5\" first, or submit them "
                          "as a stack: farmctl submit demo-0.1.0 consumer-0.1.0 --archs \"7.5\""))
        << Output(r);
    EXPECT_THAT(r.stderr_text, HasSubstr("or let a package index supply it when the farm has "
                                         "none: add [python.farm_fallback.demo-cuda-ext] to "))
        << Output(r);
  }
  EXPECT_TRUE(BuildsByPackage().empty()) << Farmctl({"builds"}).stdout_text;
}

// --dry-run of a stack shows every package's plan, in build order (the demo first, though
// named second), with each build dependency and where it comes from.
TEST_F(StackTest, DryRunOfAStackShowsEveryPlanInBuildOrder) {
  CommandResult r =
      Farmctl({"submit", "consumer-0.1.0", "demo-0.1.0", "--archs", "7.5", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << Output(r);
  const std::string& out = r.stdout_text;
  EXPECT_THAT(out, HasSubstr("dry run: nothing was queued\nstack of 2 packages for 7.5, in build "
                             "order:"));
  const size_t demo = out.find("== 1/2 demo-0.1.0 ==");
  const size_t consumer = out.find("== 2/2 consumer-0.1.0 ==");
  ASSERT_NE(demo, std::string::npos) << out;
  ASSERT_NE(consumer, std::string::npos) << out;
  EXPECT_LT(demo, consumer) << out;
  // Both plans in full: package, the wheel's version, the shard.
  EXPECT_THAT(
      out.substr(demo, consumer - demo),
      HasSubstr("wheel      demo-cuda-ext 0.1.0+cu130.sm75 (arch-set index /sm75/simple/)"));
  EXPECT_THAT(
      out.substr(consumer),
      HasSubstr("wheel      demo-consumer 0.1.0+cu130.sm75 (arch-set index /sm75/simple/)"));
  EXPECT_THAT(out.substr(consumer),
              HasSubstr("build dep  demo-cuda-ext==0.1.0: farm: demo-cuda-ext 0.1.0+cu130.sm75, "
                        "built first by this stack's demo-0.1.0, from the farm's index "
                        "/sm75/simple/"));
  EXPECT_THAT(out.substr(consumer),
              HasSubstr("build dep  setuptools>=70.1: package index (PyPI, or the build host's "
                        "PIP_INDEX_URL)"));
  EXPECT_EQ(CountOccurrences(out, "sm_75  "), 2) << out;
  EXPECT_TRUE(BuildsByPackage().empty());

  // A stack is refused whole: one package that cannot be planned queues none of it.
  CommandResult bad = Farmctl({"submit", "demo-0.1.0", "nosuch-1.0", "--archs", "7.5"});
  EXPECT_NE(bad.exit_code, 0) << Output(bad);
  EXPECT_THAT(bad.stderr_text, HasSubstr("nosuch-1.0: no recipe named 'nosuch'")) << Output(bad);
  EXPECT_THAT(bad.stderr_text, HasSubstr("nothing of the stack was queued")) << Output(bad);
  CommandResult twice = Farmctl({"submit", "demo-0.1.0", "demo-0.1.0", "--archs", "7.5"});
  EXPECT_NE(twice.exit_code, 0) << Output(twice);
  EXPECT_THAT(twice.stderr_text, HasSubstr("the stack names demo-0.1.0 twice")) << Output(twice);
  EXPECT_TRUE(BuildsByPackage().empty());
}

// The stack test: a stack file naming four packages in no useful order. The demo builds, then
// the consumer, which installs the demo's wheel from the farm's sm75 index; the broken package
// fails and stops only the one that installs it.
TEST_F(StackTest, AStackBuildsInDependencyOrderAndAFailureStopsOnlyItsDependents) {
  const std::string stack = *dir_ / "stack.toml";
  WriteText(stack,
            "# what the test builds\narchs = \"7.5\"\npackages = [\"broken-dep-0.1.0\", "
            "\"consumer-0.1.0\", \"broken-base-0.1.0\", \"demo-0.1.0\"]\n");
  CommandResult r = Farmctl({"submit", "--stack", stack, "--wait", "--interval", "0.5"});
  // Not every package was built: exit 1, with a report of each.
  EXPECT_EQ(r.exit_code, 1) << Output(r);
  EXPECT_THAT(r.stdout_text, HasSubstr("4 builds, in build order")) << Output(r);
  EXPECT_THAT(r.stderr_text, HasSubstr("not every package was built")) << Output(r);

  auto builds = BuildsByPackage();
  ASSERT_EQ(builds.size(), 4u) << Farmctl({"builds"}).stdout_text;
  const nlohmann::json demo = builds["demo-cuda-ext"];
  const nlohmann::json consumer = builds["demo-consumer"];
  const nlohmann::json base = builds["wheelfarm-broken-base"];
  const nlohmann::json dep = builds["wheelfarm-broken-dep"];
  EXPECT_EQ(demo.value("state", ""), "BUILD_STATE_SUCCEEDED") << demo.dump(2);
  EXPECT_EQ(consumer.value("state", ""), "BUILD_STATE_SUCCEEDED") << consumer.dump(2);
  EXPECT_EQ(base.value("state", ""), "BUILD_STATE_FAILED") << base.dump(2);
  EXPECT_EQ(dep.value("state", ""), "BUILD_STATE_FAILED") << dep.dump(2);
  // One stack; each dependent names the build it waited for.
  const std::string stack_id = demo.value("stack_id", "");
  EXPECT_FALSE(stack_id.empty());
  for (const auto* b : {&consumer, &base, &dep}) EXPECT_EQ(b->value("stack_id", ""), stack_id);
  EXPECT_EQ(consumer.value("depends_on", nlohmann::json::array()),
            nlohmann::json::array({demo.value("id", "")}));
  EXPECT_EQ(dep.value("depends_on", nlohmann::json::array()),
            nlohmann::json::array({base.value("id", "")}));
  // The dependent of the failure never ran: no host action, the reason names the failure.
  EXPECT_EQ(dep.value("build_action_id", ""), "") << dep.dump(2);
  EXPECT_THAT(dep.value("reason", ""),
              HasSubstr("not built: its dependency wheelfarm-broken-base 0.1.0 (build " +
                        base.value("id", "") + ") failed"));
  EXPECT_THAT(Farmctl({"logs", dep.value("id", "")}).stdout_text, Not(HasSubstr("NEVER-RUNS")));

  // The consumer waited for the demo's wheel, then installed it from the farm's sm75 index,
  // pinned with its whole label, and its build imported it from its environment.
  const std::string index = "http://" + farm_->coordinator().http_address() + "/sm75/simple/";
  const std::string log = Farmctl({"logs", consumer.value("id", "")}).stdout_text;
  const size_t waited = log.find("wheelfarm: waiting for this stack's demo-0.1.0 to be published");
  const size_t published = log.find("wheelfarm: its dependencies are published");
  const size_t installed = log.find(
      "wheelfarm: farm requirement demo-cuda-ext==0.1.0+cu130.sm75 from the farm's "
      "index " +
      index + " (this stack's demo-0.1.0)");
  ASSERT_NE(waited, std::string::npos) << log;
  ASSERT_NE(published, std::string::npos) << log;
  ASSERT_NE(installed, std::string::npos) << log;
  EXPECT_LT(waited, published);
  EXPECT_LT(published, installed);
  // Only the farm's index, pip told to read no other source of the host's.
  EXPECT_THAT(log, HasSubstr("'--isolated' 'install'")) << log;
  EXPECT_THAT(log, HasSubstr("'--index-url' '" + index + "'")) << log;
  EXPECT_THAT(log, HasSubstr("FARM_DEP 0.1.0+cu130.sm75 ['sm_75'] True")) << log;
  EXPECT_EQ(consumer.value("wheel", nlohmann::json::object())
                .value("filename", "")
                .rfind("demo_consumer-0.1.0+cu130.sm75-", 0),
            0u)
      << consumer.dump(2);
  // Both wheels of the stack are in its arch set's index.
  EXPECT_THAT(r.stdout_text,
              HasSubstr("pip install --index-url " + index + " demo-cuda-ext==0.1.0+cu130.sm75"));
  EXPECT_THAT(r.stdout_text,
              HasSubstr("pip install --index-url " + index + " demo-consumer==0.1.0+cu130.sm75"));

  // Now the farm has the demo for sm75: the consumer alone plans with it, naming the build;
  // for another arch set it is refused, saying what the farm has.
  CommandResult again = Farmctl({"submit", "consumer-0.1.0", "--archs", "7.5", "--dry-run"});
  ASSERT_EQ(again.exit_code, 0) << Output(again);
  EXPECT_THAT(again.stdout_text,
              HasSubstr("build dep  demo-cuda-ext==0.1.0: farm: demo-cuda-ext 0.1.0+cu130.sm75 "
                        "(build " +
                        demo.value("id", "") + "), from the farm's index /sm75/simple/"));
  CommandResult other = Farmctl({"submit", "consumer-0.1.0", "--archs", "9.0", "--dry-run"});
  EXPECT_NE(other.exit_code, 0) << Output(other);
  EXPECT_THAT(other.stderr_text,
              HasSubstr("the farm has 0.1.0+cu130.sm75 (build " + demo.value("id", "") +
                        "): it is for the arch set sm75, this build for sm90"))
      << Output(other);
}

}  // namespace
}  // namespace farm::testing
