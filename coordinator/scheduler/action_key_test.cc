#include "coordinator/scheduler/action_key.h"

#include <functional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace farm::coordinator {
namespace {

farm::v1::Action DeviceCompile(const std::string& release) {
  farm::v1::Action a;
  a.add_argv("/bin/sh");
  a.add_argv("-c");
  a.add_argv("\"$FARM_CUDA_ROOT\"/nvvm/bin/cicc k.cpp1.ii -o k.ptx");
  a.add_output_paths("k.ptx");
  a.mutable_requirements()->set_os("linux");
  a.mutable_requirements()->set_cuda_version("13.0");
  a.mutable_requirements()->set_cuda_release(release);
  a.mutable_requirements()->add_sms("sm_90");
  return a;
}

TEST(ActionKeyTest, TheToolkitReleaseIsPartOfTheKey) {
  EXPECT_EQ(ActionKey(DeviceCompile("13.0.88")), ActionKey(DeviceCompile("13.0.88")));
  EXPECT_NE(ActionKey(DeviceCompile("13.0.88")), ActionKey(DeviceCompile("13.0.96")));
  EXPECT_NE(ActionKey(DeviceCompile("13.0.88")), ActionKey(DeviceCompile("")));
}

// Keys of actions without a release are what they were before the field existed: the
// action cache of an upgraded coordinator still answers them.
TEST(ActionKeyTest, NoReleaseKeepsTheEarlierKey) {
  farm::v1::Action a;
  a.add_argv("true");
  EXPECT_EQ(ActionKey(a), "d123b94b978cc1e9af154a848b21db362dea32a6102480fc487c3f89e0e65189");
}

farm::v1::SourceStamp Stamp(const std::string& path, int64_t mtime, uint64_t size) {
  farm::v1::SourceStamp s;
  s.set_path(path);
  s.set_mtime_seconds(mtime);
  s.set_size_bytes(size);
  return s;
}

// With line info the cubin carries each source's mtime and size: another stamp is another
// result, the order they are listed in is not.
TEST(ActionKeyTest, SourceStampsArePartOfTheKeyInAnyOrder) {
  farm::v1::Action a = DeviceCompile("13.0.88");
  farm::v1::Action b = a;
  *a.add_source_stamps() = Stamp("/src/k.cu", 1700000000, 87);
  *a.add_source_stamps() = Stamp("/src/k.h", 1700000001, 54);
  *b.add_source_stamps() = Stamp("/src/k.h", 1700000001, 54);
  *b.add_source_stamps() = Stamp("/src/k.cu", 1700000000, 87);
  EXPECT_EQ(ActionKey(a), ActionKey(b));
  b.mutable_source_stamps(0)->set_mtime_seconds(1700000002);
  EXPECT_NE(ActionKey(a), ActionKey(b));
  EXPECT_NE(ActionKey(a), ActionKey(DeviceCompile("13.0.88")));
}

TEST(ActionKeyTest, SourceStampsMustBeAbsoluteNormalOnceAndFew) {
  farm::v1::Action a = DeviceCompile("13.0.88");
  *a.add_source_stamps() = Stamp("/src/k.cu", 1700000000, 87);
  EXPECT_TRUE(ValidateAction(a).ok()) << ValidateAction(a);
  for (const std::string& bad :
       {std::string("k.cu"), std::string("/src/../etc/passwd"), std::string("/src//k.cu"),
        std::string("/src/k.cu\0x", 11), std::string("")}) {
    farm::v1::Action b = DeviceCompile("13.0.88");
    *b.add_source_stamps() = Stamp(bad, 1, 1);
    EXPECT_EQ(ValidateAction(b).code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  farm::v1::Action twice = a;
  *twice.add_source_stamps() = Stamp("/src/k.cu", 1700000000, 87);
  EXPECT_THAT(std::string(ValidateAction(twice).message()), ::testing::HasSubstr("twice"));
  farm::v1::Action negative = DeviceCompile("13.0.88");
  *negative.add_source_stamps() = Stamp("/src/k.cu", -1, 87);
  EXPECT_FALSE(ValidateAction(negative).ok());
  farm::v1::Action many = DeviceCompile("13.0.88");
  for (int i = 0; i < 4097; ++i) {
    *many.add_source_stamps() = Stamp("/src/f" + std::to_string(i), 1, 1);
  }
  EXPECT_THAT(std::string(ValidateAction(many).message()), ::testing::HasSubstr("limit is 4096"));
}

}  // namespace
farm::v1::Digest DigestOf(char c) {
  farm::v1::Digest d;
  d.set_hash(std::string(64, c));
  d.set_size_bytes(100);
  return d;
}

// farm-cc's host compile: the build host's argv in its own directory, in a root made of a
// toolchain tree and an input tree.
farm::v1::Action ImageCompile() {
  farm::v1::Action a;
  for (const char* w : {"/usr/bin/g++", "-O2", "-c", "/src/a.cc", "-o", "/build/a.o"})
    a.add_argv(w);
  a.add_output_paths("build/a.o");
  a.set_working_directory("/build");
  *a.mutable_toolchain()->mutable_tree() = DigestOf('a');
  a.mutable_toolchain()->set_compiler("/usr/bin/g++");
  a.mutable_toolchain()->set_cpu_arch("x86_64");
  *a.mutable_input_tree() = DigestOf('b');
  a.mutable_requirements()->set_cpu_arch("x86_64");
  a.mutable_requirements()->set_sandbox(true);
  return a;
}

// Two toolchains (g++-11, g++-12) or two sets of headers never share a result; nor do two
// working directories (debug info records it).
TEST(ActionKeyTest, ToolchainInputTreeAndDirectoryArePartOfTheKey) {
  const farm::v1::Action a = ImageCompile();
  EXPECT_EQ(ActionKey(a), ActionKey(ImageCompile()));
  farm::v1::Action other_toolchain = a;
  *other_toolchain.mutable_toolchain()->mutable_tree() = DigestOf('c');
  farm::v1::Action other_inputs = a;
  *other_inputs.mutable_input_tree() = DigestOf('c');
  farm::v1::Action other_dir = a;
  other_dir.set_working_directory("/build2");
  for (const auto& b : {other_toolchain, other_inputs, other_dir}) {
    EXPECT_NE(ActionKey(a), ActionKey(b));
  }
}

TEST(ActionKeyTest, ImageActionsAreCheckedWhole) {
  EXPECT_TRUE(ValidateAction(ImageCompile()).ok());
  auto refused = [](const std::function<void(farm::v1::Action&)>& change, const std::string& why) {
    farm::v1::Action a = ImageCompile();
    change(a);
    const absl::Status s = ValidateAction(a);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << why;
    EXPECT_THAT(s.message(), ::testing::HasSubstr(why));
  };
  refused([](auto& a) { a.set_working_directory("build"); }, "not an absolute, normalized path");
  refused([](auto& a) { a.set_working_directory("/build/../etc"); },
          "not an absolute, normalized path");
  refused([](auto& a) { a.mutable_requirements()->set_sandbox(false); }, "and a sandbox");
  refused([](auto& a) { a.mutable_requirements()->set_cpu_arch("aarch64"); },
          "must require its toolchain's CPU arch");
  refused([](auto& a) { a.mutable_requirements()->clear_cpu_arch(); },
          "must require its toolchain's CPU arch");
  refused([](auto& a) { a.clear_input_tree(); }, "needs a toolchain and an input_tree");
  refused([](auto& a) { a.mutable_toolchain()->set_compiler("g++"); }, "not an absolute path");
  refused(
      [](auto& a) {
        auto* in = a.add_inputs();
        in->set_path("x");
        *in->mutable_digest() = DigestOf('d');
      },
      "inputs must be empty");
  refused([](auto& a) { a.clear_working_directory(); }, "needs a working_directory");
}

}  // namespace farm::coordinator
