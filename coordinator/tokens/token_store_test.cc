#include "coordinator/tokens/token_store.h"

#include <unistd.h>

#include <filesystem>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libfarm/auth/token.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class TokenStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("token_store_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    Reopen();
  }
  void TearDown() override {
    tokens_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }
  void Reopen() {
    tokens_.reset();
    store_.reset();
    auto store = StateStore::Open(dir_.string());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    auto tokens = TokenStore::Load(
        store_.get(), [this](const std::string& id) { return running_.count(id) > 0; });
    ASSERT_TRUE(tokens.ok()) << tokens.status();
    tokens_ = std::move(*tokens);
  }

  fs::path dir_;
  std::set<std::string> running_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<TokenStore> tokens_;
};

TEST_F(TokenStoreTest, ATokenFindsItsRoleUntilRevokedAndOnlyItsHashIsKept) {
  auto made = tokens_->Create(Role::kSubmit, "ci");
  ASSERT_TRUE(made.ok()) << made.status();
  EXPECT_EQ(made->token().size(), 64u);
  EXPECT_TRUE(made->record().sha256().empty());  // never handed out
  auto caller = tokens_->Find(made->token());
  ASSERT_TRUE(caller.has_value());
  EXPECT_EQ(caller->role, Role::kSubmit);
  EXPECT_EQ(caller->token_id, made->record().id());
  EXPECT_FALSE(tokens_->Find(std::string(64, 'f')).has_value());

  farm::v1::TokenRecord stored;
  ASSERT_TRUE(store_->Get(Table::kTokens, made->record().id(), &stored).ok());
  EXPECT_EQ(stored.sha256(), TokenDigest(made->token()));
  EXPECT_EQ(stored.SerializeAsString().find(made->token()), std::string::npos);

  Reopen();
  EXPECT_TRUE(tokens_->Find(made->token()).has_value());
  ASSERT_EQ(tokens_->List().size(), 1u);
  EXPECT_TRUE(tokens_->List()[0].sha256().empty());
  ASSERT_TRUE(tokens_->Revoke(made->record().id()).ok());
  EXPECT_FALSE(tokens_->Find(made->token()).has_value());
  EXPECT_FALSE(tokens_->IsValid(made->record().id()));
  EXPECT_TRUE(tokens_->IsValid("farm"));
  EXPECT_EQ(tokens_->Revoke(made->record().id()).code(), absl::StatusCode::kNotFound);
  Reopen();
  EXPECT_FALSE(tokens_->Find(made->token()).has_value());
}

TEST_F(TokenStoreTest, ABuildTokenLivesWhileItsBuildRuns) {
  running_.insert("b1");
  auto made = tokens_->Create(Role::kBuild, "wheel-build", "b1");
  ASSERT_TRUE(made.ok()) << made.status();
  auto caller = tokens_->Find(made->token());
  ASSERT_TRUE(caller.has_value());
  EXPECT_EQ(caller->role, Role::kBuild);
  EXPECT_EQ(caller->build_id, "b1");
  // The build ends: refused at once, deleted by the sweep, and not loaded again.
  running_.clear();
  EXPECT_FALSE(tokens_->Find(made->token()).has_value());
  ASSERT_TRUE(tokens_->DropEndedBuildTokens().ok());
  EXPECT_TRUE(tokens_->List().empty());
  farm::v1::TokenRecord stored;
  EXPECT_EQ(store_->Get(Table::kTokens, made->record().id(), &stored).code(),
            absl::StatusCode::kNotFound);
  // One left behind by a crash before the sweep is dropped at load.
  running_.insert("b2");
  auto left = tokens_->Create(Role::kBuild, "wheel-build", "b2");
  ASSERT_TRUE(left.ok());
  running_.clear();
  Reopen();
  EXPECT_TRUE(tokens_->List().empty());
}

TEST_F(TokenStoreTest, NamesAndBuildScopesAreChecked) {
  EXPECT_THAT(tokens_->Create(Role::kRead, "a b").status().message(), HasSubstr("letters, digits"));
  EXPECT_FALSE(tokens_->Create(Role::kRead, std::string(65, 'a')).ok());
  EXPECT_FALSE(tokens_->Create(Role::kRead, "").ok());
  EXPECT_FALSE(tokens_->Create(Role::kBuild, "wheel-build").ok());  // a build token names one
  EXPECT_FALSE(tokens_->Create(Role::kRead, "ci", "b1").ok());      // only a build token does
  EXPECT_TRUE(tokens_->Create(Role::kWorker, "worker-grace.3@dc1").ok());
}

}  // namespace
}  // namespace farm::coordinator
