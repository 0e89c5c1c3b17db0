// The index routes on a real HTTP server in-process: the per-arch-set indexes list only their
// files, their links reach the files, other spellings redirect and anything that is no arch
// set is a 404.
#include "coordinator/index/index_routes.h"

#include <httplib.h>

#include <filesystem>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "coordinator/index/package_index.h"
#include "libfarm/process/subprocess.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// A pure-Python wheel of demo-pkg at `version`, its name, dist-info and METADATA agreeing.
std::string WriteWheel(const fs::path& dir, const std::string& version) {
  const std::string name = absl::StrCat("demo_pkg-", version, "-py3-none-any.whl");
  const std::string script =
      "import sys, zipfile\n"
      "v = sys.argv[2]\n"
      "with zipfile.ZipFile(sys.argv[1], 'w') as z:\n"
      "  d = 'demo_pkg-' + v + '.dist-info'\n"
      "  z.writestr(d + '/METADATA', 'Metadata-Version: 2.1\\nName: demo-pkg\\nVersion: ' + v + "
      "'\\n\\n')\n"
      "  z.writestr(d + '/WHEEL', 'Wheel-Version: 1.0\\nTag: py3-none-any\\n')\n"
      "  z.writestr('demo_pkg/__init__.py', 'V = ' + repr(v) + '\\n')\n";
  auto r = RunCommand({"python3", "-c", script, (dir / name).string(), version});
  EXPECT_TRUE(r.ok() && r->exit_code == 0) << (r.ok() ? r->stderr_text : r.status().ToString());
  return (dir / name).string();
}

class IndexRoutesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("index_routes_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "in");
    auto state = StateStore::Open((dir_ / "state").string());
    ASSERT_TRUE(state.ok()) << state.status();
    state_ = std::move(*state);
    auto blobs = BlobStore::Open((dir_ / "cas").string(), state_.get(), 1 << 20);
    ASSERT_TRUE(blobs.ok()) << blobs.status();
    blobs_ = std::move(*blobs);
    auto index = PackageIndex::Open(state_.get(), blobs_.get());
    ASSERT_TRUE(index.ok()) << index.status();
    index_ = std::move(*index);
    // Two arch sets of one version, side by side, and a wheel from before arch sets.
    for (const char* version : {"1.0+cu130.sm75", "1.0+cu130.sm75.sm90", "0.9+cu130"}) {
      auto published = index_->Publish(WriteWheel(dir_ / "in", version));
      ASSERT_TRUE(published.ok()) << published.status();
    }
    RegisterIndexRoutes(server_, index_.get(), {});
    port_ = server_.bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  void TearDown() override {
    server_.stop();
    if (thread_.joinable()) thread_.join();
    index_.reset();
    blobs_.reset();
    state_.reset();
    fs::remove_all(dir_);
  }

  httplib::Result Get(const std::string& path) {
    httplib::Client client("127.0.0.1", port_);
    return client.Get(path);
  }

  fs::path dir_;
  std::unique_ptr<StateStore> state_;
  std::unique_ptr<BlobStore> blobs_;
  std::unique_ptr<PackageIndex> index_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

TEST_F(IndexRoutesTest, EachArchSetHasAnIndexOfItsOwnFilesBesideTheWholeOne) {
  auto whole = Get("/simple/demo-pkg/");
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->status, 200);
  for (const char* name : {"demo_pkg-1.0+cu130.sm75-py3", "demo_pkg-1.0+cu130.sm75.sm90-py3",
                           "demo_pkg-0.9+cu130-py3"}) {
    EXPECT_THAT(whole->body, HasSubstr(name));
  }

  auto sm75 = Get("/sm75/simple/demo-pkg/");
  ASSERT_TRUE(sm75);
  ASSERT_EQ(sm75->status, 200) << sm75->body;
  EXPECT_THAT(sm75->body, HasSubstr("demo_pkg-1.0+cu130.sm75-py3-none-any.whl"));
  EXPECT_THAT(sm75->body, Not(HasSubstr("sm90")));
  EXPECT_THAT(sm75->body, Not(HasSubstr("0.9+cu130")));
  // Its links lead from /sm75/simple/demo-pkg/ up to /files/, where the wheel is served.
  const size_t href = sm75->body.find("href=\"../../../files/");
  ASSERT_NE(href, std::string::npos) << sm75->body;
  const size_t start = href + std::string("href=\"../../../").size();
  const std::string file_path = "/" + sm75->body.substr(start, sm75->body.find('#', start) - start);
  auto file = Get(file_path);
  ASSERT_TRUE(file);
  EXPECT_EQ(file->status, 200) << file_path;

  auto both = Get("/sm75-sm90/simple/demo-pkg/");
  ASSERT_TRUE(both);
  ASSERT_EQ(both->status, 200) << both->body;
  EXPECT_THAT(both->body, HasSubstr("demo_pkg-1.0+cu130.sm75.sm90-py3-none-any.whl"));
  EXPECT_THAT(both->body, Not(HasSubstr("demo_pkg-1.0+cu130.sm75-py3")));
  auto root = Get("/sm75-sm90/simple/");
  ASSERT_TRUE(root);
  EXPECT_EQ(root->status, 200);
  EXPECT_THAT(root->body, HasSubstr(">demo-pkg<"));
}

TEST_F(IndexRoutesTest, OtherSpellingsRedirectAndUnpublishedSetsSayWhatIsThere) {
  auto swapped = Get("/sm90-sm75/simple/demo-pkg/");
  ASSERT_TRUE(swapped);
  EXPECT_EQ(swapped->status, 301);
  EXPECT_EQ(swapped->get_header_value("Location"), "/sm75-sm90/simple/demo-pkg/");
  auto bare = Get("/sm75/simple");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->status, 301);
  EXPECT_EQ(bare->get_header_value("Location"), "/sm75/simple/");
  auto unnormalized = Get("/sm75/simple/Demo_Pkg");
  ASSERT_TRUE(unnormalized);
  EXPECT_EQ(unnormalized->status, 301);
  EXPECT_EQ(unnormalized->get_header_value("Location"), "/sm75/simple/demo-pkg/");

  auto none = Get("/sm80/simple/");
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 404);
  EXPECT_THAT(none->body, HasSubstr("arch sets here: sm75, sm75-sm90"));
  auto absent = Get("/sm80/simple/demo-pkg/");
  ASSERT_TRUE(absent);
  EXPECT_EQ(absent->status, 404);
  EXPECT_THAT(absent->body, HasSubstr("for arch set sm80"));
}

TEST_F(IndexRoutesTest, AnythingThatIsNoArchSetIsA404NeverAPath) {
  // Written raw: httplib's client would not send some of these as they are.
  for (const char* path :
       {"/..%2f..%2fstate/simple/", "/%2e%2e/simple/demo-pkg/", "/../simple/demo-pkg/",
        "/sm75%2f..%2f..%2fcas/simple/", "/sm75%00/simple/demo-pkg/", "/files/simple/",
        "/simple/simple/", "/SM75/simple/demo-pkg/", "/sm_75/simple/", "/sm75;rm/simple/",
        "/sm75%0d%0aX-Evil:%201/simple/demo-pkg/", "/cu130-sm75/simple/demo-pkg/",
        "/sm75-sm75/simple/", "/compute75/simple/"}) {
    auto r = Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 404) << path << ": " << r->body;
    EXPECT_FALSE(r->has_header("X-Evil")) << path;
    EXPECT_THAT(r->body, Not(HasSubstr("demo_pkg-"))) << path;
  }
}

}  // namespace
}  // namespace farm::coordinator
