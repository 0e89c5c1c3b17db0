#include "tests/support/suite_fixture.h"

#include <gtest/gtest-spi.h>

#include <exception>

#include "absl/strings/str_cat.h"

namespace farm::testing {

std::string CaptureFailures(const std::function<void()>& set_up) {
  ::testing::TestPartResultArray results;
  std::string thrown;
  {
    ::testing::ScopedFakeTestPartResultReporter reporter(
        ::testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
    try {
      set_up();
    } catch (const std::exception& e) {
      thrown = absl::StrCat("an exception: ", e.what(), "\n");
    } catch (...) {
      thrown = "an exception that is no std::exception\n";
    }
  }
  std::string failures;
  for (int i = 0; i < results.size(); ++i) {
    const ::testing::TestPartResult& r = results.GetTestPartResult(i);
    if (r.passed()) continue;
    absl::StrAppend(&failures, r.file_name() == nullptr ? "(unknown file)" : r.file_name(), ":",
                    r.line_number(), ": ", r.skipped() ? "skipped: " : "", r.message(), "\n");
  }
  return failures + thrown;
}

}  // namespace farm::testing
