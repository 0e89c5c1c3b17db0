#include "worker/sandbox.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_join.h"

namespace farm::worker {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// A fake host layout: a system directory, a merged-/usr style symlink, a config directory
// with the token under the system one, and a work dir holding a scratch dir.
class SandboxArgvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("sandbox_test_" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "usr" / "bin");
    fs::create_directory_symlink("usr/bin", root_ / "bin");
    fs::create_directories(root_ / "etc" / "wheelfarm");
    std::ofstream(root_ / "etc" / "wheelfarm" / "token") << "secret\n";
    fs::create_directories(root_ / "work" / "scratch" / "L1" / "root");
    fs::create_directories(root_ / "toolkit");
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string P(const std::string& rel) const { return (root_ / rel).string(); }

  Sandbox Make(std::vector<std::string> hidden = {}) const {
    return Sandbox({.bwrap = "/usr/bin/bwrap",
                    .system = {P("usr"), P("bin"), P("etc"), P("absent")},
                    .hidden = std::move(hidden)});
  }

  // Where the (first) 3-word option `flag A B` is in argv, or -1.
  static int Find(const std::vector<std::string>& argv, const std::vector<std::string>& words) {
    for (size_t i = 0; i + words.size() <= argv.size(); ++i) {
      if (std::equal(words.begin(), words.end(), argv.begin() + static_cast<long>(i))) {
        return static_cast<int>(i);
      }
    }
    return -1;
  }

  fs::path root_;
};

TEST_F(SandboxArgvTest, NamespacesUnprivilegedUserNoNetworkAndTheCommandLast) {
  const auto argv = Make().Wrap({"sh", "-c", "echo hi"}, P("work/scratch/L1/root"), {});
  ASSERT_FALSE(argv.empty());
  EXPECT_EQ(argv[0], "/usr/bin/bwrap");
  for (const char* flag : {"--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
                           "--unshare-net", "--die-with-parent", "--disable-userns"}) {
    EXPECT_GE(Find(argv, {flag}), 0) << flag;
  }
  EXPECT_GE(Find(argv, {"--uid", "65534"}), 0);
  EXPECT_GE(Find(argv, {"--gid", "65534"}), 0);
  EXPECT_GE(Find(argv, {"--proc", "/proc"}), 0);
  EXPECT_GE(Find(argv, {"--tmpfs", "/tmp"}), 0);
  EXPECT_GE(Find(argv, {"--chdir", P("work/scratch/L1/root")}), 0);
  ASSERT_GE(argv.size(), 4u);
  EXPECT_THAT(std::vector<std::string>(argv.end() - 4, argv.end()),
              ElementsAre("--", "sh", "-c", "echo hi"));
}

TEST_F(SandboxArgvTest, NetworkOnlyWhenAskedFor) {
  const auto argv = Make().Wrap({"true"}, "", {.network = true});
  EXPECT_EQ(Find(argv, {"--unshare-net"}), -1);
  EXPECT_EQ(Find(argv, {"--chdir"}), -1);
}

// A smoke test sees the GPU: the host's device nodes it names, and only under /dev.
TEST_F(SandboxArgvTest, DeviceNodesAreBoundOnlyUnderDev) {
  SandboxMounts mounts;
  mounts.devices = {"/dev/nvidia0", "/dev/nvidiactl", "/etc/passwd", "/dev/../etc/shadow", "/dev"};
  const auto argv = Make().Wrap({"true"}, "", mounts);
  const int dev = Find(argv, {"--dev", "/dev"});
  EXPECT_GE(dev, 0);
  EXPECT_GT(Find(argv, {"--dev-bind", "/dev/nvidia0", "/dev/nvidia0"}), dev);
  EXPECT_GT(Find(argv, {"--dev-bind", "/dev/nvidiactl", "/dev/nvidiactl"}), dev);
  const std::string joined = absl::StrJoin(argv, " ");
  EXPECT_THAT(joined, Not(HasSubstr("/etc/passwd")));
  EXPECT_THAT(joined, Not(HasSubstr("shadow")));
  EXPECT_EQ(Find(argv, {"--dev-bind", "/dev", "/dev"}), -1);
}

TEST_F(SandboxArgvTest, SystemReadOnlySymlinksKeptMissingSkipped) {
  const auto argv = Make().Wrap({"true"}, "", {});
  EXPECT_GE(Find(argv, {"--ro-bind", P("usr"), P("usr")}), 0);
  EXPECT_GE(Find(argv, {"--ro-bind", P("etc"), P("etc")}), 0);
  EXPECT_GE(Find(argv, {"--symlink", "usr/bin", P("bin")}), 0);
  EXPECT_THAT(absl::StrJoin(argv, " "), Not(HasSubstr(P("absent"))));
}

TEST_F(SandboxArgvTest, MountsWritableReadOnlyAndPrivateAtTheSamePath) {
  const auto argv = Make().Wrap({"true"}, "",
                                {.read_only = {P("toolkit"), P("usr/bin"), P("no-such-dir")},
                                 .writable = {P("work/scratch/L1/root")},
                                 .private_dirs = {P("home"), P("usr")}});
  EXPECT_GE(Find(argv, {"--ro-bind", P("toolkit"), P("toolkit")}), 0);
  EXPECT_GE(Find(argv, {"--bind", P("work/scratch/L1/root"), P("work/scratch/L1/root")}), 0);
  EXPECT_GE(Find(argv, {"--tmpfs", P("home")}), 0);
  const std::string joined = absl::StrJoin(argv, " ");
  // Already visible through /usr; a path that does not exist; a tmpfs over the system.
  EXPECT_THAT(joined, Not(HasSubstr("--ro-bind " + P("usr/bin"))));
  EXPECT_THAT(joined, Not(HasSubstr("no-such-dir")));
  EXPECT_THAT(joined, Not(HasSubstr("--tmpfs " + P("usr"))));
}

TEST_F(SandboxArgvTest, HiddenPathsMaskedAfterTheirParentsAndBeforeMountsBelowThem) {
  const auto argv =
      Make({P("etc/wheelfarm"), P("work"), P("elsewhere-not-mounted")})
          .Wrap({"true"}, "", {.read_only = {P("work")}, .writable = {P("work/scratch/L1/root")}});
  const int etc = Find(argv, {"--ro-bind", P("etc"), P("etc")});
  const int config = Find(argv, {"--tmpfs", P("etc/wheelfarm")});
  const int work = Find(argv, {"--ro-bind", P("work"), P("work")});
  const int work_hidden = Find(argv, {"--tmpfs", P("work")});
  const int scratch = Find(argv, {"--bind", P("work/scratch/L1/root"), P("work/scratch/L1/root")});
  ASSERT_GE(etc, 0);
  ASSERT_GE(config, 0);
  ASSERT_GE(work, 0);
  ASSERT_GE(work_hidden, 0);
  ASSERT_GE(scratch, 0);
  EXPECT_LT(etc, config);
  EXPECT_LT(work, work_hidden);
  EXPECT_LT(work_hidden, scratch);  // the scratch dir is still there, under the empty work dir
  EXPECT_THAT(absl::StrJoin(argv, " "), Not(HasSubstr("elsewhere-not-mounted")));
}

TEST_F(SandboxArgvTest, HiddenFileBecomesDevNull) {
  const auto argv = Make({P("etc/wheelfarm/token")}).Wrap({"true"}, "", {});
  EXPECT_GE(Find(argv, {"--ro-bind", "/dev/null", P("etc/wheelfarm/token")}), 0);
}

// Line info: stand-ins for the submitting host's sources appear where the sandbox has nothing
// of the host's, or over a regular file of a read-only tree; never in a writable directory,
// /proc or /dev, never where a new file cannot be made, and after their parents' mounts.
TEST_F(SandboxArgvTest, StandInsOnlyWhereTheyCanBeAndAfterTheirParents) {
  std::ofstream(root_ / "usr" / "bin" / "header.h") << "real\n";
  std::ofstream(root_ / "usr" / "bin" / "linked.h") << "real\n";
  const std::string stand_in = P("work/stamps/0");
  SandboxMounts mounts;
  mounts.writable = {P("work/scratch/L1/root")};
  mounts.stand_ins = {
      {stand_in, "/src/proj/k.cu"},          {stand_in, P("usr/bin/header.h")},
      {stand_in, P("usr/bin/absent.h")},     {stand_in, P("bin/absent.h")},
      {stand_in, P("bin/linked.h")},         {stand_in, P("work/scratch/L1/root/k.cu")},
      {stand_in, "/proc/self/status"},       {stand_in, "/dev/null"},
      {stand_in, "/src/proj/../etc/passwd"}, {stand_in, "relative.cu"}};
  const auto argv = Make().Wrap({"true"}, "", mounts);
  const int outside = Find(argv, {"--ro-bind", stand_in, "/src/proj/k.cu"});
  EXPECT_GE(outside, 0);
  const int over_file = Find(argv, {"--ro-bind", stand_in, P("usr/bin/header.h")});
  EXPECT_GT(over_file, Find(argv, {"--ro-bind", P("usr"), P("usr")}));
  // Through the merged-/usr link: at the file's real path, where bwrap can mount over it.
  EXPECT_GE(Find(argv, {"--ro-bind", stand_in, P("usr/bin/linked.h")}), 0);
  for (const std::string& never :
       {P("usr/bin/absent.h"), P("bin/absent.h"), P("bin/linked.h"), P("work/scratch/L1/root/k.cu"),
        std::string("/proc/self/status"), std::string("/dev/null"),
        std::string("/src/proj/../etc/passwd"), std::string("relative.cu")}) {
    EXPECT_EQ(Find(argv, {"--ro-bind", stand_in, never}), -1) << never;
  }
}

// A filesystem image: its top-level entries read-only (the worker links cached files into
// them), a private /tmp with the image's /tmp entries read-only in it, then the outputs'
// directories writable over them, then the toolchain's files; "" makes the whole image writable.
TEST_F(SandboxArgvTest, AnImageIsReadOnlyButForItsOutputsDirectories) {
  const std::string image = P("work/scratch/L1/root");
  fs::create_directories(fs::path(image) / "usr" / "include");
  fs::create_directories(fs::path(image) / "tmp" / "src" / "build" / "obj");
  fs::create_directories(fs::path(image) / "tmp" / "other");
  fs::create_directories(fs::path(image) / "proc");
  fs::create_directory_symlink("usr/lib", fs::path(image) / "lib");
  SandboxMounts mounts;
  mounts.image_root = image;
  mounts.image_writable = {"tmp/src/build/obj", "tmp/src/build"};
  mounts.image_files = {{P("toolkit/g++"), "/usr/bin/g++"}};
  const auto argv = Make().Wrap({"g++"}, "/tmp/src/build", mounts);
  const int usr = Find(argv, {"--ro-bind", image + "/usr", "/usr"});
  const int tmp = Find(argv, {"--tmpfs", "/tmp"});
  const int src = Find(argv, {"--ro-bind", image + "/tmp/src", "/tmp/src"});
  const int build = Find(argv, {"--bind", image + "/tmp/src/build", "/tmp/src/build"});
  const int obj = Find(argv, {"--bind", image + "/tmp/src/build/obj", "/tmp/src/build/obj"});
  const int tool = Find(argv, {"--ro-bind", P("toolkit/g++"), "/usr/bin/g++"});
  ASSERT_GE(usr, 0);
  EXPECT_GE(Find(argv, {"--symlink", "usr/lib", "/lib"}), 0);
  EXPECT_GE(Find(argv, {"--ro-bind", image + "/tmp/other", "/tmp/other"}), 0);
  ASSERT_GE(tmp, 0);
  ASSERT_GE(src, 0);
  EXPECT_LT(tmp, src);
  EXPECT_LT(src, build);
  EXPECT_LT(build, obj);
  EXPECT_LT(obj, tool);
  const std::string joined = absl::StrJoin(argv, " ");
  EXPECT_THAT(joined, Not(HasSubstr("--bind " + image + "/usr")));
  EXPECT_THAT(joined, Not(HasSubstr(image + "/tmp /tmp")));
  EXPECT_THAT(joined, Not(HasSubstr(image + "/proc")));

  mounts.image_writable = {""};
  const auto all = Make().Wrap({"g++"}, "/tmp/src/build", mounts);
  EXPECT_GE(Find(all, {"--bind", image + "/usr", "/usr"}), 0);
  EXPECT_GE(Find(all, {"--bind", image + "/tmp", "/tmp"}), 0);
  EXPECT_EQ(Find(all, {"--tmpfs", "/tmp"}), -1);
}

TEST(SandboxProbeTest, MissingBwrapSaysHowToFixIt) {
  Sandbox sandbox({.bwrap = "/nonexistent/bwrap"});
  absl::Status s = sandbox.Probe();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("apt-get install bubblewrap"));
  EXPECT_THAT(s.message(), HasSubstr("--no-sandbox"));
}

TEST(SandboxProbeTest, BwrapThatCannotMakeNamespacesIsRefused) {
  // What bwrap says on a host without unprivileged user namespaces.
  const fs::path fake = fs::temp_directory_path() / ("fake_bwrap_" + std::to_string(::getpid()));
  std::ofstream(fake) << "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\n"
                         "exit 1\n";
  fs::permissions(fake, fs::perms(0755));
  absl::Status s = Sandbox({.bwrap = fake.string()}).Probe();
  fs::remove(fake);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(s.message(), HasSubstr("No permissions to creating new namespace"));
  EXPECT_THAT(s.message(), HasSubstr("user.max_user_namespaces"));
}

// The real thing: this host (and CI) must be able to sandbox, or the worker would not start.
TEST(SandboxProbeTest, BubblewrapWorksHere) {
  Sandbox sandbox({});
  ASSERT_FALSE(sandbox.bwrap().empty()) << "bwrap is not installed: apt-get install bubblewrap";
  EXPECT_TRUE(sandbox.Probe().ok()) << sandbox.Probe();
}

}  // namespace
}  // namespace farm::worker
