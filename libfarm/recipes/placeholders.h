// Recipe placeholders: "{archs}" style fields filled in when a build is planned, and the
// host's "$VAR" references filled in when it runs.
//
// Syntax: "{name}" with name in [a-z_]+ is a placeholder; "{{" and "}}" are literal braces;
// "${...}" is a shell/host variable, never a placeholder; any other brace is literal (so
// shell brace expansion such as "{a,b}" passes through).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace farm {

// Placeholder names each part of a recipe may use.
const std::vector<std::string>& BuildPlaceholders();    // command, prepare, env
const std::vector<std::string>& SourcePlaceholders();   // git tag pattern
const std::vector<std::string>& PublishPlaceholders();  // publish command hook

// The placeholder names used in `text`, in order of appearance.
std::vector<std::string> FindPlaceholders(absl::string_view text);

// OK when every placeholder in `text` is in `allowed`; otherwise names the first unknown
// one and lists the allowed ones.
absl::Status CheckPlaceholders(absl::string_view text, const std::vector<std::string>& allowed);

// Replaces every placeholder with its value and "{{"/"}}" with single braces; error for a
// placeholder missing from `values`.
absl::StatusOr<std::string> ExpandPlaceholders(absl::string_view text,
                                               const std::map<std::string, std::string>& values);

// Replaces "$VAR", "${VAR}" and "${VAR:-default}" with `lookup(VAR)` (empty, or the default,
// when unset), as a shell would; "$$" is a literal "$". Used for environment values such as
// PATH = "{cuda_home}/bin:$PATH", which extend the build host's own environment.
std::string ExpandHostVariables(
    absl::string_view text,
    const std::function<std::optional<std::string>(const std::string&)>& lookup);

}  // namespace farm
