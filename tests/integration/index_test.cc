// The built-in package index and publishing, through real tools on loopback: twine uploads
// a freshly built wheel to the coordinator, pip installs it back into a fresh venv with hash
// checking, the PEP 691 JSON and PEP 503 HTML pages agree, bad uploads are refused with
// clear answers while the coordinator keeps serving, and a restart keeps the package.
// `farmctl publish` uploads to a real pypiserver, to the built-in index and through a
// command hook. The Python tools come from the repository's .venv (scripts/install-deps.sh).
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <httplib.h>

#include <fstream>
#include <regex>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "libfarm/digest/digest.h"
#include "libfarm/net/address.h"
#include "libfarm/process/subprocess.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kPython[] = FARM_TOOLS_PYTHON;
constexpr char kProject[] = "farm-index-demo";
constexpr char kVersion[] = "1.0+cu126";
constexpr char kWheelName[] = "farm_index_demo-1.0+cu126-py3-none-any.whl";
// Keeps twine from prompting or asking a desktop keyring for passwords.
const std::vector<std::string> kQuietPythonEnv = {
    "PYTHON_KEYRING_BACKEND=keyring.backends.null.Keyring", "PIP_NO_INPUT=1",
    "PIP_DISABLE_PIP_VERSION_CHECK=1"};

CommandResult RunTool(const std::vector<std::string>& argv,
                      absl::Duration timeout = absl::Seconds(120),
                      std::vector<std::string> env = {}) {
  env.insert(env.end(), kQuietPythonEnv.begin(), kQuietPythonEnv.end());
  auto r = RunCommand(argv, timeout, env);
  if (!r.ok()) return CommandResult{-1, "", std::string(r.status().message())};
  return *r;
}

std::string Sha256Of(const std::string& bytes) { return DigestOfBytes(bytes).hash(); }

// Fails the test loudly when the tools venv is missing: nothing here is skipped.
void RequireTools() {
  ASSERT_TRUE(fs::exists(kPython)) << kPython
                                   << " is missing. Fix: bash scripts/install-deps.sh creates the "
                                      "tools venv (twine, pypiserver, passlib, build)";
}

// Builds a tiny pure-Python wheel offline (no build isolation, no index) into `out`.
// The distribution name is deliberately not normalized, to exercise PEP 503 names.
std::string BuildDemoWheel(const TempDir& dir, const std::string& out) {
  const std::string src = dir / "src";
  WriteText(src + "/pyproject.toml",
            absl::StrCat("[build-system]\nrequires = [\"setuptools>=61\"]\n"
                         "build-backend = \"setuptools.build_meta\"\n\n"
                         "[project]\nname = \"Farm_Index.Demo\"\nversion = \"",
                         kVersion,
                         "\"\nrequires-python = \">=3.8\"\ndescription = \"index test\"\n\n"
                         "[tool.setuptools]\npackages = [\"farm_index_demo\"]\n"));
  WriteText(src + "/farm_index_demo/__init__.py", "ANSWER = 42\n");
  CommandResult r = RunTool({kPython, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                             "--no-index", "--no-cache-dir", "-q", "-w", out, src});
  EXPECT_EQ(r.exit_code, 0) << Output(r);
  const std::string wheel = absl::StrCat(out, "/", kWheelName);
  EXPECT_TRUE(fs::exists(wheel)) << Output(r);
  return wheel;
}

httplib::Client HttpTo(const std::string& address) {
  auto hp = ParseHostPort(address);
  EXPECT_TRUE(hp.ok()) << address;
  httplib::Client client(hp->host, hp->port);
  client.set_read_timeout(std::chrono::seconds(30));
  return client;
}

httplib::Result Get(httplib::Client& client, const std::string& path, const std::string& accept) {
  httplib::Headers headers;
  if (!accept.empty()) headers.emplace("Accept", accept);
  return client.Get(path.c_str(), headers);
}

constexpr char kJson[] = "application/vnd.pypi.simple.v1+json";
// What pip 23+ sends.
constexpr char kPipAccept[] =
    "application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html; q=0.1, "
    "text/html; q=0.01";

// The hand-made upload twine would send, with the fields we choose to break.
httplib::Result PostUpload(httplib::Client& client, const std::string& token,
                           const std::string& filename, const std::string& bytes,
                           const std::string& sha256_digest) {
  httplib::MultipartFormDataItems items = {
      {":action", "file_upload", "", ""},
      {"protocol_version", "1", "", ""},
      {"name", "Farm_Index.Demo", "", ""},
      {"version", kVersion, "", ""},
      {"filetype", "bdist_wheel", "", ""},
      {"pyversion", "py3", "", ""},
      {"metadata_version", "2.1", "", ""},
      {"sha256_digest", sha256_digest, "", ""},
      {"content", bytes, filename, "application/octet-stream"}};
  if (!token.empty()) client.set_basic_auth("__token__", token.c_str());
  auto res = client.Post("/legacy/", items);
  client.set_basic_auth("", "");
  return res;
}

// A free loopback port for a server that cannot pick its own and report it.
// file name -> sha256 from a project page in either format.
std::map<std::string, std::string> FilesFromHtml(const std::string& html) {
  std::map<std::string, std::string> out;
  const std::regex link(R"re(<a href="([^"#]+)#sha256=([0-9a-f]{64})"[^>]*>([^<]+)</a>)re");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), link); it != std::sregex_iterator();
       ++it) {
    out[(*it)[3]] = (*it)[2];
  }
  return out;
}

TEST(IndexTest, TwineUploadsPipInstallsBadUploadsAreRefusedAndRestartKeepsIt) {
  RequireTools();
  TempDir dir("index");
  const std::string wheel = BuildDemoWheel(dir, dir / "dist");
  ASSERT_TRUE(fs::exists(wheel));
  const std::string wheel_bytes = ReadFile(wheel);
  const std::string wheel_sha = Sha256Of(wheel_bytes);

  auto started = TestFarm::Start(dir.path(), FarmOptions{});
  ASSERT_TRUE(started.ok()) << started.status();
  TestFarm& test_farm = **started;
  const std::string base = absl::StrCat("http://", test_farm.coordinator().http_address());
  const std::string token = test_farm.AdminToken();
  httplib::Client http = HttpTo(test_farm.coordinator().http_address());

  // twine with a wrong token: refused, and twine says why.
  CommandResult bad = RunTool({kPython, "-m", "twine", "upload", "--non-interactive",
                               "--disable-progress-bar", "--repository-url", base + "/legacy/",
                               "-u", "__token__", "-p", "not-the-farm-token", wheel});
  EXPECT_NE(bad.exit_code, 0) << Output(bad);
  EXPECT_THAT(bad.stdout_text + bad.stderr_text, HasSubstr("401")) << Output(bad);

  // twine with the farm token: accepted; the same file again: still fine (idempotent).
  CommandResult up =
      RunTool({kPython, "-m", "twine", "upload", "--non-interactive", "--disable-progress-bar",
               "--repository-url", base + "/legacy/", "-u", "__token__", "-p", token, wheel});
  ASSERT_EQ(up.exit_code, 0) << Output(up);
  CommandResult again =
      RunTool({kPython, "-m", "twine", "upload", "--non-interactive", "--disable-progress-bar",
               "--repository-url", base + "/legacy/", "-u", "__token__", "-p", token, wheel});
  EXPECT_EQ(again.exit_code, 0) << Output(again);

  // The simple API: HTML and JSON list the same file with the same hash.
  auto root_html = Get(http, "/simple/", "text/html");
  ASSERT_TRUE(root_html);
  EXPECT_EQ(root_html->status, 200);
  EXPECT_THAT(root_html->body, HasSubstr(absl::StrCat("<a href=\"", kProject, "/\">")));
  auto root_json = Get(http, "/simple/", kJson);
  ASSERT_TRUE(root_json);
  EXPECT_EQ(root_json->get_header_value("Content-Type"), kJson);
  EXPECT_EQ(nlohmann::json::parse(root_json->body)["projects"][0]["name"], kProject);

  const std::string page = absl::StrCat("/simple/", kProject, "/");
  auto html = Get(http, page, "text/html");
  ASSERT_TRUE(html);
  ASSERT_EQ(html->status, 200) << html->body;
  EXPECT_THAT(html->body, HasSubstr("data-requires-python=\"&gt;=3.8\""));
  auto json_res = Get(http, page, kPipAccept);
  ASSERT_TRUE(json_res);
  ASSERT_EQ(json_res->status, 200);
  EXPECT_EQ(json_res->get_header_value("Content-Type"), kJson);
  const auto json = nlohmann::json::parse(json_res->body);
  EXPECT_EQ(json["name"], kProject);
  ASSERT_EQ(json["files"].size(), 1u);
  const auto& file = json["files"][0];
  EXPECT_EQ(file["filename"], kWheelName);
  EXPECT_EQ(file["hashes"]["sha256"], wheel_sha);
  EXPECT_EQ(file["size"], wheel_bytes.size());
  EXPECT_EQ(file["requires-python"], ">=3.8");
  EXPECT_EQ(FilesFromHtml(html->body),
            (std::map<std::string, std::string>{{kWheelName, wheel_sha}}));
  EXPECT_THAT(html->body, HasSubstr(absl::StrCat("href=\"", file["url"].get<std::string>(), "#")));

  // Non-normalized names redirect; unknown projects are 404; unacceptable types 406.
  auto odd = Get(http, "/simple/Farm_Index.Demo/", "");
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->status, 301);
  EXPECT_EQ(odd->get_header_value("Location"), page);
  auto no_slash = Get(http, absl::StrCat("/simple/", kProject), "");
  ASSERT_TRUE(no_slash);
  EXPECT_EQ(no_slash->status, 301);
  EXPECT_EQ(Get(http, "/simple/nope/", "")->status, 404);
  EXPECT_EQ(Get(http, page, "image/png")->status, 406);

  // The file (its relative URL resolved against the page) and its PEP 658 metadata.
  std::string url = file["url"];
  ASSERT_EQ(url.rfind("../../files/", 0), 0u) << url;
  url = "/" + url.substr(6);
  auto download = http.Get(url.c_str());
  ASSERT_TRUE(download);
  ASSERT_EQ(download->status, 200);
  EXPECT_EQ(download->get_header_value("Content-Length"), std::to_string(wheel_bytes.size()));
  EXPECT_EQ(download->get_header_value("Content-Type"), "application/octet-stream");
  EXPECT_EQ(Sha256Of(download->body), wheel_sha);
  auto metadata = http.Get((url + ".metadata").c_str());
  ASSERT_TRUE(metadata);
  EXPECT_EQ(metadata->status, 200);
  EXPECT_EQ(Sha256Of(metadata->body), file["core-metadata"]["sha256"]);
  EXPECT_THAT(metadata->body, HasSubstr("Name: "));
  EXPECT_EQ(
      http.Get(absl::StrCat("/files/", std::string(64, 'a'), "/", kWheelName).c_str())->status,
      404);

  // Hand-made bad uploads: each is refused with a reason, and nothing changes.
  auto mismatch = PostUpload(http, token, kWheelName, wheel_bytes, std::string(64, '0'));
  ASSERT_TRUE(mismatch);
  EXPECT_EQ(mismatch->status, 400);
  EXPECT_THAT(mismatch->body, HasSubstr(absl::StrCat("sha256_digest says ", std::string(64, '0'))));
  EXPECT_THAT(mismatch->body, HasSubstr(wheel_sha));
  auto escape =
      PostUpload(http, token, "../farm_index_demo-1.0-py3-none-any.whl", wheel_bytes, wheel_sha);
  ASSERT_TRUE(escape);
  EXPECT_EQ(escape->status, 400);
  EXPECT_THAT(escape->body, HasSubstr("path separator"));
  auto dots =
      PostUpload(http, token, "..farm_index_demo-1.0-py3-none-any.whl", wheel_bytes, wheel_sha);
  ASSERT_TRUE(dots);
  EXPECT_EQ(dots->status, 400);
  auto anonymous = PostUpload(http, "", kWheelName, wheel_bytes, wheel_sha);
  ASSERT_TRUE(anonymous);
  EXPECT_EQ(anonymous->status, 401);
  EXPECT_THAT(anonymous->get_header_value("WWW-Authenticate"), HasSubstr("Basic"));
  auto sdist =
      PostUpload(http, token, "farm_index_demo-1.0.tar.gz", wheel_bytes, Sha256Of(wheel_bytes));
  ASSERT_TRUE(sdist);
  EXPECT_EQ(sdist->status, 400);
  EXPECT_THAT(sdist->body, HasSubstr("wheels (.whl) only"));
  // Same name, different bytes (one more member): "File already exists", 409.
  const std::string other = dir / "other.whl";
  CommandResult zip = RunTool({kPython, "-c",
                               "import sys, zipfile\n"
                               "src = zipfile.ZipFile(sys.argv[1])\n"
                               "with zipfile.ZipFile(sys.argv[2], 'w') as z:\n"
                               "  for i in src.infolist(): z.writestr(i, src.read(i))\n"
                               "  z.writestr('farm_index_demo/extra.py', 'x = 1\\n')\n",
                               wheel, other});
  ASSERT_EQ(zip.exit_code, 0) << Output(zip);
  const std::string other_bytes = ReadFile(other);
  auto conflict = PostUpload(http, token, kWheelName, other_bytes, Sha256Of(other_bytes));
  ASSERT_TRUE(conflict);
  EXPECT_EQ(conflict->status, 409);
  EXPECT_THAT(conflict->body, HasSubstr("File already exists"));
  // The same through twine and farmctl. (twine >= 6 refuses --skip-existing for any
  // repository but PyPI, so only farmctl can show that it skips the 409.)
  const std::string renamed = dir / absl::StrCat("other/", kWheelName);
  fs::create_directories(dir / "other");
  fs::copy_file(other, renamed);
  CommandResult twine_conflict =
      RunTool({kPython, "-m", "twine", "upload", "--non-interactive", "--disable-progress-bar",
               "--repository-url", base + "/legacy/", "-u", "__token__", "-p", token, renamed});
  EXPECT_NE(twine_conflict.exit_code, 0) << Output(twine_conflict);
  EXPECT_THAT(twine_conflict.stdout_text + twine_conflict.stderr_text, HasSubstr("409"));
  const std::vector<std::string> farm = {"--coordinator", test_farm.address(), "--token-file",
                                         test_farm.admin_token_file()};
  std::vector<std::string> publish = farm;
  publish.insert(publish.end(), {"publish", renamed, "--to", "builtin"});
  CommandResult taken = RunFarmctl(publish);
  EXPECT_EQ(taken.exit_code, 2) << Output(taken);
  EXPECT_THAT(taken.stderr_text, HasSubstr("File already exists"));
  publish.push_back("--skip-existing");
  CommandResult skipped = RunFarmctl(publish);
  EXPECT_EQ(skipped.exit_code, 0) << Output(skipped);
  EXPECT_THAT(skipped.stdout_text, HasSubstr("already present"));
  // A wheel whose METADATA does not match the form's name.
  httplib::MultipartFormDataItems wrong_name = {
      {":action", "file_upload", "", ""},
      {"name", "someone-else", "", ""},
      {"version", kVersion, "", ""},
      {"sha256_digest", wheel_sha, "", ""},
      {"content", wheel_bytes, "farm_index_demo-1.0+cu126-py2-none-any.whl", ""}};
  http.set_basic_auth("__token__", token.c_str());
  auto named = http.Post("/legacy/", wrong_name);
  http.set_basic_auth("", "");
  ASSERT_TRUE(named);
  EXPECT_EQ(named->status, 400);
  EXPECT_THAT(named->body, HasSubstr("someone-else"));
  auto healthy = http.Get("/healthz");
  ASSERT_TRUE(healthy);
  EXPECT_EQ(healthy->status, 200);
  EXPECT_EQ(FilesFromHtml(Get(http, page, "text/html")->body),
            (std::map<std::string, std::string>{{kWheelName, wheel_sha}}));

  // pip: a wrong pinned hash is caught...
  WriteText(dir / "bad-req.txt",
            absl::StrCat(kProject, "==", kVersion, " --hash=sha256:", std::string(64, 'f'), "\n"));
  CommandResult mismatch_pip =
      RunTool({kPython, "-m", "pip", "download", "--no-deps", "--no-cache-dir", "-d", dir / "dl",
               "--index-url", base + "/simple/", "--require-hashes", "-r", dir / "bad-req.txt"});
  EXPECT_NE(mismatch_pip.exit_code, 0) << Output(mismatch_pip);
  EXPECT_THAT(mismatch_pip.stderr_text, HasSubstr("DO NOT MATCH"));
  // ...and the right one installs into a fresh venv, and the module imports.
  WriteText(dir / "req.txt",
            absl::StrCat(kProject, "==", kVersion, " --hash=sha256:", wheel_sha, "\n"));
  CommandResult venv = RunTool({kPython, "-m", "venv", dir / "venv"});
  ASSERT_EQ(venv.exit_code, 0) << Output(venv);
  const std::string venv_python = dir / "venv/bin/python";
  CommandResult install =
      RunTool({venv_python, "-m", "pip", "install", "--no-cache-dir", "--index-url",
               base + "/simple/", "--require-hashes", "-r", dir / "req.txt"});
  ASSERT_EQ(install.exit_code, 0) << Output(install);
  CommandResult imported =
      RunTool({venv_python, "-c", "import farm_index_demo; print(farm_index_demo.ANSWER)"});
  EXPECT_EQ(imported.exit_code, 0) << Output(imported);
  EXPECT_EQ(imported.stdout_text, "42\n");

  // A restart keeps the package listed and served.
  test_farm.coordinator().process().Signal(SIGTERM);
  ASSERT_EQ(test_farm.coordinator().process().Wait(absl::Seconds(15)), 0);
  absl::Status restarted = test_farm.RestartCoordinator();
  ASSERT_TRUE(restarted.ok()) << restarted;
  httplib::Client after = HttpTo(test_farm.coordinator().http_address());
  auto listed = Get(after, page, kJson);
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->status, 200);
  EXPECT_EQ(nlohmann::json::parse(listed->body)["files"][0]["hashes"]["sha256"], wheel_sha);
  auto served = after.Get(url.c_str());
  ASSERT_TRUE(served);
  EXPECT_EQ(Sha256Of(served->body), wheel_sha);
  test_farm.coordinator().process().Signal(SIGTERM);
  test_farm.coordinator().process().Wait(absl::Seconds(15));
}

// A wheel named `filename` for project `name` at `version`, whose module holds `payload`
// (so two wheels of one release can differ), written with zipfile into `dir`.
std::string WriteProbeWheel(const std::string& dir, const std::string& filename,
                            const std::string& name, const std::string& version,
                            const std::string& payload) {
  fs::create_directories(dir);
  const std::string path = absl::StrCat(dir, "/", filename);
  CommandResult r =
      RunTool({kPython, "-c",
               "import sys, zipfile\n"
               "path, name, version, payload = sys.argv[1:5]\n"
               "di = name + '-' + version + '.dist-info'\n"
               "with zipfile.ZipFile(path, 'w') as z:\n"
               "  z.writestr(di + '/METADATA', 'Metadata-Version: 2.1\\nName: %s\\nVersion: %s\\n' "
               "% (name, version))\n"
               "  z.writestr(di + '/WHEEL', 'Wheel-Version: 1.0\\nTag: py3-none-any\\n')\n"
               "  z.writestr('probe_ok/__init__.py', payload)\n",
               path, name, version, payload});
  EXPECT_EQ(r.exit_code, 0) << Output(r);
  return path;
}

httplib::Result Upload(httplib::Client& client, const std::string& token, const std::string& path,
                       const std::string& name, const std::string& version) {
  const std::string bytes = ReadFile(path);
  httplib::MultipartFormDataItems items = {
      {":action", "file_upload", "", ""},
      {"name", name, "", ""},
      {"version", version, "", ""},
      {"filetype", "bdist_wheel", "", ""},
      {"sha256_digest", Sha256Of(bytes), "", ""},
      {"content", bytes, fs::path(path).filename().string(), "application/octet-stream"}};
  client.set_basic_auth("__token__", token.c_str());
  auto res = client.Post("/legacy/", items);
  client.set_basic_auth("", "");
  return res;
}

// Issue 15, item 6: spellings of a published file's name that pip reads as the same file
// (name case and separators, 2.0 vs 2.0.0, tag case) cannot bring other bytes, so pip
// always gets what was published first.
TEST(IndexTest, NameSpellingsOfAPublishedFileAreRefusedAndPipGetsThePublishedBytes) {
  RequireTools();
  TempDir dir("index-names");
  auto started = TestFarm::Start(dir.path(), FarmOptions{});
  ASSERT_TRUE(started.ok()) << started.status();
  TestFarm& test_farm = **started;
  const std::string base = absl::StrCat("http://", test_farm.coordinator().http_address());
  const std::string token = test_farm.AdminToken();
  httplib::Client http = HttpTo(test_farm.coordinator().http_address());

  const std::string published =
      WriteProbeWheel(dir / "a", "probe_ok-2.0-py3-none-any.whl", "probe_ok", "2.0", "V = 1\n");
  auto first = Upload(http, token, published, "probe_ok", "2.0");
  ASSERT_TRUE(first);
  ASSERT_EQ(first->status, 200) << first->body;
  const std::string published_sha = Sha256Of(ReadFile(published));

  struct Spelling {
    std::string filename, name, version;
  };
  int n = 0;
  for (const Spelling& sp :
       std::vector<Spelling>{{"Probe_OK-2.0-py3-none-any.whl", "Probe_OK", "2.0"},
                             {"probe_ok-2.0-PY3-none-any.whl", "probe_ok", "2.0"},
                             {"probe_ok-2.0.0-py3-none-any.whl", "probe_ok", "2.0.0"}}) {
    SCOPED_TRACE(sp.filename);
    const std::string wheel = WriteProbeWheel(dir / absl::StrCat("s", n++), sp.filename, sp.name,
                                              sp.version, "V = 'shadow'\n");
    auto res = Upload(http, token, wheel, sp.name, sp.version);
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 409) << res->body;
    EXPECT_THAT(res->body, HasSubstr("File already exists"));
    EXPECT_THAT(res->body, HasSubstr("probe_ok-2.0-py3-none-any.whl"));
  }
  // The same bytes under another spelling are the published file: accepted, nothing new.
  fs::create_directories(dir / "same");
  fs::copy_file(published, dir / "same/Probe_OK-2.0-py3-none-any.whl");
  auto same = Upload(http, token, dir / "same/Probe_OK-2.0-py3-none-any.whl", "Probe_OK", "2.0");
  ASSERT_TRUE(same);
  EXPECT_EQ(same->status, 200) << same->body;
  EXPECT_THAT(same->body, HasSubstr("already published"));

  auto page = Get(http, "/simple/probe-ok/", kJson);
  ASSERT_TRUE(page);
  ASSERT_EQ(page->status, 200);
  const auto listed = nlohmann::json::parse(page->body)["files"];
  ASSERT_EQ(listed.size(), 1u) << page->body;
  EXPECT_EQ(listed[0]["filename"], "probe_ok-2.0-py3-none-any.whl");

  // pip asks for probe_ok==2.0 (which 2.0.0 would also satisfy) and gets the published file.
  CommandResult download =
      RunTool({kPython, "-m", "pip", "download", "--no-deps", "--no-cache-dir", "-d", dir / "dl",
               "--index-url", base + "/simple/", "probe_ok==2.0"});
  ASSERT_EQ(download.exit_code, 0) << Output(download);
  std::vector<std::string> fetched;
  for (const auto& entry : fs::directory_iterator(dir / "dl")) {
    fetched.push_back(entry.path().filename().string());
  }
  ASSERT_EQ(fetched, std::vector<std::string>{"probe_ok-2.0-py3-none-any.whl"});
  EXPECT_EQ(Sha256Of(ReadFile(dir / "dl/probe_ok-2.0-py3-none-any.whl")), published_sha);
}

TEST(IndexTest, FarmctlPublishesToPypiserverToTheBuiltinIndexAndThroughAHook) {
  RequireTools();
  TempDir dir("publish");
  const std::string wheel = BuildDemoWheel(dir, dir / "dist");
  ASSERT_TRUE(fs::exists(wheel));

  // A real pypiserver from the tools venv, with an htpasswd made by passlib.
  const std::string htpasswd = dir / "htpasswd";
  CommandResult pw = RunTool({kPython, "-c",
                              "import sys\nfrom passlib.apache import HtpasswdFile\n"
                              "h = HtpasswdFile(sys.argv[1], new=True)\n"
                              "h.set_password('alice', 's3cret')\nh.save()\n",
                              htpasswd});
  ASSERT_EQ(pw.exit_code, 0) << Output(pw);
  const std::string packages = dir / "packages";
  fs::create_directories(packages);
  const int port = FreePort();
  auto server = Subprocess::Spawn({kPython, "-m", "pypiserver", "run", "-i", "127.0.0.1", "-p",
                                   std::to_string(port), "-P", htpasswd, "-a", "update", packages},
                                  {.log_path = dir / "pypiserver.log"});
  ASSERT_TRUE(server.ok()) << server.status();
  httplib::Client pypi("127.0.0.1", port);
  ASSERT_TRUE(WaitFor(
      [&] {
        auto r = pypi.Get("/");
        return r && r->status == 200;
      },
      absl::Seconds(30)))
      << ReadFile(dir / "pypiserver.log");
  const std::string repo = absl::StrCat("http://127.0.0.1:", port, "/");

  CommandResult wrong = RunFarmctl(
      {"publish", wheel, "--to", repo, "--username", "alice", "--password-env", "PYPI_PASSWORD"},
      {"PYPI_PASSWORD=wrong"});
  EXPECT_EQ(wrong.exit_code, 3) << Output(wrong);
  EXPECT_THAT(wrong.stderr_text, HasSubstr("refused the credentials"));
  EXPECT_THAT(wrong.stderr_text, HasSubstr("403 Forbidden"));  // pypiserver's answer
  EXPECT_THAT(wrong.stderr_text, Not(HasSubstr("background-color")));
  CommandResult unset = RunFarmctl({"publish", wheel, "--to", repo, "--username", "alice",
                                    "--password-env", "WHEELFARM_UNSET_VARIABLE"});
  EXPECT_EQ(unset.exit_code, 2) << Output(unset);
  EXPECT_THAT(unset.stderr_text, HasSubstr("WHEELFARM_UNSET_VARIABLE"));

  CommandResult ok = RunFarmctl({"--json", "publish", wheel, "--to", repo, "--username", "alice",
                                 "--password-env", "PYPI_PASSWORD"},
                                {"PYPI_PASSWORD=s3cret"});
  ASSERT_EQ(ok.exit_code, 0) << Output(ok) << ReadFile(dir / "pypiserver.log");
  EXPECT_EQ(nlohmann::json::parse(ok.stdout_text)["already_present"], false);
  EXPECT_TRUE(fs::exists(fs::path(packages) / kWheelName));
  CommandResult dup = RunFarmctl(
      {"publish", wheel, "--to", repo, "--username", "alice", "--password-env", "PYPI_PASSWORD"},
      {"PYPI_PASSWORD=s3cret"});
  EXPECT_EQ(dup.exit_code, 2) << Output(dup);
  EXPECT_THAT(dup.stderr_text, HasSubstr("already has a file named"));
  CommandResult skip = RunFarmctl({"publish", wheel, "--to", repo, "--username", "alice",
                                   "--password-env", "PYPI_PASSWORD", "--skip-existing"},
                                  {"PYPI_PASSWORD=s3cret"});
  EXPECT_EQ(skip.exit_code, 0) << Output(skip);
  EXPECT_THAT(skip.stdout_text, HasSubstr("already present"));

  CommandResult fetched =
      RunTool({kPython, "-m", "pip", "download", "--no-deps", "--no-cache-dir", "-d", dir / "dl",
               "--index-url", repo + "simple/", absl::StrCat(kProject, "==", kVersion)});
  ASSERT_EQ(fetched.exit_code, 0) << Output(fetched);
  EXPECT_EQ(ReadFile(dir / "dl/" + kWheelName), ReadFile(wheel));

  CommandResult refused = RunFarmctl({"publish", wheel, "--to", "http://127.0.0.1:1/"});
  EXPECT_EQ(refused.exit_code, 1) << Output(refused);
  EXPECT_THAT(refused.stderr_text, HasSubstr("cannot connect"));
  server->Signal(SIGTERM);
  server->Wait(absl::Seconds(10));

  // --to builtin: the coordinator's own index, with the farm token.
  auto started = TestFarm::Start(dir.path(), FarmOptions{});
  ASSERT_TRUE(started.ok()) << started.status();
  TestFarm& test_farm = **started;
  CommandResult builtin =
      RunFarmctl({"--coordinator", test_farm.address(), "--token-file",
                  test_farm.admin_token_file(), "publish", wheel, "--to", "builtin"});
  ASSERT_EQ(builtin.exit_code, 0) << Output(builtin)
                                  << ReadFile(test_farm.coordinator().log_path());
  httplib::Client http = HttpTo(test_farm.coordinator().http_address());
  auto page = Get(http, absl::StrCat("/simple/", kProject, "/"), "text/html");
  ASSERT_TRUE(page);
  EXPECT_EQ(FilesFromHtml(page->body),
            (std::map<std::string, std::string>{{kWheelName, Sha256Of(ReadFile(wheel))}}));
  test_farm.coordinator().process().Signal(SIGTERM);
  test_farm.coordinator().process().Wait(absl::Seconds(15));

  // A command hook: the wheel is copied; a failing hook shows its stderr.
  const std::string shelf = dir / "shelf";
  fs::create_directories(shelf);
  CommandResult hook =
      RunFarmctl({"publish", wheel, "--command", absl::StrCat("cp {wheel} '", shelf, "/'")});
  ASSERT_EQ(hook.exit_code, 0) << Output(hook);
  EXPECT_EQ(ReadFile(shelf + "/" + kWheelName), ReadFile(wheel));
  CommandResult failing = RunFarmctl(
      {"publish", wheel, "--command", "sh -c 'echo release v9 not found >&2; exit 5' {wheel}"});
  EXPECT_EQ(failing.exit_code, 1) << Output(failing);
  EXPECT_THAT(failing.stderr_text, HasSubstr("release v9 not found"));
  EXPECT_THAT(failing.stderr_text, HasSubstr("exited with 5"));
  CommandResult typo = RunFarmctl({"publish", wheel, "--command", "cp {whl} /tmp/"});
  EXPECT_EQ(typo.exit_code, 2) << Output(typo);
  EXPECT_THAT(typo.stderr_text, Not(HasSubstr("exited")));
}

}  // namespace
}  // namespace farm::testing
