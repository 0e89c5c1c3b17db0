#include "libfarm/auth/token.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

namespace farm {
namespace {

std::string TempPath(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("token_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto p = dir / name;
  std::filesystem::remove(p);
  return p.string();
}

TEST(TokenTest, CreateThenReadRoundTrips) {
  const std::string path = TempPath("create");
  auto created = CreateTokenFile(path);
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->size(), 64u);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  auto read = ReadTokenFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, *created);
}

TEST(TokenTest, CreateNeverOverwrites) {
  const std::string path = TempPath("exists");
  ASSERT_TRUE(CreateTokenFile(path).ok());
  auto again = CreateTokenFile(path);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(TokenTest, MissingFileNamesPathAndFix) {
  auto read = ReadTokenFile("/nonexistent/farm/token");
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(read.status().message().find("/nonexistent/farm/token"), std::string::npos);
  EXPECT_NE(read.status().message().find("--token-file"), std::string::npos);
}

TEST(TokenTest, ShortOrMultiWordTokensAreRefused) {
  const std::string path = TempPath("short");
  std::ofstream(path) << "abc\n";
  EXPECT_EQ(ReadTokenFile(path).status().code(), absl::StatusCode::kInvalidArgument);
  std::ofstream(path) << "0123456789abcdef0123 second\n";
  EXPECT_EQ(ReadTokenFile(path).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TokenTest, TokensEqualComparesWholeStrings) {
  EXPECT_TRUE(TokensEqual("abcdef", "abcdef"));
  EXPECT_FALSE(TokensEqual("abcdef", "abcdeg"));
  EXPECT_FALSE(TokensEqual("abcdef", "abcde"));
  EXPECT_FALSE(TokensEqual("", "a"));
  EXPECT_TRUE(TokensEqual("", ""));
}

}  // namespace
}  // namespace farm
