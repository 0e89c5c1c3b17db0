#include "libfarm/publish/command_hook_publisher.h"

#include <cstring>
#include <filesystem>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libfarm/process/output_tail.h"
#include "libfarm/process/subprocess.h"
#include "libfarm/wheel/wheel_filename.h"

namespace farm {
namespace {

constexpr const char* kPlaceholders[] = {"{wheel}", "{filename}", "{name}", "{version}"};

absl::Status CheckPlaceholders(const std::string& arg) {
  size_t pos = 0;
  while ((pos = arg.find('{', pos)) != std::string::npos) {
    bool known = false;
    for (const char* p : kPlaceholders) {
      if (arg.compare(pos, std::strlen(p), p) == 0) known = true;
    }
    if (!known) {
      const size_t close = arg.find('}', pos);
      return absl::InvalidArgumentError(absl::StrCat(
          "publish command argument \"", arg, "\" has an unknown placeholder \"",
          arg.substr(pos, close == std::string::npos ? std::string::npos : close - pos + 1),
          "\"; known: {wheel}, {filename}, {name}, {version}"));
    }
    ++pos;
  }
  return absl::OkStatus();
}

// The program an argv runs, by its file name ("/usr/bin/env" -> "env").
std::string ProgramName(const std::string& arg) {
  return std::filesystem::path(arg).filename().string();
}

// Where the script is when `argv` starts a shell in command mode (`sh -c SCRIPT`,
// `bash -euc SCRIPT`, `env A=1 bash -o pipefail -c SCRIPT`, `busybox sh -c SCRIPT`):
// its index, or npos. Other interpreters' code arguments (`python -c`) are not recognized.
size_t ShellScriptIndex(const std::vector<std::string>& argv) {
  constexpr size_t kNone = std::string::npos;
  size_t i = 0;
  if (i < argv.size() && ProgramName(argv[i]) == "env") {
    for (++i; i < argv.size(); ++i) {
      const std::string& a = argv[i];
      if (a == "-u" || a == "-C" || a == "--unset" || a == "--chdir") {
        ++i;
      } else if (!absl::StartsWith(a, "-") && a.find('=') == std::string::npos) {
        break;
      }
    }
  }
  if (i < argv.size() && ProgramName(argv[i]) == "busybox") ++i;
  static const auto* kShells =
      new std::set<std::string>{"sh", "ash", "bash", "dash", "ksh", "mksh", "yash", "zsh"};
  if (i >= argv.size() || kShells->count(ProgramName(argv[i])) == 0) return kNone;
  bool command_mode = false;
  for (++i; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == "--" || a == "-") {
      ++i;
      break;
    }
    if (a.size() < 2 || (a[0] != '-' && a[0] != '+')) break;
    if (a[1] == '-') continue;  // --login, --norc
    if (a[0] == '-' && a.find('c') != std::string::npos) command_mode = true;
    if (a.find_first_of("oO") != std::string::npos) ++i;  // -o pipefail
  }
  return command_mode && i < argv.size() ? i : kNone;
}

}  // namespace

absl::Status CommandHookPublisher::CheckTemplate(const std::vector<std::string>& argv_template) {
  if (argv_template.empty() || argv_template.front().empty()) {
    return absl::InvalidArgumentError(
        "the publish command is empty; give a program and its arguments, e.g. "
        "[\"gh\", \"release\", \"upload\", \"v1\", \"{wheel}\"]");
  }
  for (const std::string& arg : argv_template) {
    if (absl::Status s = CheckPlaceholders(arg); !s.ok()) return s;
  }
  if (const size_t script = ShellScriptIndex(argv_template); script != std::string::npos) {
    for (const char* p : kPlaceholders) {
      if (argv_template[script].find(p) == std::string::npos) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          "publish command: the shell script \"", argv_template[script], "\" holds ", p,
          ", so a value would become shell text. Fix: pass the value as an argument after the "
          "script and quote it there, e.g. [\"sh\", \"-c\", \"gh release upload v1 \\\"$1\\\"\", "
          "\"sh\", \"{wheel}\"], or read $FARM_WHEEL"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<CommandHookPublisher>> CommandHookPublisher::Create(
    std::vector<std::string> argv_template, absl::Duration timeout) {
  if (absl::Status s = CheckTemplate(argv_template); !s.ok()) return s;
  return std::unique_ptr<CommandHookPublisher>(
      new CommandHookPublisher(std::move(argv_template), timeout));
}

std::string CommandHookPublisher::Describe() const {
  return absl::StrCat("command `", absl::StrJoin(argv_template_, " "), "`");
}

absl::StatusOr<PublishResult> CommandHookPublisher::Publish(const std::string& wheel_path) {
  std::error_code ec;
  const std::filesystem::path absolute = std::filesystem::absolute(wheel_path, ec);
  if (ec || !std::filesystem::is_regular_file(absolute, ec)) {
    return absl::NotFoundError(absl::StrCat("no such wheel: ", wheel_path));
  }
  const std::string filename = absolute.filename().string();
  auto parsed = ParseWheelFilename(filename);
  if (!parsed.ok()) return parsed.status();
  std::vector<std::string> argv;
  for (const std::string& arg : argv_template_) {
    argv.push_back(absl::StrReplaceAll(arg, {{"{wheel}", absolute.string()},
                                             {"{filename}", filename},
                                             {"{name}", parsed->distribution},
                                             {"{version}", parsed->version}}));
  }
  auto result = RunCommand(argv, timeout_,
                           {absl::StrCat("FARM_WHEEL=", absolute.string()),
                            absl::StrCat("FARM_WHEEL_FILENAME=", filename),
                            absl::StrCat("FARM_WHEEL_NAME=", parsed->distribution),
                            absl::StrCat("FARM_WHEEL_VERSION=", parsed->version)});
  const std::string shown = absl::StrJoin(argv, " ");
  if (!result.ok()) {
    if (result.status().code() == absl::StatusCode::kDeadlineExceeded) {
      return absl::DeadlineExceededError(absl::StrCat("publish command `", shown,
                                                      "` was still running after ",
                                                      absl::FormatDuration(timeout_), "; killed"));
    }
    return absl::FailedPreconditionError(absl::StrCat("cannot run publish command `", shown,
                                                      "`: ", result.status().message(),
                                                      ". Fix: install it or give its full path"));
  }
  if (result->exit_code != 0) {
    const std::string tail = TailLines(result->stderr_text, 20);
    return absl::AbortedError(
        absl::StrCat("publish command `", shown, "` exited with ", result->exit_code,
                     tail.empty() ? " and printed nothing on stderr"
                                  : absl::StrCat("; its stderr ends:\n", tail)));
  }
  return PublishResult{.location = Describe(), .detail = TailLines(result->stdout_text, 5)};
}

}  // namespace farm
