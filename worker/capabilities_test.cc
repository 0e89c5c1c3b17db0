#include "worker/capabilities.h"

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "libfarm/toolkit/toolkit_check.h"

namespace farm::worker {
namespace {

TEST(ParseLabelsTest, ParsesPairs) {
  auto labels = ParseLabels("instance=m8g.8xlarge, zone=us-east-1a");
  ASSERT_TRUE(labels.ok()) << labels.status();
  EXPECT_EQ(labels->at("instance"), "m8g.8xlarge");
  EXPECT_EQ(labels->at("zone"), "us-east-1a");
  EXPECT_TRUE(ParseLabels("")->empty());
}

TEST(ParseLabelsTest, RejectsMalformedWithExample) {
  for (const char* bad : {"novalue", "=x", "a=b=c", "bad key=1"}) {
    auto labels = ParseLabels(bad);
    ASSERT_FALSE(labels.ok()) << bad;
    EXPECT_NE(labels.status().message().find("key=value"), std::string::npos);
  }
}

// What the worker detected may hold any bytes (a hostname, a toolkit or interpreter path): the
// copy it registers with has them escaped, as protobuf strings must be UTF-8; its own copy
// keeps the paths it uses. A label is the operator's: one that is not UTF-8 is refused, naming
// it and the fix.
TEST(SendableCapabilitiesTest, EscapesWhatTheHostSaysAndRefusesLabelsThatAreNotUtf8) {
  farm::v1::WorkerCapabilities detected;
  detected.set_hostname("ho\xffst");
  detected.set_slots(2);
  detected.add_cuda()->set_path("/opt/cuda-\xe9");
  detected.add_python()->set_path("/usr/bin/python3.11");
  (*detected.mutable_labels())["zone"] = "café";
  auto sent = SendableCapabilities(detected);
  ASSERT_TRUE(sent.ok()) << sent.status();
  EXPECT_EQ(sent->hostname(), "ho\\xffst");
  EXPECT_EQ(sent->cuda(0).path(), "/opt/cuda-\\xe9");
  EXPECT_EQ(sent->python(0).path(), "/usr/bin/python3.11");
  EXPECT_EQ(sent->labels().at("zone"), "café");
  EXPECT_EQ(sent->slots(), 2u);
  farm::v1::WorkerCapabilities parsed;
  EXPECT_TRUE(parsed.ParseFromString(sent->SerializeAsString()));

  (*detected.mutable_labels())["zone"] = "caf\xe9";
  auto refused = SendableCapabilities(detected);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.status().message()),
              ::testing::HasSubstr("label 'zone' (\"caf\\xe9\") is not UTF-8"));
  EXPECT_THAT(std::string(refused.status().message()),
              ::testing::HasSubstr("Fix: pass --labels as UTF-8 text"));
}

TEST(DetectCapabilitiesTest, NoneAdvertisesNoToolkit) {
  auto caps = DetectCapabilities({.work_dir = "/tmp", .cuda_paths = {"none"}});
  ASSERT_TRUE(caps.ok()) << caps.status();
  EXPECT_EQ(caps->cuda_size(), 0);
  EXPECT_GE(caps->slots(), 1u);
  EXPECT_FALSE(caps->glibc().empty());
}

TEST(DetectCapabilitiesTest, NamedToolkitThatIsMissingIsAnError) {
  auto caps = DetectCapabilities({.work_dir = "/tmp", .cuda_paths = {"/nonexistent/cuda"}});
  ASSERT_FALSE(caps.ok());
  EXPECT_NE(caps.status().message().find("/nonexistent/cuda"), std::string::npos);
}

TEST(DetectCapabilitiesTest, DiscoversInstalledToolkitAndHonoursOverrides) {
  auto caps =
      DetectCapabilities({.work_dir = "/tmp", .slots = 3, .labels = {{"instance", "m8g.8xlarge"}}});
  ASSERT_TRUE(caps.ok()) << caps.status();
  ASSERT_GE(caps->cuda_size(), 1) << "nvcc must be installed on every Wheelfarm host";
  EXPECT_THAT(caps->cuda(0).sms(), ::testing::Contains("sm_121"));
  EXPECT_EQ(caps->slots(), 3u);
  EXPECT_EQ(caps->labels().at("instance"), "m8g.8xlarge");
  // The loader's libraries and the toolkit's own (cudart is in its lib64, not always cached).
  EXPECT_THAT(caps->libraries(), ::testing::Contains("libc.so.6"));
  EXPECT_THAT(caps->libraries(), ::testing::Contains(::testing::StartsWith("libcudart.so.")));
}

}  // namespace
}  // namespace farm::worker

namespace farm::worker {
namespace {

namespace fs = std::filesystem;

// A toolkit root whose files link to the installed toolkit's, less `omit`.
std::string FakeToolkit(const fs::path& root, const std::string& omit) {
  fs::remove_all(root);
  for (const ToolkitFile& f : RequiredToolkitFiles()) {
    if (f.path == omit) continue;
    fs::create_directories((root / f.path).parent_path());
    fs::create_symlink(fs::path("/usr/local/cuda") / f.path, root / f.path);
  }
  return root.string();
}

TEST(DetectCapabilitiesTest, ANamedToolkitWithoutCiccIsRefusedNamingThePath) {
  const fs::path dir = fs::temp_directory_path() / ("farm_caps_" + std::to_string(::getpid()));
  const std::string root = FakeToolkit(dir / "no-cicc", "nvvm/bin/cicc");
  auto caps = DetectCapabilities({.work_dir = "/tmp", .cuda_paths = {root}});
  ASSERT_FALSE(caps.ok());
  EXPECT_THAT(caps.status().message(),
              ::testing::HasSubstr("--cuda-path " + root + " refused: the CUDA toolkit at " + root +
                                   " is incomplete: missing " + root + "/nvvm/bin/cicc"));
  fs::remove_all(dir);
}

// CUDA_HOME is where discovery looks first: a broken toolkit there is skipped, the
// installed one still offered.
TEST(DetectCapabilitiesTest, ADiscoveredBrokenToolkitIsSkipped) {
  const fs::path dir = fs::temp_directory_path() / ("farm_caps_d_" + std::to_string(::getpid()));
  const std::string root = FakeToolkit(dir / "discovered-no-cicc", "nvvm/bin/cicc");
  const char* old = std::getenv("CUDA_HOME");
  const std::string saved = old != nullptr ? old : "";
  ::setenv("CUDA_HOME", root.c_str(), 1);
  auto caps = DetectCapabilities({.work_dir = "/tmp"});
  if (old != nullptr) {
    ::setenv("CUDA_HOME", saved.c_str(), 1);
  } else {
    ::unsetenv("CUDA_HOME");
  }
  ASSERT_TRUE(caps.ok()) << caps.status();
  ASSERT_GE(caps->cuda_size(), 1);
  for (const auto& t : caps->cuda()) EXPECT_NE(t.path(), root);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace farm::worker
