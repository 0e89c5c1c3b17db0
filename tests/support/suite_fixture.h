// A suite whose tests share what its set-up makes once (a farm, an index, an emulated host).
//
// When SetUpTestSuite fails an assertion, gtest marks every test of the suite skipped: the
// tests did not run, and the failure shows nowhere near them. A suite derives from
// SuiteFixture<Suite> instead and defines
//   static void SetUpSuite();     // gtest assertions as in any test
//   static void TearDownSuite();  // optional; runs after a failed set-up too
// A failure in SetUpSuite is kept (not reported to gtest there), and every test of the suite
// fails with it in SetUp. A suite that overrides SetUp calls SuiteFixture::SetUp() first and
// returns when HasFatalFailure().
#pragma once

#include <functional>
#include <string>

#include <gtest/gtest.h>

namespace farm::testing {

// Runs `set_up`; the gtest failures in it (file:line: message, one a line), "" when none.
// They are kept from gtest, which does not see them.
std::string CaptureFailures(const std::function<void()>& set_up);

template <typename Suite, typename Base = ::testing::Test>
class SuiteFixture : public Base {
 public:
  static void SetUpTestSuite() {
    failures() = CaptureFailures([] { Hooks::SetUpSuite(); });
  }
  static void TearDownTestSuite() { Hooks::TearDownSuite(); }
  static void TearDownSuite() {}

 protected:
  void SetUp() override {
    if (!failures().empty()) {
      FAIL() << "the suite's shared set-up (SetUpSuite) failed, so this test did not run:\n"
             << failures();
    }
  }

 private:
  // The suite's SetUpSuite and TearDownSuite, which it may declare protected.
  struct Hooks : Suite {
    using Suite::SetUpSuite;
    using Suite::TearDownSuite;
  };
  static std::string& failures() {
    static std::string kept;
    return kept;
  }
};

}  // namespace farm::testing
