#include "coordinator/wheels/source_uploads.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "coordinator/state_store.h"
#include "libfarm/digest/digest.h"
#include "libfarm/recipes/source_archive_name.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

farm::v1::SourceUpload Tree(const std::string& recipe) {
  farm::v1::SourceUpload upload;
  upload.set_recipe(recipe);
  upload.add_files()->set_path("setup.py");
  return upload;
}

farm::v1::SourceUpload Archive(const std::string& recipe, const std::string& name) {
  farm::v1::SourceUpload upload;
  upload.set_recipe(recipe);
  upload.mutable_archive()->set_file_name(name);
  return upload;
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST(SourceUploadsByRecipeTest, EachUploadNamesOnePackageOfTheSubmitOnce) {
  farm::v1::SubmitBuildRequest request;
  request.add_stack("torchvision-0.26.0");
  request.add_stack("torchaudio-2.11.0");
  const std::vector<std::string> refs(request.stack().begin(), request.stack().end());
  request.set_has_source(true);
  *request.add_sources() = Archive("torchvision", "a.tar.gz");
  *request.add_sources() = Tree("torchaudio");
  auto uploads = SourceUploadsByRecipe(request, refs);
  ASSERT_TRUE(uploads.ok()) << uploads.status();
  ASSERT_EQ(uploads->size(), 2u);
  EXPECT_TRUE(uploads->at("torchvision").has_archive());
  EXPECT_EQ(uploads->at("torchaudio").files_size(), 1);

  auto stranger = request;
  *stranger.add_sources() = Tree("pytorch");
  auto r = SourceUploadsByRecipe(stranger, refs);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(r.status()),
              HasSubstr("'pytorch', which is not a package of this submit (torchvision, "
                        "torchaudio). Fix:"));

  auto twice = request;
  *twice.add_sources() = Tree("torchvision");
  r = SourceUploadsByRecipe(twice, refs);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(Message(r.status()), HasSubstr("names 'torchvision' twice"));

  auto both = request;
  *both.mutable_sources(1)->mutable_archive() = farm::v1::SourceArchive();
  r = SourceUploadsByRecipe(both, refs);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(Message(r.status()), HasSubstr("both a tree and an archive"));

  auto neither = request;
  neither.mutable_sources(1)->clear_files();
  r = SourceUploadsByRecipe(neither, refs);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(Message(r.status()), HasSubstr("neither a tree nor an archive"));

  // A name carrying control bytes is shown escaped.
  auto odd = request;
  odd.mutable_sources(0)->set_recipe("x\n");
  r = SourceUploadsByRecipe(odd, refs);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(Message(r.status()), HasSubstr("'x\\n'"));
}

TEST(SourceUploadsByRecipeTest, AnUnnamedTreeIsTheOnePackagesAndNoStacks) {
  farm::v1::SubmitBuildRequest single;
  single.set_recipe("demo-0.1.0");
  single.set_has_source(true);
  single.add_source()->set_path("setup.py");
  auto uploads = SourceUploadsByRecipe(single, {"demo-0.1.0"});
  ASSERT_TRUE(uploads.ok()) << uploads.status();
  ASSERT_EQ(uploads->count("demo"), 1u);
  EXPECT_EQ(uploads->at("demo").files(0).path(), "setup.py");

  farm::v1::SubmitBuildRequest none;
  none.set_recipe("demo-0.1.0");
  uploads = SourceUploadsByRecipe(none, {"demo-0.1.0"});
  ASSERT_TRUE(uploads.ok());
  EXPECT_TRUE(uploads->empty());

  farm::v1::SubmitBuildRequest stack = single;
  stack.clear_recipe();
  stack.add_stack("demo-0.1.0");
  stack.add_stack("other-1.0");
  auto r = SourceUploadsByRecipe(stack, {"demo-0.1.0", "other-1.0"});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(Message(r.status()), HasSubstr("--source A=DIR"));

  farm::v1::SubmitBuildRequest mixed = single;
  *mixed.add_sources() = Tree("demo");
  r = SourceUploadsByRecipe(mixed, {"demo-0.1.0"});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(Message(r.status()), HasSubstr("both an unnamed source tree and named sources"));
}

class CheckUploadedArchiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("source_uploads_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto state = StateStore::Open((dir_ / "state").string());
    ASSERT_TRUE(state.ok()) << state.status();
    state_ = std::move(*state);
    auto blobs = BlobStore::Open((dir_ / "cas").string(), state_.get(), 1 << 20);
    ASSERT_TRUE(blobs.ok()) << blobs.status();
    blobs_ = std::move(*blobs);
    recipe_.name = "torchvision";
    recipe_.file = "/recipes/torchvision.toml";
    version_.version = "0.26.0";
    version_.source.kind = RecipeSource::Kind::kArchive;
    version_.source.archive_url = "https://example.com/v{version}.tar.gz";
  }
  void TearDown() override {
    blobs_.reset();
    state_.reset();
    fs::remove_all(dir_);
  }
  farm::v1::SourceArchive Upload(const std::string& name, const std::string& bytes) {
    auto digest = blobs_->PutBytes(bytes);
    EXPECT_TRUE(digest.ok()) << digest.status();
    farm::v1::SourceArchive archive;
    archive.set_file_name(name);
    if (digest.ok()) *archive.mutable_digest() = *digest;
    return archive;
  }

  fs::path dir_;
  std::unique_ptr<StateStore> state_;
  std::unique_ptr<BlobStore> blobs_;
  Recipe recipe_;
  RecipeVersion version_;
};

TEST_F(CheckUploadedArchiveTest, AnArchiveIsTheBuildsInputWithTheSha256OfItsBytes) {
  const auto archive = Upload("vision-0.26.0.tar.gz", "archive bytes");
  const std::string sha256 = DigestOfBytes("archive bytes").hash();
  auto checked = CheckUploadedArchive(archive, recipe_, version_, blobs_.get());
  ASSERT_TRUE(checked.ok()) << checked.status();
  EXPECT_EQ(checked->input.path(), kSourceArchiveInput);
  EXPECT_EQ(checked->input.digest().hash(), sha256);
  EXPECT_EQ(checked->sha256, sha256);
  EXPECT_EQ(checked->size, 13u);
  EXPECT_FALSE(checked->recipe_sha256);
  EXPECT_EQ(DescribeUploadedArchive(*checked, version_, "archive https://x"),
            "archive vision-0.26.0.tar.gz (13 B, sha256 " + sha256 +
                "; built without network) (--source, in place of archive https://x)");

  version_.source.archive_sha256 = sha256;  // the recipe's, matching
  checked = CheckUploadedArchive(archive, recipe_, version_, blobs_.get());
  ASSERT_TRUE(checked.ok()) << checked.status();
  EXPECT_TRUE(checked->recipe_sha256);
  EXPECT_THAT(DescribeUploadedArchive(*checked, version_, "x"),
              HasSubstr(sha256 + " as the recipe names it"));
}

TEST_F(CheckUploadedArchiveTest, ARecipesSha256ThatTheBytesDoNotHaveRefusesNamingBoth) {
  const auto archive = Upload("vision-0.26.0.tar.gz", "tampered bytes");
  version_.source.archive_sha256 = std::string(64, 'c');
  auto r = CheckUploadedArchive(archive, recipe_, version_, blobs_.get());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(r.status()),
              HasSubstr("has sha256 " + DigestOfBytes("tampered bytes").hash() +
                        ", but recipe 'torchvision' 0.26.0 names sha256 " + std::string(64, 'c')));
  EXPECT_THAT(Message(r.status()), HasSubstr("nothing was queued. Fix:"));

  // A git recipe has no sha256 to compare: the archive replaces it as a tree would.
  version_.source = RecipeSource{.kind = RecipeSource::Kind::kGit};
  EXPECT_TRUE(CheckUploadedArchive(archive, recipe_, version_, blobs_.get()).ok());
}

TEST_F(CheckUploadedArchiveTest, TheClientsNameAndDigestAreChecked) {
  auto archive = Upload("vision.tar.gz", "bytes");
  auto bad_name = archive;
  bad_name.set_file_name("../vision.tar.gz");
  auto r = CheckUploadedArchive(bad_name, recipe_, version_, blobs_.get());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  bad_name.set_file_name("vision.zip");
  r = CheckUploadedArchive(bad_name, recipe_, version_, blobs_.get());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(Message(r.status()), HasSubstr("is not a source archive"));

  auto missing = archive;
  missing.mutable_digest()->set_hash(std::string(64, 'd'));
  r = CheckUploadedArchive(missing, recipe_, version_, blobs_.get());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(Message(r.status()), HasSubstr("is not in the CAS"));

  auto other_size = archive;
  other_size.mutable_digest()->set_size_bytes(1);
  EXPECT_FALSE(CheckUploadedArchive(other_size, recipe_, version_, blobs_.get()).ok());

  auto bad_hash = archive;
  bad_hash.mutable_digest()->set_hash("../../etc/passwd");
  r = CheckUploadedArchive(bad_hash, recipe_, version_, blobs_.get());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);

  // Bytes changed in the store since they were hashed on upload: hashed again, refused.
  auto path = blobs_->PathOf(archive.digest());
  ASSERT_TRUE(path.ok());
  fs::permissions(*path, fs::perms::owner_write, fs::perm_options::add);
  std::ofstream(*path, std::ios::trunc) << "BYTES";
  r = CheckUploadedArchive(archive, recipe_, version_, blobs_.get());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace farm::coordinator
