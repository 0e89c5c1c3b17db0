// Debian's Bazel (bazel-bootstrap 4.2, REAPI 2.0) with the farm as its remote cache
// (docs/reapi.md): a cc_library, a cc_binary using it and a genrule, built with
// --remote_cache=grpc://FARM and the farm's token in --remote_header. A cold build uploads its
// outputs and action results; a build in a fresh output base is served from the farm ("N remote
// cache hit") and its outputs are byte for byte those of a build without the cache. A token
// that may not write the action cache is told so by GetCapabilities, and Bazel 4.2 then refuses
// to build unless told not to upload (--noremote_upload_local_results). Takes ~1 minute: each
// Bazel run starts a JVM (~10 s).
#include <cstdio>
#include <filesystem>
#include <regex>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "libfarm/auth/token.h"
#include "tests/support/bazel_workspace.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string Output(const CommandResult& r) {
  return absl::StrCat("exit ", r.exit_code, "\n", r.stdout_text, r.stderr_text);
}

// Bazel's "Elapsed time: ..., Critical Path: ..." and "N processes: ..." lines, joined.
std::string Summary(const std::string& output) {
  std::string out;
  const std::regex line(R"(INFO: ((Elapsed time|\d+ process)[^\n]*))");
  for (auto it = std::sregex_iterator(output.begin(), output.end(), line);
       it != std::sregex_iterator(); ++it) {
    absl::StrAppend(&out, out.empty() ? "" : " ", (*it)[1].str());
  }
  return out;
}

// The value of the metric line that starts with `series` ("name{labels}"), 0 when absent.
double MetricValue(const std::string& metrics, const std::string& series) {
  const std::string prefix = "\n" + series + " ";
  const std::string text = "\n" + metrics;  // the first line starts after a newline too
  size_t at = text.find(prefix);
  if (at == std::string::npos) return 0;
  return std::stod(text.substr(at + prefix.size()));
}

class ReapiBazelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Nothing is skipped: without Bazel the test fails, naming the fix.
    ASSERT_TRUE(fs::exists(kBazel)) << kBazel << " is missing. " << kBazelFix;
    // Submit tokens (CI) may write REAPI's action cache on this farm; readers may not.
    auto farm = TestFarm::Start(
        dir_.path(), FarmOptions{.coordinator_args = {"--reapi-action-cache-writers", "submit"}});
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
    workspace_ = std::make_unique<BazelWorkspace>(dir_.path() / "bazel");
  }
  std::string TokenOf(const std::string& role) {
    auto created = farm_->CreateToken(role, "bazel-" + role);
    EXPECT_TRUE(created.ok()) << created.status();
    if (!created.ok()) return "";
    auto token = ReadTokenFile(created->file);
    EXPECT_TRUE(token.ok()) << token.status();
    return token.ok() ? *token : "";
  }
  // The flags that make the farm Bazel's remote cache, with `token`.
  std::vector<std::string> RemoteCache(const std::string& token) {
    return {absl::StrCat("--remote_cache=grpc://", farm_->address()),
            absl::StrCat("--remote_header=authorization=Bearer ", token)};
  }
  CommandResult Build(const std::string& output_base, const std::vector<std::string>& flags) {
    auto r = workspace_->Build(output_base, flags);
    if (!r.ok()) return CommandResult{-1, "", std::string(r.status().message())};
    return *r;
  }

  TempDir dir_{"reapi_bazel_test"};
  std::unique_ptr<TestFarm> farm_;
  std::unique_ptr<BazelWorkspace> workspace_;
};

TEST_F(ReapiBazelTest, AColdBuildFillsTheFarmAndAFreshOutputBaseIsServedFromIt) {
  // The reference: no remote cache at all.
  CommandResult local = Build("local", {});
  ASSERT_EQ(local.exit_code, 0) << Output(local);
  const std::string hello = workspace_->Output("local", "app/hello");
  const std::string banner = workspace_->Output("local", "app/banner.txt");
  ASSERT_FALSE(hello.empty());
  ASSERT_EQ(banner, "wheelfarm banner\n");

  const std::string token = TokenOf("submit");
  const absl::Time cold_start = absl::Now();
  CommandResult cold = Build("cold", RemoteCache(token));
  const absl::Duration cold_time = absl::Now() - cold_start;
  ASSERT_EQ(cold.exit_code, 0) << Output(cold);
  EXPECT_EQ(RemoteCacheHits(Output(cold)), 0) << Output(cold);
  std::string metrics = farm_->Metrics();
  // Two compiles, a link, the genrule and the runfiles' actions: each result stored, every
  // output in the farm's CAS.
  const double stored = MetricValue(metrics, "farm_reapi_action_cache_updates_total");
  EXPECT_GE(stored, 4) << metrics;
  EXPECT_GE(MetricValue(metrics, "farm_cas_blobs"), 4) << metrics;
  EXPECT_EQ(MetricValue(metrics, "farm_reapi_action_cache_lookups_total{result=\"hit\"}"), 0);

  const absl::Time cached_start = absl::Now();
  CommandResult cached = Build("cached", RemoteCache(token));
  const absl::Duration cached_time = absl::Now() - cached_start;
  ASSERT_EQ(cached.exit_code, 0) << Output(cached);
  // Every action Bazel sent to the cache is a hit; none ran here.
  EXPECT_EQ(RemoteCacheHits(Output(cached)), static_cast<int>(stored)) << Output(cached);
  EXPECT_THAT(Output(cached), ::testing::Not(::testing::ContainsRegex("[0-9]+ local")));
  metrics = farm_->Metrics();
  EXPECT_EQ(MetricValue(metrics, "farm_reapi_action_cache_lookups_total{result=\"hit\"}"), stored);
  EXPECT_EQ(MetricValue(metrics, "farm_reapi_action_cache_updates_total"), stored);
  for (const std::string base : {"cold", "cached"}) {
    EXPECT_EQ(workspace_->Output(base, "app/hello"), hello) << base;
    EXPECT_EQ(workspace_->Output(base, "app/banner.txt"), banner) << base;
  }
  // The figures docs/reapi.md quotes: wall time of each bazel run and Bazel's own summary.
  std::printf("[ reapi_bazel ] cold build %s (%s), cached build %s (%s)\n",
              absl::FormatDuration(cold_time).c_str(), Summary(Output(cold)).c_str(),
              absl::FormatDuration(cached_time).c_str(), Summary(Output(cached)).c_str());
}

TEST_F(ReapiBazelTest, AReadTokenIsToldItMayNotWriteAndBazelUploadsNothing) {
  const std::string token = TokenOf("read");
  // Bazel 4.2 reads update_enabled=false from GetCapabilities and stops before building.
  CommandResult refused = Build("read", RemoteCache(token));
  EXPECT_NE(refused.exit_code, 0) << Output(refused);
  EXPECT_THAT(Output(refused), HasSubstr("not authorized to write local results to the remote "
                                         "cache"));
  // Told not to upload, it reads the cache (empty here), builds locally and writes nothing.
  std::vector<std::string> flags = RemoteCache(token);
  flags.push_back("--noremote_upload_local_results");
  CommandResult read_only = Build("read-only", flags);
  ASSERT_EQ(read_only.exit_code, 0) << Output(read_only);
  EXPECT_EQ(workspace_->Output("read-only", "app/banner.txt"), "wheelfarm banner\n");
  const std::string metrics = farm_->Metrics();
  EXPECT_GE(MetricValue(metrics, "farm_reapi_action_cache_lookups_total{result=\"miss\"}"), 4)
      << metrics;
  EXPECT_EQ(MetricValue(metrics, "farm_reapi_action_cache_updates_total"), 0) << metrics;
  EXPECT_EQ(MetricValue(metrics, "farm_cas_blobs"), 0) << metrics;
  EXPECT_THAT(metrics, ::testing::Not(HasSubstr("method=\"UpdateActionResult\"")));
}

}  // namespace
}  // namespace farm::testing
