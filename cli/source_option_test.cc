#include "cli/source_option.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libfarm/digest/digest.h"

namespace farm::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class SourceOptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("source_option_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "tree");
    std::ofstream(dir_ / "vision.tar.gz") << "vision bytes";
    std::ofstream(dir_ / "audio.tar.xz") << "audio bytes";
    std::ofstream(dir_ / "notes.txt") << "x";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string P(const std::string& name) const { return (dir_ / name).string(); }
  std::string Error(const std::vector<std::string>& values, const std::vector<std::string>& refs) {
    auto r = ClassifySources(values, refs);
    EXPECT_FALSE(r.ok());
    return r.ok() ? "" : std::string(r.status().message());
  }
  fs::path dir_;
};

TEST_F(SourceOptionTest, NamedValuesGoToTheirPackageAndTheSingleFormToTheOnlyOne) {
  const std::vector<std::string> stack = {"torchvision-0.26.0", "torchaudio-2.11.0"};
  auto r = ClassifySources({"torchvision=" + P("vision.tar.gz"), "torchaudio=" + P("tree")}, stack);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0].recipe, "torchvision");
  EXPECT_TRUE((*r)[0].archive);
  EXPECT_EQ((*r)[1].recipe, "torchaudio");
  EXPECT_FALSE((*r)[1].archive);

  r = ClassifySources({P("audio.tar.xz")}, {"torchaudio-2.11.0"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].recipe, "torchaudio");
  EXPECT_TRUE((*r)[0].archive);
  r = ClassifySources({"torchaudio=" + P("tree")}, {"torchaudio-2.11.0"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[0].recipe, "torchaudio");

  // A path with '=' in it that exists stays a path.
  fs::create_directories(dir_ / "a=b");
  EXPECT_EQ(ParseSourceArg(P("a=b")).recipe, "");
  EXPECT_EQ(ParseSourceArg("x=" + P("a=b")).recipe, "x");
}

TEST_F(SourceOptionTest, RefusesWhatCannotBeSentBeforeAnythingIs) {
  const std::vector<std::string> stack = {"torchvision-0.26.0", "torchaudio-2.11.0"};
  EXPECT_THAT(Error({"pytorch=" + P("tree")}, stack),
              HasSubstr("'pytorch' is not a package of this submit (torchvision, torchaudio)"));
  EXPECT_THAT(Error({"torchvision=" + P("tree"), "torchvision=" + P("vision.tar.gz")}, stack),
              HasSubstr("names 'torchvision' twice"));
  EXPECT_THAT(Error({P("tree")}, stack), HasSubstr("names no package, and this submit has 2"));
  EXPECT_THAT(Error({"torchvision=" + P("missing.tar.gz")}, stack), HasSubstr("does not exist"));
  EXPECT_THAT(Error({"torchvision=" + P("notes.txt")}, stack),
              HasSubstr("is not a source archive"));
  EXPECT_THAT(Error({"torchvision=/dev/null"}, stack),
              HasSubstr("is neither a directory nor a file"));
  EXPECT_THAT(Error({"torchvision="}, stack), HasSubstr("gives no path"));
  for (const std::string& e :
       {Error({P("missing")}, {"demo-0.1.0"}), Error({"torchvision=" + P("notes.txt")}, stack)}) {
    EXPECT_THAT(e, HasSubstr("Nothing was submitted. Fix:"));
  }
}

TEST_F(SourceOptionTest, Sha256SumsBesideAnArchiveMustListItsDigest) {
  const std::string vision = DigestOfBytes("vision bytes").hash();
  bool listed = true;
  auto unlisted = CheckArchiveAgainstSums(P("vision.tar.gz"), &listed);  // no SHA256SUMS
  ASSERT_TRUE(unlisted.ok()) << unlisted.status();
  EXPECT_EQ(*unlisted, vision);
  EXPECT_FALSE(listed);

  std::ofstream(dir_ / "SHA256SUMS") << vision << "  vision.tar.gz\n"
                                     << std::string(64, 'e') << " *audio.tar.xz\n\n";
  auto good = CheckArchiveAgainstSums(P("vision.tar.gz"), &listed);
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_TRUE(listed);
  auto tampered = CheckArchiveAgainstSums(P("audio.tar.xz"), &listed);
  ASSERT_FALSE(tampered.ok());
  EXPECT_EQ(tampered.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(tampered.status().message()),
              HasSubstr("has sha256 " + DigestOfBytes("audio bytes").hash() + ", but " +
                        P("SHA256SUMS") + " lists " + std::string(64, 'e')));
  EXPECT_THAT(std::string(tampered.status().message()), HasSubstr("nothing was submitted. Fix:"));

  auto sums = ParseSha256Sums(std::string(64, 'A') + "  ./x.tar.gz\n");
  ASSERT_TRUE(sums.ok()) << sums.status();
  EXPECT_EQ(sums->at("x.tar.gz"), std::string(64, 'a'));
  EXPECT_FALSE(ParseSha256Sums("abc  x.tar.gz\n").ok());
  std::ofstream(dir_ / "SHA256SUMS") << "not sha256sum output\n";
  auto broken = CheckArchiveAgainstSums(P("vision.tar.gz"), &listed);
  ASSERT_FALSE(broken.ok());
  EXPECT_THAT(std::string(broken.status().message()), HasSubstr("line 1 is not sha256sum's"));
}

}  // namespace
}  // namespace farm::cli
