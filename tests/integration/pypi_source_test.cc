// Recipes whose source is a PyPI sdist (issue 26 item 5): the worker fetches
// `<project>-<version>.tar.gz` from a real PEP 503 index over loopback (SimpleIndex), checks it
// against the index's sha256, and the build runs in its sandbox without network, its farm-nvcc
// reaching the coordinator through the worker's relayed socket. A sdist whose setup.py
// downloads fails there, naming the step; a sdist the index lists with another hash never
// reaches a build.
#include <filesystem>
#include <regex>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "tests/support/demo_recipe.h"
#include "tests/support/simple_index.h"
#include "tests/support/suite_fixture.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// recipes/deepspeed.toml, its sdist from PyPI itself, with two of its CUDA ops and torch from
// PyPI: 2.11.0, the first PyPI torch built for CUDA 13.0 (2.9.1 there is +cu128, which
// cpp_extension refuses beside nvcc 13, and PyPI has no CUDA 12 nvcc), with its CUDA
// libraries, which `import torch` loads on a host without a GPU too.
std::string DeepSpeedRecipe() {
  std::string text = ReadFile(FARM_SOURCE_DIR "/recipes/deepspeed.toml");
  const std::vector<std::pair<std::string, std::string>> edits = {
      {"version = \"3.10\"", "version = \"3.11\""},
      {"\"msgpack\", \"tqdm\"]", "\"msgpack\", \"tqdm\", \"torch==2.11.0\"]"},
      {"farm_requirements = [\"torch==2.9.1\"]\n", ""},
      {"DS_BUILD_OPS = \"1\"",
       "DS_BUILD_OPS = \"0\"\nDS_BUILD_FUSED_ADAM = \"1\"\nDS_BUILD_TRANSFORMER_INFERENCE = \"1\""},
  };
  for (const auto& [from, to] : edits) {
    EXPECT_NE(text.find(from), std::string::npos) << "recipes/deepspeed.toml changed: " << from;
    text = absl::StrReplaceAll(text, {{from, to}});
  }
  return text;
}

class PypiSourceTest : public SuiteFixture<PypiSourceTest> {
 protected:
  static void SetUpSuite() {
    LeaveVirtualenvs();  // the workers make the recipe's environment themselves
    dir_ = std::make_unique<TempDir>("pypi-source-test");
    // The demo as its sdist, and a copy whose setup.py downloads at build time, as flash-attn's
    // does when it looks for a prebuilt wheel.
    MakeSdist("demo_cuda_ext-0.1.0", "");
    MakeSdist("netgrab_demo-0.1.0",
              "import urllib.request\n"
              "urllib.request.urlopen('https://pypi.org/simple/pip/', timeout=30)\n");
    auto index = SimpleIndex::Start(*dir_ / "index");
    ASSERT_TRUE(index.ok()) << index.status();
    index_ = std::make_unique<SimpleIndex>(std::move(*index));
    index_->Publish("demo-cuda-ext", *dir_ / "demo_cuda_ext-0.1.0.tar.gz");
    index_->Publish("netgrab-demo", *dir_ / "netgrab_demo-0.1.0.tar.gz");
    fs::copy_file(*dir_ / "demo_cuda_ext-0.1.0.tar.gz", *dir_ / "tampered_demo-0.1.0.tar.gz");
    index_->Publish("tampered-demo", *dir_ / "tampered_demo-0.1.0.tar.gz",
                    "#sha256=" + std::string(64, 'a'));

    const std::string recipes = *dir_ / "recipes";
    auto recipe = [&](const std::string& name, const std::string& source) {
      // strict: a call farm-nvcc could not send through the relay would fail the build.
      WriteText(absl::StrCat(recipes, "/", name, ".toml"),
                DemoRecipe(name, {{kDemoRecipeSource, source},
                                  {"job_memory_gib = 1", "job_memory_gib = 1\nstrict_nvcc = true"},
                                  {"[[publish]]\nkind = \"builtin\"\n", ""}}));
    };
    recipe("fromsdist", absl::StrCat("kind = \"pypi\"\nindex = \"", index_->url(), "\""));
    recipe("netgrab", absl::StrCat("kind = \"pypi\"\nproject = \"netgrab-demo\"\nindex = \"",
                                   index_->url(), "\""));
    recipe("tampered", absl::StrCat("kind = \"pypi\"\nproject = \"tampered-demo\"\nindex = \"",
                                    index_->url(), "\""));
    WriteText(recipes + "/deepspeed.toml", DeepSpeedRecipe());

    auto farm = TestFarm::Start(dir_->path(), WheelFarmOptions(dir_->path(), recipes));
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
  }

  static void TearDownSuite() {
    farm_.reset();
    index_.reset();
    dir_.reset();
  }

  // <dir>/<stem>.tar.gz: the demo's tree under <stem>/, `preamble` put before its setup.py.
  static void MakeSdist(const std::string& stem, const std::string& preamble) {
    const fs::path tree = dir_->path() / "sdists" / stem;
    fs::create_directories(tree.parent_path());
    fs::copy(FARM_SOURCE_DIR "/examples/demo-cuda-ext", tree, fs::copy_options::recursive);
    for (const char* leftover : {"build", "dist", "demo_cuda_ext.egg-info"}) {
      fs::remove_all(tree / leftover);
    }
    WriteText((tree / "setup.py").string(), preamble + ReadFile((tree / "setup.py").string()));
    auto r = RunCommand({"tar", "-C", *dir_ / "sdists", "-czf", *dir_ / (stem + ".tar.gz"), stem},
                        absl::Seconds(60));
    ASSERT_TRUE(r.ok() && r->exit_code == 0) << (r.ok() ? r->stderr_text : r.status().ToString());
  }

  static CommandResult Farmctl(const std::vector<std::string>& args,
                               absl::Duration timeout = absl::Seconds(120)) {
    return farm_->Farmctl(args, {}, timeout);
  }

  static std::string Logs(const CommandResult& submitted) {
    return Farmctl({"logs", SubmittedBuildId(submitted)}).stdout_text;
  }

  static inline std::unique_ptr<TempDir> dir_;
  static inline std::unique_ptr<SimpleIndex> index_;
  static inline std::unique_ptr<TestFarm> farm_;
};

TEST_F(PypiSourceTest, TheSdistIsFetchedCheckedAndBuiltWithoutNetworkEveryCallOnTheFarm) {
  CommandResult plan = Farmctl({"submit", "fromsdist-0.1.0", "--archs", "7.5;9.0", "--dry-run"});
  ASSERT_EQ(plan.exit_code, 0) << plan.stdout_text << plan.stderr_text;
  EXPECT_THAT(plan.stdout_text, HasSubstr(absl::StrCat("sdist demo-cuda-ext==0.1.0 from ",
                                                       index_->url(), " (sha256-checked")));

  CommandResult r = Farmctl({"submit", "fromsdist-0.1.0", "--archs", "7.5;9.0", "--wait"});
  const std::string log = Logs(r);
  ASSERT_EQ(r.exit_code, 0) << r.stdout_text << r.stderr_text << log;
  EXPECT_THAT(log, HasSubstr("wheelfarm: fetched demo_cuda_ext-0.1.0.tar.gz ("));
  EXPECT_THAT(log, HasSubstr("as the index lists it) from " +
                             index_->url().substr(0, index_->url().size() - 7)));
  EXPECT_THAT(log, HasSubstr("the build runs without network"));
  EXPECT_THAT(log, HasSubstr("+ 'python' '.wheelfarm/source_archive.py' 'unpack'"));
  // Device compiles went through the relay to both archs' shards; nothing ran plain nvcc.
  CommandResult shown = Farmctl({"build", SubmittedBuildId(r)});
  EXPECT_THAT(shown.stdout_text, HasSubstr("none ran plain nvcc")) << shown.stdout_text;
  auto build = nlohmann::json::parse(Farmctl({"--json", "build", SubmittedBuildId(r)}).stdout_text,
                                     nullptr, false);
  EXPECT_EQ(build.value("state", ""), "BUILD_STATE_SUCCEEDED") << build.dump(2);
  EXPECT_EQ(build["wheel"].value("filename", "").rfind("demo_cuda_ext-0.1.0+cu130.sm75.sm90-", 0),
            0u)
      << build.dump(2);
}

TEST_F(PypiSourceTest, ASdistThatDownloadsAtBuildTimeFailsNamingTheStep) {
  CommandResult r = Farmctl({"submit", "netgrab-0.1.0", "--archs", "9.0", "--wait"});
  EXPECT_NE(r.exit_code, 0) << r.stdout_text;
  const std::string log = Logs(r);
  EXPECT_THAT(log, HasSubstr("wheelfarm: fetched netgrab_demo-0.1.0.tar.gz"));
  // The download itself failed (no route out of the sandbox) ...
  EXPECT_THAT(log, HasSubstr("urlopen")) << log;
  // ... and the build says which step and why.
  EXPECT_THAT(log, HasSubstr("wheelfarm: build step 1 of 1 failed (exit 1): 'python3.11' '-m' "
                             "'pip' 'wheel'"))
      << log;
  EXPECT_THAT(log, HasSubstr("the build ran without network, as every build of a PyPI sdist "
                             "does"))
      << log;
}

TEST_F(PypiSourceTest, AnSdistWhoseHashIsNotTheIndexsNeverReachesABuild) {
  CommandResult r = Farmctl({"submit", "tampered-0.1.0", "--archs", "9.0", "--wait"});
  EXPECT_NE(r.exit_code, 0) << r.stdout_text;
  const std::string log = Logs(r);
  EXPECT_THAT(log, HasSubstr("the index says aaaa")) << log;
  EXPECT_THAT(log, HasSubstr("Fix: check the index or mirror that served it")) << log;
  EXPECT_THAT(log, Not(HasSubstr("source_archive.py' 'unpack'"))) << log;
}

// A maintainer's checkout in place of the sdist: the tree sent is what is built, and the plan
// says what it replaces.
TEST_F(PypiSourceTest, SubmitWithSourceBuildsTheTreeSentInPlaceOfTheSdist) {
  CommandResult r = Farmctl({"submit", "fromsdist-0.1.0", "--archs", "9.0", "--dry-run", "--source",
                             FARM_SOURCE_DIR "/examples/demo-cuda-ext"});
  EXPECT_EQ(r.exit_code, 0) << r.stdout_text << r.stderr_text;
  EXPECT_THAT(r.stdout_text,
              HasSubstr(absl::StrCat(
                  "files (--source, in place of sdist demo-cuda-ext==0.1.0 from ", index_->url())))
      << r.stdout_text;
}

// Issue 26's CI test: DeepSpeed from its PyPI sdist with fused_adam and transformer_inference
// pre-built, through this 2-worker farm: every nvcc call split (10: 1 + 9), verified,
// published, and the wheel's op metadata says both are installed (read from the wheel, as
// ds_report reads it, with no GPU and no torch needed).
TEST_F(PypiSourceTest, DeepSpeedFromItsPypiSdistWithTwoCudaOpsPrebuilt) {
  CommandResult r = Farmctl({"submit", "deepspeed-0.18.9", "--archs", "9.0", "--python", "3.11",
                             "--glibc-max", "2.36", "--wait"},
                            absl::Minutes(20));
  const std::string log = Logs(r);
  ASSERT_EQ(r.exit_code, 0) << r.stdout_text << r.stderr_text << log;
  EXPECT_THAT(log, HasSubstr("wheelfarm: fetched deepspeed-0.18.9.tar.gz ("));
  EXPECT_THAT(log, HasSubstr("from https://files.pythonhosted.org/"));
  EXPECT_THAT(log, HasSubstr("the build runs without network"));
  const std::string id = SubmittedBuildId(r);
  CommandResult shown = Farmctl({"build", id});
  EXPECT_THAT(shown.stdout_text, HasSubstr("10 of 10 calls split; none ran plain nvcc"))
      << shown.stdout_text;
  auto build = nlohmann::json::parse(Farmctl({"--json", "build", id}).stdout_text, nullptr, false);
  EXPECT_EQ(build.value("state", ""), "BUILD_STATE_SUCCEEDED") << build.dump(2);
  const std::string filename = build["wheel"].value("filename", "");
  EXPECT_EQ(filename.rfind("deepspeed-0.18.9+cu130.sm90-", 0), 0u) << filename;
  EXPECT_THAT(r.stdout_text, HasSubstr("verification passed"));

  // The published wheel, from the farm's index, and what ds_report reads of it.
  std::smatch url;
  ASSERT_TRUE(std::regex_search(r.stdout_text, url, std::regex("published  (http://\\S+\\.whl)")))
      << r.stdout_text;
  const std::string wheel = *dir_ / filename;
  auto got = RunCommand({"curl", "-sSf", "-o", wheel, url[1].str()}, absl::Minutes(2));
  ASSERT_TRUE(got.ok() && got->exit_code == 0) << (got.ok() ? got->stderr_text : "");
  auto ops =
      RunCommand({"/usr/bin/python3", "-c",
                  "import sys, zipfile\n"
                  "z = zipfile.ZipFile(sys.argv[1]); names = z.namelist()\n"
                  "info = {}; exec(z.read('deepspeed/git_version_info_installed.py'), info)\n"
                  "ops = info['installed_ops']\n"
                  "print('fused_adam', ops['fused_adam'], 'transformer_inference', "
                  "ops['transformer_inference'], 'fused_lamb', ops.get('fused_lamb'))\n"
                  "print(sorted(n for n in names if n.endswith('.so')))\n",
                  wheel},
                 absl::Seconds(60));
  ASSERT_TRUE(ops.ok() && ops->exit_code == 0) << (ops.ok() ? ops->stderr_text : "");
  EXPECT_THAT(ops->stdout_text, HasSubstr("fused_adam 1 transformer_inference 1 fused_lamb False"))
      << ops->stdout_text;
  EXPECT_THAT(ops->stdout_text, HasSubstr("deepspeed/ops/adam/fused_adam_op"));
  EXPECT_THAT(ops->stdout_text, HasSubstr("transformer_inference_op"));
}

}  // namespace
}  // namespace farm::testing
