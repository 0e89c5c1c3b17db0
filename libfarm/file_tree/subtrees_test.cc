#include "libfarm/file_tree/subtrees.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "libfarm/digest/digest.h"
#include "libfarm/file_tree/file_tree.h"
#include "tests/support/file_tree_entries.h"

namespace farm {
namespace {

using ::farm::testing::TreeDirectory;
using ::farm::testing::TreeFile;
using ::farm::testing::TreeLink;
using ::farm::testing::TreeOf;
using ::testing::HasSubstr;

// A CAS of tree blobs, counting what is read from it.
class Blobs {
 public:
  void Add(const SplitFileTree& split) {
    blobs_[split.root.hash()] = split.root_bytes;
    for (const auto& [digest, bytes] : split.subtrees) blobs_[digest.hash()] = bytes;
  }
  farm::v1::Digest Add(const farm::v1::FileTree& tree) {
    const std::string bytes = SerializeFileTree(tree);
    farm::v1::Digest d = DigestOfBytes(bytes);
    blobs_[d.hash()] = bytes;
    return d;
  }
  absl::StatusOr<farm::v1::FileTree> Expand(const farm::v1::Digest& root) {
    return ExpandFileTree(root, [this](const farm::v1::Digest& d, int64_t max) {
      ++reads_;
      auto it = blobs_.find(d.hash());
      if (it == blobs_.end()) return absl::StatusOr<std::string>(absl::NotFoundError("no blob"));
      if (static_cast<int64_t>(it->second.size()) > max) {
        return absl::StatusOr<std::string>(absl::InvalidArgumentError("over the bound"));
      }
      return absl::StatusOr<std::string>(it->second);
    });
  }
  int reads() const { return reads_; }

 private:
  std::map<std::string, std::string> blobs_;
  int reads_ = 0;
};

farm::v1::InputFile SubtreeEntry(const std::string& path, const farm::v1::Digest& digest) {
  farm::v1::InputFile f = TreeDirectory(path);
  *f.mutable_digest() = digest;
  return f;
}

// A compile's headers: the system's and a project's, a link, an empty directory.
farm::v1::FileTree UnitTree(const std::string& source, char source_fill) {
  return TreeOf({TreeFile("usr/include/stdio.h", 'b'), TreeFile("usr/include/bits/types.h", 'c', 7),
                 TreeFile("usr/include/bits/wordsize.h", 'd'), TreeLink("lib64", "usr/lib64"),
                 TreeDirectory("usr/lib/gcc/x86_64-linux-gnu/12/include-fixed"),
                 TreeFile("usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h", 'e'),
                 TreeFile(absl::StrCat("src/project/", source), source_fill),
                 TreeFile("src/project/include/project/api.h", 'f')});
}

TEST(SubtreesTest, ExpandingTheSplitGivesTheFlatTreeBack) {
  const farm::v1::FileTree flat = UnitTree("a.cc", '1');
  const SplitFileTree split = SplitIntoSubtrees(flat);
  // usr, usr/include, usr/include/bits, usr/lib, .../12, .../12/include, src, src/project,
  // src/project/include, src/project/include/project (x86_64-linux-gnu and gcc too).
  EXPECT_EQ(split.subtrees.size(), 12u);
  Blobs blobs;
  blobs.Add(split);
  auto expanded = blobs.Expand(split.root);
  ASSERT_TRUE(expanded.ok()) << expanded.status();
  EXPECT_EQ(SerializeFileTree(*expanded), SerializeFileTree(flat));
  // The root names only the top directories and the link.
  farm::v1::FileTree top;
  ASSERT_TRUE(top.ParseFromString(split.root_bytes));
  EXPECT_FALSE(ValidateFileTree(top).ok());  // a subtree entry is not a flat tree's directory
  EXPECT_EQ(top.files_size(), 3);            // lib64, src, usr
}

TEST(SubtreesTest, UnitsReadingTheSameHeadersShareTheirDirectories) {
  const SplitFileTree one = SplitIntoSubtrees(UnitTree("a.cc", '1'));
  const SplitFileTree two = SplitIntoSubtrees(UnitTree("b.cc", '2'));
  EXPECT_NE(one.root.hash(), two.root.hash());
  std::map<std::string, int> seen;
  for (const auto* split : {&one, &two}) {
    for (const auto& [digest, bytes] : split->subtrees) ++seen[digest.hash()];
  }
  int shared = 0;
  for (const auto& [hash, count] : seen) shared += count == 2 ? 1 : 0;
  // Only src and src/project differ: the system's directories and the project's include
  // directory are the same blobs.
  EXPECT_EQ(shared, 10);
  EXPECT_EQ(seen.size(), 14u);
}

TEST(SubtreesTest, AnEmptyDirectoryEntryWithEntriesBelowItIsItsSubtree) {
  const farm::v1::FileTree flat =
      TreeOf({TreeDirectory("opt/cuda/bin"), TreeFile("opt/cuda/bin/nvcc")});
  Blobs blobs;
  const SplitFileTree split = SplitIntoSubtrees(flat);
  blobs.Add(split);
  auto expanded = blobs.Expand(split.root);
  ASSERT_TRUE(expanded.ok()) << expanded.status();
  ASSERT_EQ(expanded->files_size(), 1);
  EXPECT_EQ(expanded->files(0).path(), "opt/cuda/bin/nvcc");
}

TEST(SubtreesTest, AFlatTreeThatIsNotValidIsRefused) {
  Blobs blobs;
  auto expanded = blobs.Expand(blobs.Add(TreeOf({TreeFile("/abs")})));
  EXPECT_EQ(expanded.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(SubtreesTest, AFlatTreeExpandsAsItIs) {
  const farm::v1::FileTree flat = TreeOf({TreeFile("b"), TreeFile("a/x", 'b'), TreeDirectory("c")});
  Blobs blobs;
  auto expanded = blobs.Expand(blobs.Add(flat));
  ASSERT_TRUE(expanded.ok()) << expanded.status();
  EXPECT_EQ(SerializeFileTree(*expanded), SerializeFileTree(flat));
  EXPECT_EQ(blobs.reads(), 1);
}

TEST(SubtreesTest, AnEmptySubtreeIsAnEmptyDirectory) {
  Blobs blobs;
  const farm::v1::Digest empty = blobs.Add(farm::v1::FileTree());
  auto expanded = blobs.Expand(blobs.Add(TreeOf({SubtreeEntry("tmp", empty)})));
  ASSERT_TRUE(expanded.ok()) << expanded.status();
  ASSERT_EQ(expanded->files_size(), 1);
  EXPECT_TRUE(expanded->files(0).directory());
  EXPECT_EQ(expanded->files(0).path(), "tmp");
}

// Bad input: a client's blobs.
TEST(SubtreesTest, ABlobNamedOverAndOverIsReadOnceAndStopsAtTheEntryLimit) {
  Blobs blobs;
  farm::v1::Digest level = blobs.Add(TreeOf({TreeFile("f")}));
  // Each level names the one below 64 times: 64^4 entries in four small blobs.
  for (int depth = 0; depth < 4; ++depth) {
    farm::v1::FileTree fan;
    for (int i = 0; i < 64; ++i) *fan.add_files() = SubtreeEntry(absl::StrCat("d", i), level);
    level = blobs.Add(fan);
  }
  auto expanded = blobs.Expand(level);
  EXPECT_EQ(expanded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(expanded.status().message(), HasSubstr("its subtrees counted"));
  EXPECT_EQ(blobs.reads(), 5);  // each blob once
}

TEST(SubtreesTest, SubtreesNestedTooDeepAreRefused) {
  Blobs blobs;
  farm::v1::Digest level = blobs.Add(TreeOf({TreeFile("f")}));
  for (int depth = 0; depth < 300; ++depth) level = blobs.Add(TreeOf({SubtreeEntry("d", level)}));
  auto expanded = blobs.Expand(level);
  EXPECT_EQ(expanded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(expanded.status().message(), HasSubstr("nest deeper than 256"));
}

TEST(SubtreesTest, PathsThroughASubtreeAreCheckedAsAFlatTreesAre) {
  Blobs blobs;
  const farm::v1::Digest inner = blobs.Add(TreeOf({TreeFile("passwd")}));
  for (const char* name : {"..", "etc/../..", "proc"}) {
    auto expanded = blobs.Expand(blobs.Add(TreeOf({SubtreeEntry(name, inner)})));
    EXPECT_EQ(expanded.status().code(), absl::StatusCode::kInvalidArgument) << name;
  }
  // A subtree below a link would be written through it.
  auto below =
      blobs.Expand(blobs.Add(TreeOf({TreeLink("usr", "/etc"), SubtreeEntry("usr/x", inner)})));
  EXPECT_EQ(below.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(below.status().message(), HasSubstr("lies below the link"));
  // A link that claims a subtree.
  farm::v1::InputFile both = SubtreeEntry("lib", inner);
  both.set_symlink_target("/lib");
  auto linked = blobs.Expand(blobs.Add(TreeOf({both})));
  EXPECT_THAT(linked.status().message(), HasSubstr("is a link and a subtree"));
}

TEST(SubtreesTest, ALongNameIsRefusedWhereItIsMet) {
  Blobs blobs;
  farm::v1::Digest level = blobs.Add(TreeOf({TreeFile("f")}));
  for (int depth = 0; depth < 3; ++depth) {
    level = blobs.Add(TreeOf({SubtreeEntry(std::string(2000, 'n'), level)}));
  }
  auto expanded = blobs.Expand(level);
  EXPECT_EQ(expanded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(expanded.status().message(), HasSubstr("is longer than 4096 bytes"));
}

TEST(SubtreesTest, BlobsAddingUpToMoreThanTheLimitAreRefusedBeforeTheyAreRead) {
  Blobs blobs;
  farm::v1::Digest huge;
  huge.set_hash(std::string(64, 'e'));
  huge.set_size_bytes(kMaxFileTreeBytes + 1);
  auto expanded = blobs.Expand(blobs.Add(TreeOf({SubtreeEntry("big", huge)})));
  EXPECT_EQ(expanded.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(expanded.status().message(), HasSubstr("add up to more than"));
  EXPECT_EQ(blobs.reads(), 1);
}

TEST(SubtreesTest, AMissingOrGarbledBlobFailsTheExpansion) {
  Blobs blobs;
  farm::v1::Digest absent;
  absent.set_hash(std::string(64, 'f'));
  absent.set_size_bytes(10);
  auto missing = blobs.Expand(blobs.Add(TreeOf({SubtreeEntry("x", absent)})));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);

  auto garbled = ExpandFileTree(absent, [](const farm::v1::Digest&, int64_t) {
    return absl::StatusOr<std::string>(std::string("\xff\xff\xff", 3));
  });
  EXPECT_THAT(garbled.status().message(), HasSubstr("does not parse"));
}

}  // namespace
}  // namespace farm
