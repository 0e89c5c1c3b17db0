#include "coordinator/compile_cache/compile_cache_scope.h"

#include <unistd.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "coordinator/cas/blob_store.h"
#include "coordinator/compile_cache/compile_result_table.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;

const std::string kKey(64, 'a');

class CompileCacheScopeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("compile_cache_scope_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto store = StateStore::Open((dir_ / "state").string());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    auto blobs = BlobStore::Open((dir_ / "cas").string(), store_.get(), uint64_t{1} << 30);
    ASSERT_TRUE(blobs.ok()) << blobs.status();
    blobs_ = std::move(*blobs);
    builds_ = std::make_unique<BuildRegistry>(store_.get(), &metrics_, [] { return absl::Now(); });
    ASSERT_TRUE(builds_->Load().ok());
    table_ = std::make_unique<CompileResultTable>(store_.get(), blobs_.get());
  }
  void TearDown() override {
    table_.reset();
    builds_.reset();
    blobs_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }

  // The build token of a new build of `package` `version` submitted by `role` token `token`.
  Caller BuildSubmittedBy(const std::string& role, const std::string& token,
                          const std::string& package = "torch",
                          const std::string& version = "2.9.1") {
    farm::v1::Submitter by;
    by.set_role(role);
    by.set_token_id(token);
    auto b = builds_->CreateWheelBuild(
        {.package = package, .version = version, .archs = {"sm_90"}, .submitted_by = by});
    EXPECT_TRUE(b.ok()) << b.status();
    return Caller{.token_id = "t-" + b->id(), .role = Role::kBuild, .build_id = b->id()};
  }

  CompileCacheScopes ScopesOf(const Caller& caller) {
    auto scopes = CompileCacheScopesOf(caller, *builds_);
    EXPECT_TRUE(scopes.ok()) << scopes.status();
    return scopes.ok() ? *scopes : CompileCacheScopes{};
  }

  // An entry whose object is `bytes`.
  farm::v1::CompileResult Entry(const std::string& bytes) {
    auto digest = blobs_->PutBytes(bytes);
    EXPECT_TRUE(digest.ok()) << digest.status();
    farm::v1::CompileResult entry;
    auto* out = entry.add_outputs();
    out->set_path("object");
    *out->mutable_digest() = *digest;
    return entry;
  }

  // The bytes of the object `caller`'s lookup of kKey restores, or the lookup's error.
  std::string Restored(const Caller& caller) {
    auto entry = table_->Get(ScopesOf(caller).read, kKey);
    if (!entry.ok()) return entry.status().ToString();
    return entry->outputs(0).digest().hash();
  }

  fs::path dir_;
  MetricsRegistry metrics_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<BlobStore> blobs_;
  std::unique_ptr<BuildRegistry> builds_;
  std::unique_ptr<CompileResultTable> table_;
};

TEST_F(CompileCacheScopeTest, EachCallerWritesItsOwnScopeAndReadsOnlyWhatItTrusts) {
  const Caller admin{.token_id = "farm", .role = Role::kAdmin};
  const Caller submit{.token_id = "c1", .role = Role::kSubmit};
  EXPECT_EQ(ScopesOf(admin).write, "admin");
  EXPECT_THAT(ScopesOf(admin).read, ElementsAre("admin"));
  EXPECT_EQ(ScopesOf(submit).write, "");
  EXPECT_THAT(ScopesOf(submit).read, ElementsAre("admin"));

  const CompileCacheScopes trusted = ScopesOf(BuildSubmittedBy("admin", "farm"));
  EXPECT_EQ(trusted.write, "builds/admin/torch/2.9.1");
  EXPECT_THAT(trusted.read, ElementsAre("builds/admin/torch/2.9.1"));
  const CompileCacheScopes ci = ScopesOf(BuildSubmittedBy("submit", "c1"));
  EXPECT_EQ(ci.write, "builds/token:c1/torch/2.9.1");
  EXPECT_THAT(ci.read, ElementsAre("builds/token:c1/torch/2.9.1", "builds/admin/torch/2.9.1"));
  // A build recorded before submitters were: on its own.
  const Caller old = BuildSubmittedBy("", "");
  EXPECT_EQ(ScopesOf(old).write, "build/" + old.build_id);
  EXPECT_THAT(ScopesOf(old).read, ElementsAre("build/" + old.build_id));
  // A build the registry no longer has has no scope.
  EXPECT_EQ(CompileCacheScopesOf(Caller{.role = Role::kBuild, .build_id = "gone"}, *builds_)
                .status()
                .code(),
            absl::StatusCode::kNotFound);
}

// Issue 24, hole 3: a submit token's build wrote the entry of an admin's compile, and the
// admin's next compile restored the attacker's bytes as its object.
TEST_F(CompileCacheScopeTest, ABuildsEntryAnswersNoCompileOfAnotherTrustOrPackage) {
  const Caller admin{.token_id = "farm", .role = Role::kAdmin};
  const Caller admin_build = BuildSubmittedBy("admin", "farm");
  const Caller ci_build = BuildSubmittedBy("submit", "c1");
  const Caller other_ci_build = BuildSubmittedBy("submit", "c2");
  const Caller other_package = BuildSubmittedBy("admin", "farm", "numpy", "2.3.0");

  const farm::v1::CompileResult honest = Entry("honest object");
  ASSERT_TRUE(table_->Put(ScopesOf(admin).write, kKey, honest).ok());
  ASSERT_TRUE(table_->Put(ScopesOf(admin_build).write, kKey, honest).ok());
  const farm::v1::CompileResult trojan = Entry("trojan object");
  ASSERT_TRUE(table_->Put(ScopesOf(ci_build).write, kKey, trojan).ok());

  const std::string honest_hash = honest.outputs(0).digest().hash();
  const std::string trojan_hash = trojan.outputs(0).digest().hash();
  EXPECT_EQ(Restored(admin), honest_hash);
  EXPECT_EQ(Restored(admin_build), honest_hash);
  EXPECT_EQ(Restored(ci_build), trojan_hash);        // its own, for its own builds only
  EXPECT_EQ(Restored(other_ci_build), honest_hash);  // the admins' builds of torch, not c1's
  // An admin build of another package writes torch's key in vain.
  ASSERT_TRUE(table_->Put(ScopesOf(other_package).write, kKey, trojan).ok());
  EXPECT_EQ(Restored(admin_build), honest_hash);
  // A caller with no scope to write writes nothing.
  EXPECT_EQ(table_->Put(ScopesOf(Caller{.role = Role::kSubmit}).write, kKey, trojan).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace farm::coordinator
