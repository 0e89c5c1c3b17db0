// A small C++ Bazel workspace and the Debian `bazel` (bazel-bootstrap 4.2) that builds it, for
// tests that point a real REAPI client at the farm. The workspace: //lib:greet (cc_library),
// //app:hello (cc_binary using it) and //app:banner (genrule). Debian's Bazel ships its
// tools but not @rules_cc and @rules_java, which its own cc toolchain and Java toolchain
// BUILD files load; with no network they cannot be fetched, so the workspace maps both to
// local stand-ins that re-export Bazel's native rules (the only names those files load).
// Each build runs in batch mode (no server left behind) with its own output base, so no
// local cache carries over from one build to the next. Header-only.
#pragma once

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "libfarm/process/subprocess.h"

namespace farm::testing {

inline constexpr char kBazel[] = "/usr/bin/bazel";
inline constexpr char kBazelFix[] =
    "Fix: bash scripts/install-test-deps.sh (installs Debian's bazel-bootstrap, Bazel 4.2)";

class BazelWorkspace {
 public:
  // Writes the workspace under `dir` (dir/ws, dir/rules_cc, dir/rules_java); builds put
  // their output bases and HOME under dir too.
  explicit BazelWorkspace(std::filesystem::path dir) : dir_(std::move(dir)) {
    Write("ws/WORKSPACE",
          "local_repository(name = \"rules_cc\", path = \"../rules_cc\")\n"
          "local_repository(name = \"rules_java\", path = \"../rules_java\")\n");
    Write("ws/lib/BUILD",
          "cc_library(name = \"greet\", srcs = [\"greet.cc\"], hdrs = [\"greet.h\"],\n"
          "           visibility = [\"//visibility:public\"])\n");
    Write("ws/lib/greet.h", "#pragma once\nconst char* Greeting();\n");
    SetGreeting("hello from the farm");
    Write("ws/app/BUILD",
          "cc_binary(name = \"hello\", srcs = [\"hello.cc\"], deps = [\"//lib:greet\"])\n"
          "genrule(name = \"banner\", outs = [\"banner.txt\"],\n"
          "        cmd = \"echo wheelfarm banner > $@\")\n");
    Write("ws/app/hello.cc",
          "#include <cstdio>\n#include \"lib/greet.h\"\nint main() { std::puts(Greeting()); }\n");
    Stubs("rules_cc", "cc", {"cc_binary", "cc_library", "cc_toolchain", "cc_toolchain_suite"});
    Stubs("rules_java", "java",
          {"java_binary", "java_import", "java_library", "java_runtime", "java_toolchain"});
  }

  // Changes what //lib:greet compiles (and so every action above it).
  void SetGreeting(const std::string& text) {
    Write("ws/lib/greet.cc",
          absl::StrCat("#include \"lib/greet.h\"\nconst char* Greeting() { return \"", text,
                       "\"; }\n"));
  }

  // `bazel build //...` in a fresh output base named `output_base`, with `flags` added.
  absl::StatusOr<CommandResult> Build(const std::string& output_base,
                                      const std::vector<std::string>& flags) const {
    // env -C: the workspace is the working directory, which RunCommand does not set.
    std::vector<std::string> argv = {
        "env", "-C", (dir_ / "ws").string(), kBazel,
        // The system rc stays: Debian's points Bazel at its unpacked install base.
        absl::StrCat("--output_user_root=", (dir_ / "bazel-root").string()),
        absl::StrCat("--output_base=", (dir_ / "bazel-root" / output_base).string()), "--batch",
        "--nohome_rc", "build", "//...", "--noshow_progress",
        // Runs where CI runs: no namespaces needed (the sandbox is Bazel's, not the farm's).
        "--spawn_strategy=local",
        // No bazel-* links in the workspace: Bazel 4.2's //... would walk into them.
        "--symlink_prefix=/"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    return RunCommand(argv, absl::Seconds(240), {absl::StrCat("HOME=", (dir_ / "home").string())});
  }

  // The bytes of an output of the build in `output_base` ("app/hello", "app/banner.txt").
  std::string Output(const std::string& output_base, const std::string& path) const {
    std::ifstream in(dir_ / "bazel-root" / output_base / "execroot" / "__main__" / "bazel-out" /
                         "k8-fastbuild" / "bin" / path,
                     std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  void Write(const std::string& path, const std::string& text) const {
    const std::filesystem::path p = dir_ / path;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
  }
  // An offline @NAME whose PKG/defs.bzl re-exports Bazel's native `rules`.
  void Stubs(const std::string& name, const std::string& pkg,
             const std::vector<std::string>& rules) const {
    Write(name + "/WORKSPACE", "");
    Write(name + "/" + pkg + "/BUILD", "");
    std::string defs = "# Bazel 4.2's native rules under the names its tools load.\n";
    for (const std::string& rule : rules) {
      absl::StrAppend(&defs, "\ndef ", rule, "(**kwargs):\n    native.", rule, "(**kwargs)\n");
    }
    Write(name + "/" + pkg + "/defs.bzl", defs);
  }

  std::filesystem::path dir_;
};

// The number in Bazel's summary "INFO: 12 processes: 6 remote cache hit, 6 internal."; 0
// when the line names no hits.
inline int RemoteCacheHits(const std::string& output) {
  std::smatch m;
  return std::regex_search(output, m, std::regex(R"((\d+) remote cache hit)")) ? std::stoi(m[1])
                                                                               : 0;
}

}  // namespace farm::testing
