#include "libfarm/disk/disk_space.h"

#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

namespace farm {
namespace {

using ::testing::HasSubstr;

TEST(DiskSpaceTest, FreeBytesOfARealFilesystemAndAMissingPath) {
  auto free = FreeBytes("/");
  ASSERT_TRUE(free.ok()) << free.status();
  EXPECT_GT(*free, 0u);
  auto missing = FreeBytes("/no/such/dir/anywhere");
  EXPECT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("/no/such/dir/anywhere"));
}

TEST(DiskSpaceTest, TellsDiskFullFromOtherWriteErrors) {
  EXPECT_TRUE(IsDiskFull(absl::ResourceExhaustedError(
      "cannot write /var/lib/wheelfarm/cas/tmp/x: No space left on device")));
  EXPECT_TRUE(IsDiskFull(absl::InternalError("RocksDB: IO error: Disk quota exceeded")));
  EXPECT_FALSE(IsDiskFull(absl::PermissionDeniedError("cannot write /x: Permission denied")));
  EXPECT_FALSE(IsDiskFull(absl::OkStatus()));
}

TEST(DiskSpaceTest, ReportsOncePerPeriodAndCountsTheRest) {
  std::ostringstream out;
  auto logger = std::make_shared<spdlog::logger>(
      "disk-test", std::make_shared<spdlog::sinks::ostream_sink_st>(out));
  logger->set_pattern("%v");
  DiskFullReporter reporter(logger, absl::Minutes(1));
  const absl::Status full =
      absl::ResourceExhaustedError("cannot write /data/cas/tmp/a: No space left on device");
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  EXPECT_TRUE(reporter.Report(full, t0));
  EXPECT_TRUE(reporter.Report(full, t0 + absl::Seconds(10)));
  EXPECT_TRUE(reporter.Report(full, t0 + absl::Seconds(59)));
  EXPECT_FALSE(reporter.Report(absl::InternalError("other"), t0 + absl::Seconds(60)));
  EXPECT_TRUE(reporter.Report(full, t0 + absl::Seconds(61)));
  logger->flush();
  const std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
  EXPECT_THAT(text, HasSubstr("disk full: cannot write /data/cas/tmp/a: No space left on device. "
                              "Fix: free space on that filesystem\n"));
  EXPECT_THAT(text, HasSubstr("(and 2 more since the last report)"));
}

}  // namespace
}  // namespace farm
