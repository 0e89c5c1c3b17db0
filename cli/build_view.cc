#include "cli/build_view.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include <google/protobuf/util/json_util.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/text_table.h"
#include "cli/worker_view.h"
#include "libfarm/actions/call_phases.h"
#include "libfarm/cuda/arch_set_label.h"
#include "libfarm/text/terminal_text.h"
#include "libfarm/time/proto_time.h"

namespace farm::cli {
namespace {

bool IsSet(const google::protobuf::Timestamp& ts) { return ts.seconds() != 0 || ts.nanos() != 0; }

// From `from` to `to`, or to `now` while it runs; "" when it never started.
std::string Took(const google::protobuf::Timestamp& from, const google::protobuf::Timestamp& to,
                 absl::Time now) {
  if (!IsSet(from)) return "";
  return ShortDuration((IsSet(to) ? FromProtoTime(to) : now) - FromProtoTime(from));
}

struct Totals {
  uint32_t total = 0, done = 0, failed = 0, running = 0, queued = 0, cached = 0;
};

Totals Sum(const farm::v1::Build& b) {
  Totals t;
  for (const auto& s : b.shards()) {
    t.total += s.total();
    t.done += s.done();
    t.failed += s.failed();
    t.running += s.running();
    t.queued += s.queued();
    t.cached += s.cached();
  }
  return t;
}

std::string ShardName(const std::string& name) { return name.empty() ? "(none)" : name; }

std::string Indent(const std::string& text, const std::string& prefix) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    absl::StrAppend(&out, prefix, line, "\n");
  }
  while (absl::EndsWith(out, prefix + "\n")) out.resize(out.size() - prefix.size() - 1);
  return out;
}

// "demo_cuda_ext-0.1.0+cu130.sm75-py3-none-manylinux_2_17_x86_64.whl" -> "0.1.0+cu130.sm75".
std::string WheelVersion(const std::string& filename) {
  std::vector<std::string> parts = absl::StrSplit(filename, '-');
  return parts.size() >= 2 ? parts[1] : "";
}

// The version the build's wheel has or will have ("0.1.0+cu130.sm75"): its file's, once built.
std::string LabelledVersion(const farm::v1::Build& b) {
  return b.wheel().filename().empty() ? b.version() : WheelVersion(b.wheel().filename());
}

// The built-in index a build published to, at the wheel's arch-set index
// ("http://HOST/sm75-sm90/simple/"); "" when it published elsewhere.
std::string BuiltinIndexUrl(const farm::v1::Build& b) {
  for (const auto& where : b.published_to()) {
    // The built-in index serves files under /files/ beside its indexes.
    const size_t files = where.find("/files/");
    if (files == std::string::npos) continue;
    const std::optional<std::string> set = ArchSetNameOfVersion(LabelledVersion(b));
    return absl::StrCat(where.substr(0, files), set ? absl::StrCat("/", *set) : "", "/simple/");
  }
  return "";
}

// "w1 (x86_64),arm1 (aarch64)": who compiled a shard and on which CPU.
std::string ShardWorkers(const farm::v1::Shard& s) {
  if (s.workers().empty()) return "-";
  std::vector<std::string> named;
  for (const std::string& w : s.workers()) {
    auto cpu = s.worker_cpu_archs().find(w);
    named.push_back(cpu == s.worker_cpu_archs().end() ? w
                                                      : absl::StrCat(w, " (", cpu->second, ")"));
  }
  return absl::StrJoin(named, ",");
}

}  // namespace

nlohmann::json ProtoToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions o;
  o.preserve_proto_field_names = true;
  o.always_print_primitive_fields = true;
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(message, &json, o).ok()) {
    return nlohmann::json::object();
  }
  return nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
}

std::string ShortDuration(absl::Duration d) {
  const int64_t s = std::max<int64_t>(0, absl::ToInt64Seconds(d));
  if (s < 60) return absl::StrCat(s, "s");
  if (s < 3600) return absl::StrFormat("%dm%02ds", s / 60, s % 60);
  return absl::StrFormat("%dh%02dm", s / 3600, s % 3600 / 60);
}

std::string ProgressBar(const farm::v1::Shard& shard, int width) {
  const uint32_t total = std::max<uint32_t>(1, shard.total());
  auto cells = [&](uint32_t n) {
    return static_cast<int>(static_cast<uint64_t>(n) * width / total);
  };
  const int done = cells(shard.done());
  const int failed = std::max(shard.failed() > 0 ? 1 : 0, cells(shard.failed()));
  const int running = std::max(shard.running() > 0 ? 1 : 0, cells(shard.running()));
  std::string bar(std::min(width, done), '#');
  bar += std::string(std::max(0, std::min(width - static_cast<int>(bar.size()), failed)), '!');
  bar += std::string(std::max(0, std::min(width - static_cast<int>(bar.size()), running)), '>');
  bar += std::string(width - bar.size(), '.');
  return absl::StrCat("[", bar, "]");
}

namespace {

// The fallback reasons (a code's name, "command_line", or an older launcher's class of text)
// with their counts, most frequent first.
std::vector<std::pair<std::string, uint64_t>> FallbackCounts(const farm::v1::NvccCalls& c) {
  std::vector<std::pair<std::string, uint64_t>> reasons(c.fallback_reasons().begin(),
                                                        c.fallback_reasons().end());
  std::sort(reasons.begin(), reasons.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return reasons;
}

// "command_line × 2, no_worker × 1": most frequent first.
std::string FallbackReasons(const farm::v1::NvccCalls& c) {
  std::vector<std::string> parts;
  for (const auto& [reason, n] : FallbackCounts(c)) parts.push_back(absl::StrCat(reason, " × ", n));
  return absl::StrJoin(parts, ", ");
}

// "           command_line: not decomposable: unknown nvcc option '-Wextra'\n" for each
// example the coordinator kept, most frequent reason first: what the counts are made of.
std::string FallbackExampleLines(const farm::v1::NvccCalls& c) {
  std::string out;
  for (const auto& [reason, n] : FallbackCounts(c)) {
    auto it = c.fallback_examples().find(reason);
    if (it == c.fallback_examples().end()) continue;
    for (const std::string& detail : it->second.details()) {
      // The launcher's words: shown escaped, never obeyed.
      absl::StrAppend(&out, "           ", reason, ": ", EscapeTerminalText(detail), "\n");
    }
  }
  return out;
}

}  // namespace

std::string NvccCallsSummary(const farm::v1::NvccCalls& c) {
  if (c.total() == 0) return "";
  std::string out = absl::StrCat(c.split() + c.cached(), " of ", c.total(), " calls split");
  if (c.cached() > 0) absl::StrAppend(&out, " (", c.cached(), " from the compile cache)");
  if (c.fallbacks() == 0) {
    absl::StrAppend(&out, "; none ran plain nvcc");
  } else {
    absl::StrAppend(&out, "; ", c.fallbacks(), " ran plain nvcc: ", FallbackReasons(c));
  }
  if (c.compile_errors() > 0) {
    absl::StrAppend(&out, "; ", c.compile_errors(), " stopped at a compile error");
  }
  return out;
}

std::string HostCompilesSummary(const farm::v1::NvccCalls& c) {
  if (c.total() == 0) return "";
  std::string out = absl::StrCat(
      c.total(), c.total() == 1 ? " compile: " : " compiles: ", c.split(), " on workers");
  if (c.cached() > 0) absl::StrAppend(&out, ", ", c.cached(), " from the compile cache");
  if (c.fallbacks() == 0) {
    absl::StrAppend(&out, "; none ran locally");
  } else {
    absl::StrAppend(&out, "; ", c.fallbacks(), " ran locally: ", FallbackReasons(c));
  }
  if (c.compile_errors() > 0) {
    absl::StrAppend(&out, "; ", c.compile_errors(), " stopped at a compile error");
  }
  return out;
}

std::string CallTimesLines(const std::string& kind, const farm::v1::CallTimes& times,
                           size_t max_units) {
  if (times.calls() == 0) return "";
  constexpr double kShownSeconds = 0.005;
  constexpr size_t kPhasesShown = 9;
  std::string out =
      absl::StrFormat("time       %s: %d %s on the farm, %.2f s: %s\n", kind, times.calls(),
                      times.calls() == 1 ? "call" : "calls", times.wall_seconds(),
                      LongestPhases(times.phases(), kShownSeconds, kPhasesShown));
  for (int i = 0; i < times.slowest_size() && static_cast<size_t>(i) < max_units; ++i) {
    const farm::v1::UnitTime& u = times.slowest(i);
    // The launcher's words: shown escaped, never obeyed.
    absl::StrAppendFormat(&out, "           %s %.2f s %s (%s)\n", i == 0 ? "slowest" : "       ",
                          u.wall_seconds(), EscapeTerminalText(u.unit()),
                          LongestPhases(u.phases(), kShownSeconds, 3));
  }
  return out;
}

std::string BuildsTable(const farm::v1::ListBuildsResponse& builds, absl::Time now) {
  if (builds.builds().empty()) {
    return "no builds yet. farm-nvcc creates one per FARM_BUILD_ID; 'farmctl submit' a wheel "
           "build\n";
  }
  TextTable table(
      {"BUILD", "KIND", "PACKAGE", "STATE", "DONE", "FAILED", "ARCHS", "SUBMITTED", "TOOK"});
  for (const auto& b : builds.builds()) {
    const Totals t = Sum(b);
    table.AddRow({b.id(), BuildKindName(b.kind()),
                  b.package().empty() ? "-" : absl::StrCat(b.package(), " ", b.version()),
                  BuildStateName(b.state()), absl::StrCat(t.done, "/", t.total),
                  absl::StrCat(t.failed), b.archs().empty() ? "-" : absl::StrJoin(b.archs(), ","),
                  IsSet(b.submitted_at()) ? Ago(FromProtoTime(b.submitted_at()), now) : "",
                  Took(b.started_at(), b.finished_at(), now)});
  }
  return table.Render();
}

std::string BuildReport(const farm::v1::Build& b, absl::Time now) {
  std::string out;
  const Totals t = Sum(b);
  absl::StrAppend(&out, "build      ", b.id(), " (", BuildKindName(b.kind()), ")\n");
  if (!b.package().empty())
    absl::StrAppend(&out, "package    ", b.package(), " ", b.version(), "\n");
  absl::StrAppend(&out, "state      ", BuildStateName(b.state()));
  // Reasons and error text carry what a build printed: shown escaped, never obeyed.
  if (!b.reason().empty()) absl::StrAppend(&out, ": ", EscapeTerminalText(b.reason()));
  absl::StrAppend(&out, "\n");
  if (!b.archs().empty()) absl::StrAppend(&out, "archs      ", absl::StrJoin(b.archs(), " "), "\n");
  if (!b.stack_id().empty()) {
    absl::StrAppend(&out, "stack      ", b.stack_id(),
                    b.depends_on().empty()
                        ? std::string()
                        : absl::StrCat(", after builds ", absl::StrJoin(b.depends_on(), ", ")),
                    "\n");
  }
  absl::StrAppend(&out, "actions    ", t.done, "/", t.total, " done, ", t.running, " running, ",
                  t.queued, " queued, ", t.failed, " failed, ", t.cached, " from cache\n");
  if (IsSet(b.submitted_at())) {
    absl::StrAppend(&out, "submitted  ", Ago(FromProtoTime(b.submitted_at()), now), "\n");
  }
  if (IsSet(b.started_at())) {
    absl::StrAppend(&out, IsSet(b.finished_at()) ? "took       " : "running    ",
                    Took(b.started_at(), b.finished_at(), now), "\n");
  }
  if (!b.build_host().empty()) absl::StrAppend(&out, "build host ", b.build_host(), "\n");
  if (const std::string nvcc = NvccCallsSummary(b.nvcc()); !nvcc.empty()) {
    absl::StrAppend(&out, "nvcc       ", nvcc, "\n", FallbackExampleLines(b.nvcc()));
  }
  if (const std::string host = HostCompilesSummary(b.host_compiles()); !host.empty()) {
    absl::StrAppend(&out, "host cc    ", host, "\n", FallbackExampleLines(b.host_compiles()));
  }
  constexpr size_t kSlowestShown = 5;  // --json has all that were kept
  absl::StrAppend(&out, CallTimesLines("nvcc", b.nvcc().times(), kSlowestShown),
                  CallTimesLines("host cc", b.host_compiles().times(), kSlowestShown));
  for (const auto& p : b.published_to()) absl::StrAppend(&out, "published  ", p, "\n");

  if (!b.shards().empty()) {
    absl::StrAppend(&out, "\n");
    TextTable shards({"SHARD", "PROGRESS", "DONE", "RUNNING", "QUEUED", "FAILED", "CACHED", "WALL",
                      "CPU", "WORKERS"});
    for (const auto& s : b.shards()) {
      shards.AddRow({ShardName(s.name()), ProgressBar(s, 20),
                     absl::StrCat(s.done(), "/", s.total()), absl::StrCat(s.running()),
                     absl::StrCat(s.queued()), absl::StrCat(s.failed()), absl::StrCat(s.cached()),
                     Took(s.started_at(), s.finished_at(), now),
                     ShortDuration(absl::Seconds(s.cpu_seconds())), ShardWorkers(s)});
    }
    absl::StrAppend(&out, shards.Render());
  }

  if (!b.wheel().filename().empty()) {
    absl::StrAppend(&out, "\nwheel      ", b.wheel().filename(), " (",
                    HumanBytes(b.wheel().size_bytes()), ")\n");
    absl::StrAppend(&out, "version    ", LabelledVersion(b), "\n");
    if (const std::string index = BuiltinIndexUrl(b); !index.empty()) {
      absl::StrAppend(&out, "index      ", index, "\n");
    }
    if (!b.wheel().device_code_bytes().empty()) {
      std::map<std::string, uint64_t> sizes(b.wheel().device_code_bytes().begin(),
                                            b.wheel().device_code_bytes().end());
      TextTable table({"ARCH", "DEVICE CODE"});
      for (const auto& [arch, n] : sizes) table.AddRow({arch, HumanBytes(n)});
      absl::StrAppend(&out, table.Render());
    }
  }

  const auto& v = b.verification();
  if (!v.rows().empty() || !v.message().empty()) {
    absl::StrAppend(&out, "\nverification ", v.ok() ? "passed" : "FAILED");
    if (!v.message().empty()) absl::StrAppend(&out, ": ", EscapeTerminalText(v.message()));
    absl::StrAppend(&out, "\n");
    if (!v.rows().empty()) {
      TextTable table({"ARCH", "PRESENT", "SIZE", "NOTE"});
      for (const auto& r : v.rows()) {
        table.AddRow({r.arch(), r.present() ? "yes" : "NO", HumanBytes(r.size_bytes()), r.note()});
      }
      absl::StrAppend(&out, table.Render());
    }
    for (const auto& route : v.arch_routes()) {
      absl::StrAppend(&out, "  runs ", EscapeTerminalText(route), "\n");
    }
  }

  // Per SM: passed, failed with the command's output, not run and why, or waiting and for what.
  if (!b.smoke().empty()) {
    absl::StrAppend(
        &out, "\nsmoke tests",
        b.plan().smoke().on_failure() == "mark" ? " (a failure only marks the build)" : "", "\n");
    TextTable table({"ARCH", "RESULT", "GPU", "WORKER"});
    for (const auto& r : b.smoke()) {
      table.AddRow({r.sm(), r.state() == "failed" ? "FAILED" : r.state(),
                    r.gpu_sm().empty() ? "-" : r.gpu_sm(), r.worker().empty() ? "-" : r.worker()});
    }
    absl::StrAppend(&out, table.Render());
    for (const auto& r : b.smoke()) {
      if (r.state() == "waiting") {
        // "waiting for a GPU worker ... that runs sm_75 (none online; ...)"
        const uint32_t bound = b.plan().smoke().gpu_wait_seconds();
        absl::StrAppend(&out, "  ", r.sm(), " ", EscapeTerminalText(r.reason()), "; waited ",
                        ShortDuration(now - FromProtoTime(r.waiting_since())),
                        bound > 0 ? absl::StrCat(" of ", ShortDuration(absl::Seconds(bound)),
                                                 " (the recipe's gpu_wait), then the build fails")
                                  : "",
                        "\n");
      } else if (r.state() == "not run") {
        absl::StrAppend(&out, "  ", r.sm(), " not smoke-tested: ", EscapeTerminalText(r.reason()),
                        "\n");
      } else if (r.state() == "failed") {
        absl::StrAppend(
            &out, "  ", r.sm(), " failed:\n",
            Indent(EscapeTerminalText(r.output().empty() ? r.reason() : r.output()), "  | "));
        if (!absl::EndsWith(out, "\n")) out += "\n";
      }
    }
  }

  for (const auto& s : b.shards()) {
    if (s.failed_action_id().empty()) continue;
    absl::StrAppend(&out, "\nfailed in ", ShardName(s.name()), ": action ", s.failed_action_id());
    if (s.failed_exit_code() != 0) absl::StrAppend(&out, " exited ", s.failed_exit_code());
    absl::StrAppend(
        &out, "\n",
        s.error().empty() ? "  (no error text)\n" : Indent(EscapeTerminalText(s.error()), "  | "));
    if (!absl::EndsWith(out, "\n")) out += "\n";
  }
  return out;
}

std::string WatchFrame(const farm::v1::Build& b, absl::Time now) {
  std::string out = absl::StrCat(b.id(), "  ", BuildStateName(b.state()));
  if (IsSet(b.started_at()))
    absl::StrAppend(&out, "  ", Took(b.started_at(), b.finished_at(), now));
  absl::StrAppend(&out, "\n");
  size_t width = 6;
  for (const auto& s : b.shards()) width = std::max(width, ShardName(s.name()).size());
  for (const auto& s : b.shards()) {
    absl::StrAppend(
        &out, absl::StrFormat("  %-*s %s %5d/%-5d", static_cast<int>(width), ShardName(s.name()),
                              ProgressBar(s, 30), s.done(), s.total()));
    if (s.running() > 0) absl::StrAppend(&out, " ", s.running(), " running");
    if (s.failed() > 0) absl::StrAppend(&out, " ", s.failed(), " FAILED");
    absl::StrAppend(&out, "\n");
  }
  if (!b.reason().empty()) absl::StrAppend(&out, "  ", EscapeTerminalText(b.reason()), "\n");
  return out;
}

std::string WatchLine(const farm::v1::Build& b) {
  std::vector<std::string> parts;
  for (const auto& s : b.shards()) {
    parts.push_back(absl::StrCat(ShardName(s.name()), " ", s.done(), "/", s.total(),
                                 s.failed() > 0 ? absl::StrCat(" (", s.failed(), " failed)") : ""));
  }
  std::string line = absl::StrCat(b.id(), " ", BuildStateName(b.state()));
  if (!parts.empty()) absl::StrAppend(&line, ": ", absl::StrJoin(parts, ", "));
  // A build waiting for a GPU worker says so while it waits (its reason names the archs).
  const bool waits = std::any_of(b.smoke().begin(), b.smoke().end(),
                                 [](const auto& r) { return r.state() == "waiting"; });
  if ((IsTerminalBuildState(b.state()) || waits) && !b.reason().empty())
    absl::StrAppend(&line, " - ", EscapeTerminalText(b.reason()));
  return line;
}

std::string PlanReport(const farm::v1::BuildPlan& p) {
  std::string out;
  absl::StrAppend(&out, "package    ", p.package(), " ", p.version(), " (recipe ", p.recipe(),
                  ")\n");
  absl::StrAppend(&out, "archs      ", p.archs(), "\n");
  auto cuda = ParseToolkitVersion(p.cuda_version());
  auto archs = ParseArchList(p.archs());
  if (cuda.ok() && archs.ok()) {
    // What the wheel will be called, and where the built-in index will list it.
    absl::StrAppend(&out, "wheel      ", p.package(), " ",
                    WithFarmLocalLabel(p.version(), *cuda, *archs), " (arch-set index /",
                    ArchSetName(*archs), "/simple/)\n");
  }
  if (!p.requested_archs().empty()) {
    // The package builds only some archs: per requested GPU, what serves it.
    absl::StrAppend(&out, "requested  ", p.requested_archs(), " (the recipe's [archs] rules)\n");
    for (const auto& route : p.arch_routes()) absl::StrAppend(&out, "  runs     ", route, "\n");
  }
  absl::StrAppend(&out, "CUDA       ", p.cuda_version(),
                  " (the newest the fleet offers that builds every arch)\n");
  std::string ceiling = p.glibc_max();
  if (!p.recipe_glibc_max().empty() && p.recipe_glibc_max() != p.glibc_max()) {
    absl::StrAppend(&ceiling, " (--glibc-max; the recipe says ", p.recipe_glibc_max(), ")");
  }
  absl::StrAppend(&out, "build host linux ", p.cpu_arch(), ", glibc <= ", ceiling, ": ",
                  absl::StrJoin(p.build_hosts(), ", "), "\n");
  absl::StrAppend(&out, "source     ", p.source(), "\n");
  if (!p.python_version().empty()) {
    absl::StrAppend(
        &out, "python env python", p.python_version(), " virtualenv, requirements ",
        p.python_requirements().empty() ? "(none)" : absl::StrJoin(p.python_requirements(), ", "),
        " (hash ", p.requirements_hash(), ", cached on the build host)\n");
  }
  // Each library the build needs and where it comes from, so a dry run shows what a build
  // host must have before anything runs.
  for (const auto& pre : p.prerequisites()) {
    std::string where =
        pre.wheel().empty()
            ? absl::StrCat("host library ", pre.host_library(), " on ",
                           pre.hosts().empty() ? "no host" : absl::StrJoin(pre.hosts(), ", "))
            : absl::StrCat("wheel ", pre.wheel(), " into the python env");
    if (!pre.variables().empty()) {
      absl::StrAppend(&where, " (sets ", absl::StrJoin(pre.variables(), ", "), ")");
    }
    absl::StrAppend(&out, "prereq     ", pre.name(), pre.version().empty() ? "" : " ",
                    pre.version(), ": ", where, "\n");
  }
  // Each build dependency and where it comes from: a package index, or the farm's own
  // wheels (farm_requirements), published already or by an earlier build of the stack, or
  // the recipe's fallback index for one the farm has none of.
  for (const auto& d : p.build_dependencies()) {
    std::string where;
    if (d.source() == "farm") {
      where = absl::StrCat("farm: ", d.project(), " ", d.wheel_version(), " (build ", d.build_id(),
                           "), from the farm's index ", d.index_path());
    } else if (d.source() == "stack") {
      where = absl::StrCat("farm: ", d.project(), " ", d.wheel_version(),
                           ", built first by this stack's ", d.stack_recipe(),
                           ", from the farm's index ", d.index_path());
    } else if (!d.fallback_cuda().empty()) {
      // A farm requirement the farm has no wheel of, from the recipe's farm_fallback.
      where = absl::StrCat(
          "from the package index ",
          d.index_url().empty() ? "of the build host (PIP_INDEX_URL, else PyPI)" : d.index_url(),
          ", wheels built for CUDA ", d.fallback_cuda(), " (farm_fallback: ", d.fallback_reason(),
          ")");
    } else {
      where = "package index (PyPI, or the build host's PIP_INDEX_URL)";
    }
    absl::StrAppend(&out, "build dep  ", d.requirement(), ": ", where, "\n");
  }
  if (p.has_size_estimate()) {
    absl::StrAppend(&out, "wheel size ~", absl::StrFormat("%.1f", p.estimated_wheel_mib()),
                    " MiB (the recipe's estimate)\n");
  }
  std::vector<std::string> targets;
  for (const auto& t : p.publish()) {
    targets.push_back(t.kind() == "repository" ? t.url() : t.kind());
  }
  if (p.has_smoke()) {
    absl::StrAppend(
        &out,
        "smoke      on a GPU of each arch before publishing (on failure: ", p.smoke().on_failure(),
        p.smoke().require_gpu()
            ? absl::StrCat(
                  "; every arch must be tested, waiting ",
                  p.smoke().gpu_wait_seconds() > 0
                      ? absl::StrCat("up to ",
                                     ShortDuration(absl::Seconds(p.smoke().gpu_wait_seconds())),
                                     " ")
                      : "",
                  "for a GPU worker that runs it)")
            : ")",
        "\n");
  }
  absl::StrAppend(&out, "publish    ", targets.empty() ? "nowhere" : absl::StrJoin(targets, ", "),
                  "\n\n");
  TextTable shards({"SHARD", "ELIGIBLE WORKERS"});
  for (const auto& s : p.shards()) shards.AddRow({s.name(), absl::StrJoin(s.workers(), ", ")});
  absl::StrAppend(&out, shards.Render());
  return out;
}

std::string PipInstallHint(const farm::v1::Build& b) {
  const std::string index = BuiltinIndexUrl(b);
  if (index.empty()) return "";
  return absl::StrCat("pip install --index-url ", index, " ", b.package(),
                      "==", LabelledVersion(b));
}

}  // namespace farm::cli
