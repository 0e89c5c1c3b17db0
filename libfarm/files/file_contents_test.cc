#include "libfarm/files/file_contents.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

namespace farm {
namespace {

class FileContentsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "file_contents_XXXXXX");
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_;
};

TEST_F(FileContentsTest, ReadsEveryByteOfFilesOfAnySize) {
  for (size_t size : {size_t{0}, size_t{1}, size_t{4095}, size_t{3} << 20}) {
    std::string bytes(size, '\0');
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 131 + size) % 256);
    const std::string path = dir_ + "/f" + std::to_string(size);
    ASSERT_TRUE(WriteFileAtomically(path, bytes).ok());
    absl::StatusOr<std::string> read = ReadFileContents(path);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(*read, bytes) << size << " bytes";
  }
}

TEST_F(FileContentsTest, ReadsFilesWhoseSizeTheKernelDoesNotKnow) {
  // /proc files stat as 0 bytes and still have content.
  absl::StatusOr<std::string> status = ReadFileContents("/proc/self/status");
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_NE(status->find("Pid:"), std::string::npos) << *status;
}

TEST_F(FileContentsTest, OneBufferReadsFileAfterFileEachExactlyAndNeverShrinks) {
  const std::string big(1 << 20, 'b');
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/big", big).ok());
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/small", "small").ok());
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/empty", "").ok());
  ASSERT_EQ(chmod((dir_ + "/big").c_str(), 0755), 0);
  std::string buffer;
  struct stat info {};
  absl::StatusOr<absl::string_view> read = ReadFileContentsInto(dir_ + "/big", buffer, &info);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, big);
  EXPECT_TRUE(S_ISREG(info.st_mode));
  EXPECT_EQ(info.st_mode & 0777, 0755);
  EXPECT_EQ(info.st_size, 1 << 20);
  const size_t grown = buffer.size();
  // The big file's bytes still lie in the buffer past the small one's: the view ends there.
  read = ReadFileContentsInto(dir_ + "/small", buffer);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "small");
  read = ReadFileContentsInto(dir_ + "/empty", buffer);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "");
  EXPECT_EQ(buffer.size(), grown);
  read = ReadFileContentsInto("/proc/self/status", buffer);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_NE(read->find("Pid:"), absl::string_view::npos);
  EXPECT_EQ(ReadFileContentsInto(dir_ + "/absent", buffer).status().code(),
            absl::StatusCode::kNotFound);
}

TEST_F(FileContentsTest, AppendsAddToTheEndAndCreateTheFile) {
  const std::string path = dir_ + "/log";
  ASSERT_TRUE(AppendToFile(path, "one ").ok());
  ASSERT_TRUE(AppendToFile(path, "two").ok());
  absl::StatusOr<std::string> read = ReadFileContents(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "one two");
  const absl::Status refused = AppendToFile(dir_ + "/absent/log", "x");
  EXPECT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find(dir_ + "/absent/log"), std::string::npos) << refused;
}

TEST_F(FileContentsTest, AMissingFileIsNotFoundAndADirectoryIsDataLoss) {
  absl::StatusOr<std::string> missing = ReadFileContents(dir_ + "/absent");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(dir_ + "/absent"), std::string::npos);

  absl::StatusOr<std::string> directory = ReadFileContents(dir_);
  EXPECT_EQ(directory.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(directory.status().message().find(dir_), std::string::npos);
}

}  // namespace
}  // namespace farm
