#include "coordinator/scheduler/history_scope.h"

#include <unistd.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

class HistoryScopeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("history_scope_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    auto store = StateStore::Open(dir_.string());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    builds_ = std::make_unique<BuildRegistry>(store_.get(), &metrics_, [] { return absl::Now(); });
    ASSERT_TRUE(builds_->Load().ok());
  }
  void TearDown() override {
    builds_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }
  Caller BuildSubmittedBy(const std::string& role, const std::string& token,
                          const std::string& package, const std::string& version) {
    farm::v1::Submitter by;
    by.set_role(role);
    by.set_token_id(token);
    auto b = builds_->CreateWheelBuild(
        {.package = package, .version = version, .archs = {"sm_90"}, .submitted_by = by});
    EXPECT_TRUE(b.ok()) << b.status();
    return Caller{.token_id = "t-" + b->id(), .role = Role::kBuild, .build_id = b->id()};
  }
  HistoryScopes ScopesOf(const Caller& caller) {
    auto scopes = HistoryScopesOf(caller, *builds_);
    EXPECT_TRUE(scopes.ok()) << scopes.status();
    return scopes.ok() ? *scopes : HistoryScopes{};
  }

  fs::path dir_;
  MetricsRegistry metrics_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<BuildRegistry> builds_;
};

TEST_F(HistoryScopeTest, EachTenantWritesItsOwnAndReadsItsOwnThenTheAdmins) {
  const HistoryScopes admin = ScopesOf(Caller{.token_id = "farm", .role = Role::kAdmin});
  EXPECT_EQ(admin.write, "admin");
  EXPECT_THAT(admin.read, ElementsAre("admin"));
  const HistoryScopes submit = ScopesOf(Caller{.token_id = "c1", .role = Role::kSubmit});
  EXPECT_EQ(submit.write, "token:c1");
  EXPECT_THAT(submit.read, ElementsAre("token:c1", "admin"));
  // Builds of one package share a scope across versions; another package has its own.
  const HistoryScopes v291 = ScopesOf(BuildSubmittedBy("submit", "c1", "torch", "2.9.1"));
  const HistoryScopes v211 = ScopesOf(BuildSubmittedBy("submit", "c1", "torch", "2.11.0"));
  EXPECT_EQ(v291.write, "builds/token:c1/torch");
  EXPECT_EQ(v211.write, v291.write);
  EXPECT_THAT(v291.read, ElementsAre("builds/token:c1/torch", "builds/admin/torch", "admin"));
  EXPECT_EQ(ScopesOf(BuildSubmittedBy("submit", "c2", "torch", "2.9.1")).write,
            "builds/token:c2/torch");
  const HistoryScopes trusted =
      ScopesOf(BuildSubmittedBy("admin", "farm", "torchvision", "0.26.0"));
  EXPECT_EQ(trusted.write, "builds/admin/torchvision");
  EXPECT_THAT(trusted.read, ElementsAre("builds/admin/torchvision", "admin"));
  // A build recorded before submitters were: on its own.
  const Caller old = BuildSubmittedBy("", "", "torch", "2.9.1");
  EXPECT_EQ(ScopesOf(old).write, "build/" + old.build_id);
  EXPECT_THAT(ScopesOf(old).read, ElementsAre("build/" + old.build_id));
  EXPECT_EQ(
      HistoryScopesOf(Caller{.role = Role::kBuild, .build_id = "gone"}, *builds_).status().code(),
      absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace farm::coordinator
