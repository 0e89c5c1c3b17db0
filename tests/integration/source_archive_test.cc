// Sources that are release archives (issue 44 item 1), end to end on one farm (a coordinator and
// 2 workers over loopback): recipes with `kind = "archive"`, an archive uploaded in their place
// with `farmctl submit --source NAME=PATH` (a stack's package), checked against a SHA256SUMS
// beside it by farmctl and against the recipe's sha256 by the coordinator before anything is
// queued; and archives the build host fetches itself from a local HTTP server, with a good and
// a bad digest. The archives are the demo tree tarred here. Every build is for one arch, each
// case its own (a wheel name is one wheel: the same arch set from two sources would collide).
#include <filesystem>
#include <fstream>
#include <regex>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "libfarm/digest/digest.h"
#include "tests/support/demo_recipe.h"
#include "tests/support/simple_index.h"
#include "tests/support/suite_fixture.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// Nothing listens there: a build of such a recipe gets its source from --source or fails.
const char kUnreachable[] = "http://127.0.0.1:1/demo_cuda_ext-{version}.tar.gz";

class SourceArchiveTest : public SuiteFixture<SourceArchiveTest> {
 protected:
  static void SetUpSuite() {
    LeaveVirtualenvs();  // the workers make the recipe's environment themselves
    dir_ = std::make_unique<TempDir>("source-archive-test");
    // The demo as its release archive, with a SHA256SUMS beside it that lists it; a copy
    // with other bytes whose SHA256SUMS lists the good digest; one with a member that
    // climbs out of the tree.
    good_ = MakeArchive("good");
    good_sha256_ = Sha256(good_);
    WriteText(*dir_ / "good/SHA256SUMS",
              absl::StrCat(good_sha256_, "  ", good_.filename().string(), "\n"));
    tampered_ = dir_->path() / "tampered" / good_.filename();
    fs::create_directories(tampered_.parent_path());
    fs::copy_file(good_, tampered_);
    {
      std::ofstream out(tampered_, std::ios::app | std::ios::binary);
      out << "appended";
    }
    WriteText(*dir_ / "tampered/SHA256SUMS",
              absl::StrCat(good_sha256_, "  ", good_.filename().string(), "\n"));
    evil_ = dir_->path() / "evil" / "evil-0.1.0.tar.gz";
    fs::create_directories(evil_.parent_path());
    auto made = RunCommand({"/usr/bin/python3", "-c", R"(
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w:gz") as t:
    for name in ("demo-0.1.0/setup.py", "demo-0.1.0/../../evil"):
        i = tarfile.TarInfo(name); i.size = 1; t.addfile(i, io.BytesIO(b"x"))
)",
                            evil_.string()},
                           absl::Seconds(60));
    ASSERT_TRUE(made.ok() && made->exit_code == 0)
        << (made.ok() ? made->stderr_text : made.status().ToString());

    // The build host's own fetches come from here.
    auto server = SimpleIndex::Start(*dir_ / "http");
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::make_unique<SimpleIndex>(std::move(*server));
    server_->Publish("demo", good_);
    server_->Publish("evil", evil_);
    const std::string files = server_->url().substr(0, server_->url().size() - 7) + "files/";
    fetch_url_ = files + good_.filename().string();

    const std::string recipes = *dir_ / "recipes";
    auto recipe = [&](const std::string& name, const std::string& source,
                      const std::string& versions = "versions = [\"0.1.0\"]") {
      WriteText(absl::StrCat(recipes, "/", name, ".toml"),
                DemoRecipe(name, {{kDemoRecipeSource, source},
                                  {"versions = [\"0.1.0\"]", versions},
                                  {"[[publish]]\nkind = \"builtin\"\n", ""}}));
    };
    auto archive = [](const std::string& url, const std::string& sha256) {
      return absl::StrCat("kind = \"archive\"\nurl = \"", url, "\"",
                          sha256.empty() ? "" : absl::StrCat("\nsha256 = \"", sha256, "\""));
    };
    recipe("fromarchive", archive(kUnreachable, ""));
    // Per version: 0.2.0 names the demo archive's digest, 0.3.0 another.
    recipe(
        "pinned", kDemoRecipeSource,
        absl::StrCat("versions = [{ version = \"0.2.0\", source = { kind = \"archive\", url = \"",
                     kUnreachable, "\", sha256 = \"", good_sha256_,
                     "\" } },\n            { version = \"0.3.0\", source = { kind = "
                     "\"archive\", url = \"",
                     kUnreachable, "\", sha256 = \"", std::string(64, '0'), "\" } }]"));
    recipe("fetched", archive(fetch_url_, good_sha256_));
    recipe("badfetch", archive(fetch_url_, std::string(64, '0')));
    recipe("hostile", archive(files + evil_.filename().string(), ""));

    auto farm = TestFarm::Start(dir_->path(), WheelFarmOptions(dir_->path(), recipes));
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
  }

  static void TearDownSuite() {
    farm_.reset();
    server_.reset();
    dir_.reset();
  }

  // <dir>/<where>/demo_cuda_ext-0.1.0.tar.gz: the demo's tree under demo_cuda_ext-0.1.0/.
  static fs::path MakeArchive(const std::string& where) {
    const std::string stem = "demo_cuda_ext-0.1.0";
    const fs::path trees = dir_->path() / "trees" / where;
    const fs::path tree = trees / stem;
    fs::create_directories(trees);
    fs::copy(FARM_SOURCE_DIR "/examples/demo-cuda-ext", tree, fs::copy_options::recursive);
    for (const char* leftover : {"build", "dist", "demo_cuda_ext.egg-info"}) {
      fs::remove_all(tree / leftover);
    }
    const fs::path archive = dir_->path() / where / (stem + ".tar.gz");
    fs::create_directories(archive.parent_path());
    auto r = RunCommand({"tar", "-C", trees.string(), "-czf", archive.string(), stem},
                        absl::Seconds(60));
    EXPECT_TRUE(r.ok() && r->exit_code == 0) << (r.ok() ? r->stderr_text : r.status().ToString());
    return archive;
  }

  static std::string Sha256(const fs::path& file) {
    auto digest = DigestOfFile(file.string());
    EXPECT_TRUE(digest.ok()) << digest.status();
    return digest.ok() ? digest->hash() : "";
  }

  static CommandResult Farmctl(const std::vector<std::string>& args,
                               absl::Duration timeout = absl::Seconds(300)) {
    return farm_->Farmctl(args, {}, timeout);
  }

  static std::string Logs(const std::string& id) { return Farmctl({"logs", id}).stdout_text; }

  static nlohmann::json Build(const std::string& id) {
    return nlohmann::json::parse(Farmctl({"--json", "build", id}).stdout_text, nullptr, false);
  }

  // How many builds the coordinator has: a refusal must add none.
  static size_t BuildCount() {
    auto listed = nlohmann::json::parse(
        Farmctl({"--json", "builds", "--limit", "1000"}).stdout_text, nullptr, false);
    return listed.is_object() && listed.contains("builds") ? listed["builds"].size() : 0;
  }

  static inline std::unique_ptr<TempDir> dir_;
  static inline std::unique_ptr<SimpleIndex> server_;
  static inline std::unique_ptr<TestFarm> farm_;
  static inline fs::path good_, tampered_, evil_;
  static inline std::string good_sha256_, fetch_url_;
};

TEST_F(SourceArchiveTest, AnArchiveGivenByRecipeNameIsBuiltInAStackAndThePlanNamesIt) {
  // Two packages, one archive each, planned: each plan says what it builds in place of what.
  CommandResult plan = Farmctl({"submit", "fromarchive-0.1.0", "pinned-0.2.0", "--archs", "8.0",
                                "--dry-run", "--source", "fromarchive=" + good_.string(),
                                "--source", "pinned=" + good_.string()});
  ASSERT_EQ(plan.exit_code, 0) << Output(plan);
  const std::string archive = absl::StrCat("archive demo_cuda_ext-0.1.0.tar.gz (");
  EXPECT_THAT(plan.stdout_text,
              HasSubstr(absl::StrCat(", sha256 ", good_sha256_,
                                     "; built without network) (--source, in place of archive "
                                     "http://127.0.0.1:1/demo_cuda_ext-0.1.0.tar.gz (no sha256")))
      << plan.stdout_text;
  EXPECT_THAT(plan.stdout_text,
              HasSubstr(absl::StrCat(", sha256 ", good_sha256_, " as the recipe names it")))
      << plan.stdout_text;
  EXPECT_THAT(plan.stderr_text, HasSubstr("as SHA256SUMS beside it lists it")) << plan.stderr_text;

  // A stack of one (a stack file), built from the archive with its URL unreachable.
  const std::string stack = *dir_ / "one.toml";
  WriteText(stack, "packages = [\"fromarchive-0.1.0\"]\narchs = \"8.0\"\n");
  CommandResult r =
      Farmctl({"submit", "--stack", stack, "--source", "fromarchive=" + good_.string(), "--wait"},
              absl::Minutes(15));
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(r.stdout_text, m, std::regex("fromarchive-0\\.1\\.0  build (\\S+)")))
      << Output(r);
  const std::string id = m[1].str();
  const std::string log = Logs(id);
  ASSERT_EQ(r.exit_code, 0) << Output(r) << log;
  EXPECT_THAT(log, HasSubstr(absl::StrCat("wheelfarm: the source is the archive farmctl submit "
                                          "--source sent (",
                                          fs::file_size(good_), " bytes, sha256 ", good_sha256_)));
  EXPECT_THAT(log, HasSubstr("+ 'python' '.wheelfarm/source_archive.py' 'unpack' "
                             "'.wheelfarm/source-archive' 'src'"));
  EXPECT_THAT(log, HasSubstr("the build runs without network (its source is a source archive)"));
  const nlohmann::json build = Build(id);
  EXPECT_EQ(build.value("state", ""), "BUILD_STATE_SUCCEEDED") << build.dump(2);
  EXPECT_THAT(build["plan"].value("source", ""), HasSubstr(archive + "")) << build.dump(2);
  EXPECT_THAT(build["plan"].value("source", ""), HasSubstr(good_sha256_));
  EXPECT_EQ(build["wheel"].value("filename", "").rfind("demo_cuda_ext-0.1.0+cu130.sm80-", 0), 0u)
      << build.dump(2);

  // The same archive again is the same build (a rebuild with the caches warm), not a wheel
  // name taken by another source: the check reads the source this submission sends.
  CommandResult again = Farmctl({"submit", "fromarchive-0.1.0", "--archs", "8.0", "--dry-run",
                                 "--source", "fromarchive=" + good_.string()});
  EXPECT_EQ(again.exit_code, 0) << Output(again);
  EXPECT_THAT(again.stderr_text, Not(HasSubstr("is already build"))) << Output(again);
}

TEST_F(SourceArchiveTest, AnArchiveThatIsNotWhatSha256SumsListsIsRefusedBeforeAnythingIsSent) {
  const size_t before = BuildCount();
  CommandResult r = Farmctl({"submit", "fromarchive-0.1.0", "--archs", "8.6", "--source",
                             "fromarchive=" + tampered_.string()});
  EXPECT_NE(r.exit_code, 0) << Output(r);
  EXPECT_THAT(r.stderr_text,
              HasSubstr(absl::StrCat("has sha256 ", Sha256(tampered_), ", but ",
                                     (tampered_.parent_path() / "SHA256SUMS").string(), " lists ",
                                     good_sha256_)));
  EXPECT_THAT(r.stderr_text, HasSubstr("nothing was submitted. Fix:"));
  EXPECT_EQ(BuildCount(), before);
  // Not even uploaded.
  CommandResult stat =
      Farmctl({"cas", "stat", absl::StrCat(Sha256(tampered_), "/", fs::file_size(tampered_))});
  EXPECT_THAT(stat.stderr_text, HasSubstr("is not in the CAS")) << Output(stat);
}

TEST_F(SourceArchiveTest, AnUploadWithoutTheRecipesSha256IsRefusedBeforeAnyBuildIsQueued) {
  const size_t before = BuildCount();
  CommandResult r =
      Farmctl({"submit", "pinned-0.3.0", "--archs", "8.0", "--source", good_.string()});
  EXPECT_NE(r.exit_code, 0) << Output(r);
  EXPECT_THAT(r.stderr_text, HasSubstr(absl::StrCat("has sha256 ", good_sha256_,
                                                    ", but recipe 'pinned' 0.3.0 "
                                                    "names sha256 ",
                                                    std::string(64, '0'))))
      << Output(r);
  EXPECT_THAT(r.stderr_text, HasSubstr("nothing was queued. Fix:"));
  EXPECT_EQ(BuildCount(), before);
}

TEST_F(SourceArchiveTest, TheBuildHostFetchesTheRecipesArchiveAndChecksItsSha256) {
  CommandResult r =
      Farmctl({"submit", "fetched-0.1.0", "--archs", "9.0", "--wait"}, absl::Minutes(15));
  std::string log = Logs(SubmittedBuildId(r));
  ASSERT_EQ(r.exit_code, 0) << Output(r) << log;
  EXPECT_THAT(log, HasSubstr(absl::StrCat("wheelfarm: fetched demo_cuda_ext-0.1.0.tar.gz (",
                                          fs::file_size(good_), " bytes, sha256 ", good_sha256_,
                                          " as the recipe names it) from ", fetch_url_)));
  EXPECT_THAT(log, HasSubstr("the build runs without network"));

  r = Farmctl({"submit", "badfetch-0.1.0", "--archs", "7.5", "--wait"}, absl::Minutes(5));
  log = Logs(SubmittedBuildId(r));
  EXPECT_NE(r.exit_code, 0) << Output(r);
  EXPECT_THAT(log, HasSubstr(absl::StrCat("has sha256 ", good_sha256_, ", the recipe says ",
                                          std::string(64, '0'), ": refused")))
      << log;
  EXPECT_THAT(log, Not(HasSubstr("source_archive.py' 'unpack'"))) << log;
}

TEST_F(SourceArchiveTest, AMemberThatClimbsOutIsRefusedFetchedOrUploaded) {
  // Fetched without a sha256 in the recipe: the log says what the bytes hash to.
  CommandResult r =
      Farmctl({"submit", "hostile-0.1.0", "--archs", "8.6", "--wait"}, absl::Minutes(5));
  std::string log = Logs(SubmittedBuildId(r));
  EXPECT_NE(r.exit_code, 0) << Output(r);
  EXPECT_THAT(log, HasSubstr(absl::StrCat("sha256 ", Sha256(evil_),
                                          "; the recipe names no sha256, so nothing was checked")))
      << log;
  EXPECT_THAT(log, HasSubstr("names a path outside the tree")) << log;

  r = Farmctl({"submit", "fromarchive-0.1.0", "--archs", "12.0", "--wait", "--source",
               "fromarchive=" + evil_.string()},
              absl::Minutes(5));
  log = Logs(SubmittedBuildId(r));
  EXPECT_NE(r.exit_code, 0) << Output(r);
  EXPECT_THAT(log, HasSubstr("names a path outside the tree")) << log;
}

TEST_F(SourceArchiveTest, SourceValuesThatCannotBeSentAreRefusedNamingTheFix) {
  const size_t before = BuildCount();
  const std::string notes = *dir_ / "notes.txt";
  WriteText(notes, "not an archive");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"fromarchive-0.1.0", "--source", *dir_ / "missing.tar.gz"}, "does not exist"},
      {{"fromarchive-0.1.0", "--source", notes}, "is not a source archive"},
      {{"fromarchive-0.1.0", "pinned-0.2.0", "--source", "torchvision=" + good_.string()},
       "'torchvision' is not a package of this submit (fromarchive, pinned)"},
      {{"fromarchive-0.1.0", "pinned-0.2.0", "--source", "pinned=" + good_.string(), "--source",
        "pinned=" + good_.string()},
       "names 'pinned' twice"},
      {{"fromarchive-0.1.0", "pinned-0.2.0", "--source", good_.string()}, "names no package"},
  };
  for (const auto& [args, message] : cases) {
    std::vector<std::string> argv = {"submit", "--archs", "8.0"};
    argv.insert(argv.end(), args.begin(), args.end());
    CommandResult r = Farmctl(argv);
    EXPECT_NE(r.exit_code, 0) << Output(r);
    EXPECT_THAT(r.stderr_text, HasSubstr(message)) << Output(r);
    EXPECT_THAT(r.stderr_text, HasSubstr("Fix:")) << Output(r);
  }
  EXPECT_EQ(BuildCount(), before);
}

}  // namespace
}  // namespace farm::testing
