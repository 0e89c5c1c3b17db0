#include "libfarm/nvcc/compile_and_link.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace farm {
namespace {

bool Within(size_t word, const std::vector<std::pair<size_t, size_t>>& ranges) {
  for (const auto& [first, last] : ranges) {
    if (word >= first && word <= last) return true;
  }
  return false;
}

}  // namespace

bool CompilesAndLinks(const NvccCommandLine& command) {
  return command.mode == NvccMode::kLink || command.mode == NvccMode::kLib;
}

absl::StatusOr<CompileAndLink> PlanCompileAndLink(const NvccCommandLine& command,
                                                  const std::string& object_dir) {
  if (command.not_decomposable) return NotDecomposable(*command.not_decomposable);
  if (!command.language.empty()) {
    // -x names the language of every input: the link would read the objects as that too.
    return NotDecomposable(
        absl::StrCat("-x ", command.language, " when compiling and linking in one call"));
  }
  if (command.dependencies.with_compile) {
    return NotDecomposable("-MD/-MMD when compiling and linking in one call");
  }
  std::vector<size_t> sources;  // indices into command.inputs
  for (size_t i = 0; i < command.inputs.size(); ++i) {
    if (absl::EndsWith(command.inputs[i], ".cu")) sources.push_back(i);
  }
  if (sources.empty()) {
    return NotDecomposable("linking with no .cu input: nothing to compile on the farm");
  }

  CompileAndLink plan;
  plan.link_args = command.args;
  for (size_t n = 0; n < sources.size(); ++n) {
    const size_t source_word = command.input_positions[sources[n]];
    const std::string object =
        absl::StrCat(object_dir, "/", n, "/",
                     std::filesystem::path(command.inputs[sources[n]]).stem().string(), ".o");
    std::vector<std::string> words;
    for (size_t w = 0; w < command.args.size(); ++w) {
      const bool other_input = w != source_word && std::find(command.input_positions.begin(),
                                                             command.input_positions.end(),
                                                             w) != command.input_positions.end();
      if (other_input || Within(w, command.output_words) || Within(w, command.phase_words)) {
        continue;
      }
      words.push_back(command.args[w]);
    }
    words.insert(words.end(), {"-c", "-o", object});
    auto compile = ParseNvccCommandLine(words);
    if (!compile.ok()) return compile.status();
    if (absl::Status s = CheckDecomposable(*compile); !s.ok()) return s;
    plan.compiles.push_back(*std::move(compile));
    plan.link_args[source_word] = object;
  }
  return plan;
}

}  // namespace farm
