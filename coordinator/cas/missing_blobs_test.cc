#include "coordinator/cas/missing_blobs.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "farm/v1/actions.pb.h"
#include "libfarm/digest/digest.h"
#include "libfarm/file_tree/file_tree.h"
#include "tests/support/temp_blob_store.h"

namespace farm::coordinator {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

class MissingBlobsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cas = farm::testing::TempBlobStore::Open("missing_blobs_test", 64 << 20);
    ASSERT_TRUE(cas.ok()) << cas.status();
    cas_ = std::move(*cas);
  }

  farm::v1::Digest Stored(const std::string& bytes) {
    auto d = cas_->blobs()->PutBytes(bytes);
    EXPECT_TRUE(d.ok()) << d.status();
    return d.ok() ? *d : farm::v1::Digest();
  }
  static farm::v1::Digest NotStored(const std::string& bytes) { return DigestOfBytes(bytes); }

  // {hashes of the missing}, or the error's message.
  std::vector<std::string> Missing(const std::vector<farm::v1::Digest>& digests,
                                   const std::vector<farm::v1::Digest>& trees) {
    google::protobuf::RepeatedPtrField<farm::v1::Digest> d(digests.begin(), digests.end());
    google::protobuf::RepeatedPtrField<farm::v1::Digest> t(trees.begin(), trees.end());
    auto missing = MissingBlobs(*cas_->blobs(), d, t);
    if (!missing.ok()) return {std::string(missing.status().message())};
    std::vector<std::string> hashes;
    for (const auto& m : *missing) hashes.push_back(m.hash());
    return hashes;
  }

  std::unique_ptr<farm::testing::TempBlobStore> cas_;
};

farm::v1::InputFile Entry(const std::string& path, const farm::v1::Digest& digest,
                          bool directory = false) {
  farm::v1::InputFile f;
  f.set_path(path);
  *f.mutable_digest() = digest;
  f.set_directory(directory);
  return f;
}

TEST_F(MissingBlobsTest, DigestsByNameAsBefore) {
  const farm::v1::Digest here = Stored("here");
  const farm::v1::Digest gone = NotStored("gone");
  EXPECT_THAT(Missing({here, gone, gone}, {}), ElementsAre(gone.hash()));
}

TEST_F(MissingBlobsTest, AStoredTreeAnswersForWhatItNamesDirectly) {
  const farm::v1::Digest header = Stored("#pragma once\n");
  const farm::v1::Digest lost_header = NotStored("int f();\n");
  const farm::v1::Digest stored_dir = Stored("a subtree");
  const farm::v1::Digest lost_dir = NotStored("another subtree");
  farm::v1::FileTree tree;
  *tree.add_files() = Entry("a.h", header);
  *tree.add_files() = Entry("b.h", lost_header);
  *tree.add_files() = Entry("bits", stored_dir, /*directory=*/true);
  *tree.add_files() = Entry("sys", lost_dir, /*directory=*/true);
  farm::v1::InputFile link;
  link.set_path("asm");
  link.set_symlink_target("asm-generic");
  *tree.add_files() = link;
  const farm::v1::Digest root = Stored(SerializeFileTree(tree));
  EXPECT_THAT(Missing({}, {root}), UnorderedElementsAre(lost_header.hash(), lost_dir.hash()));
  // Named again by digest: still once.
  EXPECT_THAT(Missing({lost_header}, {root}),
              UnorderedElementsAre(lost_header.hash(), lost_dir.hash()));
}

TEST_F(MissingBlobsTest, ATreeTheStoreLacksIsMissingWithNothingBelowItAnswered) {
  farm::v1::FileTree tree;
  *tree.add_files() = Entry("x.h", NotStored("x"));
  const farm::v1::Digest root = NotStored(SerializeFileTree(tree));
  EXPECT_THAT(Missing({}, {root}), ElementsAre(root.hash()));
}

TEST_F(MissingBlobsTest, BadTreesAreRefused) {
  const farm::v1::Digest garbage = Stored(std::string("\xff\xff\xff", 3));
  EXPECT_THAT(Missing({}, {garbage}), ElementsAre(HasSubstr("is not a farm.v1.FileTree")));

  farm::v1::Digest malformed;
  malformed.set_hash("not-a-hash");
  malformed.set_size_bytes(1);
  EXPECT_THAT(Missing({}, {malformed}), ElementsAre(HasSubstr("malformed digest hash")));
  // A stored tree that names a malformed digest.
  farm::v1::FileTree bad_entry;
  *bad_entry.add_files() = Entry("x", malformed);
  EXPECT_THAT(Missing({}, {Stored(SerializeFileTree(bad_entry))}),
              ElementsAre(HasSubstr("malformed digest hash")));

  std::vector<farm::v1::Digest> many(10001, NotStored("t"));
  EXPECT_THAT(Missing({}, many), ElementsAre(HasSubstr("trees; the limit is 10000")));
}

}  // namespace
}  // namespace farm::coordinator
