#include "libfarm/recipes/recipe_loader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "libfarm/publish/command_hook_publisher.h"
#include "libfarm/publish/core_metadata.h"
#include "libfarm/recipes/farm_requirement.h"
#include "libfarm/recipes/placeholders.h"
#include "libfarm/recipes/prerequisite.h"
#include "libfarm/recipes/source_archive_name.h"
#include "libfarm/versions/version_specifier.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

const char* TypeName(toml::node_type type) {
  switch (type) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a number";
    case toml::node_type::boolean:
      return "a boolean";
    default:
      return "a date/time";
  }
}

// Builds error messages that point at the file, line and column and name the key.
class Where {
 public:
  explicit Where(std::string file) : file_(std::move(file)) {}

  absl::Status Error(const toml::source_region& at, absl::string_view key,
                     absl::string_view message) const {
    std::string location = file_;
    if (at.begin.line > 0) absl::StrAppend(&location, ":", at.begin.line, ":", at.begin.column);
    return absl::InvalidArgumentError(
        absl::StrCat(location, ": ", key.empty() ? "" : absl::StrCat(key, ": "), message));
  }
  absl::Status Error(const toml::node& node, absl::string_view key,
                     absl::string_view message) const {
    return Error(node.source(), key, message);
  }
  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

std::string Join(absl::string_view prefix, absl::string_view key) {
  return prefix.empty() ? std::string(key) : absl::StrCat(prefix, ".", key);
}

// Refuses keys that are not in `allowed`: a typo must not pass as an ignored key.
absl::Status CheckKeys(const Where& where, const toml::table& table, absl::string_view prefix,
                       const std::vector<std::string>& allowed) {
  for (auto&& [key, node] : table) {
    const std::string k(key.str());
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
      return where.Error(
          key.source(), Join(prefix, k),
          absl::StrCat("unknown key \"", k, "\"", prefix.empty() ? "" : " in [", prefix,
                       prefix.empty() ? "" : "]", ": valid keys are ", absl::StrJoin(allowed, ", "),
                       " (check the spelling; see recipes/README.md)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<const toml::table*> TableAt(const Where& where, const toml::table& parent,
                                           absl::string_view key, absl::string_view prefix,
                                           bool required) {
  const toml::node* node = parent.get(std::string_view(key.data(), key.size()));
  if (node == nullptr) {
    if (required) {
      return where.Error(parent.source(), Join(prefix, key),
                         absl::StrCat("missing [", Join(prefix, key), "] table: add it"));
    }
    return nullptr;
  }
  if (!node->is_table()) {
    return where.Error(*node, Join(prefix, key),
                       absl::StrCat("must be a table, not ", TypeName(node->type())));
  }
  return node->as_table();
}

absl::StatusOr<std::optional<std::string>> StringAt(const Where& where, const toml::table& table,
                                                    absl::string_view key, absl::string_view prefix,
                                                    bool required) {
  const toml::node* node = table.get(std::string_view(key.data(), key.size()));
  if (node == nullptr) {
    if (required) {
      return where.Error(table.source(), Join(prefix, key),
                         absl::StrCat("missing required key \"", key, "\": add it"));
    }
    return std::optional<std::string>();
  }
  if (!node->is_string()) {
    return where.Error(*node, Join(prefix, key),
                       absl::StrCat("must be a string, not ", TypeName(node->type())));
  }
  return std::optional<std::string>(node->as_string()->get());
}

absl::StatusOr<std::optional<double>> NumberAt(const Where& where, const toml::table& table,
                                               absl::string_view key, absl::string_view prefix) {
  const toml::node* node = table.get(std::string_view(key.data(), key.size()));
  if (node == nullptr) return std::optional<double>();
  double value = 0;
  if (node->is_integer()) {
    value = static_cast<double>(node->as_integer()->get());
  } else if (node->is_floating_point()) {
    value = node->as_floating_point()->get();
  } else {
    return where.Error(*node, Join(prefix, key),
                       absl::StrCat("must be a number, not ", TypeName(node->type())));
  }
  if (!(value >= 0)) {
    return where.Error(*node, Join(prefix, key), "must not be negative");
  }
  return std::optional<double>(value);
}

absl::StatusOr<std::vector<std::string>> StringArrayAt(const Where& where, const toml::table& table,
                                                       absl::string_view key,
                                                       absl::string_view prefix) {
  std::vector<std::string> out;
  const toml::node* node = table.get(std::string_view(key.data(), key.size()));
  if (node == nullptr) return out;
  if (!node->is_array()) {
    return where.Error(*node, Join(prefix, key),
                       absl::StrCat("must be an array of strings, not ", TypeName(node->type())));
  }
  for (const toml::node& item : *node->as_array()) {
    if (!item.is_string()) {
      return where.Error(item, Join(prefix, key),
                         absl::StrCat("items must be strings, not ", TypeName(item.type())));
    }
    out.push_back(item.as_string()->get());
  }
  return out;
}

// A command is a shell string or an argv array; its placeholders must be in `allowed`.
absl::StatusOr<RecipeCommand> CommandFrom(const Where& where, const toml::node& node,
                                          absl::string_view key,
                                          const std::vector<std::string>& allowed) {
  RecipeCommand command;
  if (node.is_string()) {
    command.shell = node.as_string()->get();
    if (absl::StripAsciiWhitespace(command.shell).empty()) {
      return where.Error(node, key, "empty command: give a shell string or an argv array");
    }
  } else if (node.is_array()) {
    for (const toml::node& item : *node.as_array()) {
      if (!item.is_string()) {
        return where.Error(item, key,
                           absl::StrCat("argv items must be strings, not ", TypeName(item.type())));
      }
      command.argv.push_back(item.as_string()->get());
    }
    if (command.argv.empty() || command.argv[0].empty()) {
      return where.Error(node, key, "empty argv: give the program and its arguments");
    }
  } else {
    return where.Error(
        node, key,
        absl::StrCat("must be a shell string or an argv array, not ", TypeName(node.type())));
  }
  std::vector<std::string> parts = command.argv;
  if (command.IsShell()) parts.push_back(command.shell);
  for (const std::string& part : parts) {
    if (absl::Status s = CheckPlaceholders(part, allowed); !s.ok()) {
      return where.Error(node, key, s.message());
    }
  }
  return command;
}

absl::StatusOr<ToolkitVersion> CudaVersionAt(const Where& where, const toml::table& table,
                                             absl::string_view key, absl::string_view prefix) {
  auto text = StringAt(where, table, key, prefix, true);
  if (!text.ok()) return text.status();
  auto version = ParseToolkitVersion(**text);
  if (!version.ok()) {
    return where.Error(*table.get(std::string_view(key.data(), key.size())), Join(prefix, key),
                       absl::StrCat(version.status().message(), " (write it as a string, e.g. \"",
                                    key == "cuda_min" ? "12.6" : "13.0", "\")"));
  }
  return *version;
}

bool IsValidName(absl::string_view name) {
  if (name.empty() || !absl::ascii_isalnum(name[0])) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.';
  });
}

bool IsValidVersion(absl::string_view version) {
  if (version.empty() || !absl::ascii_isdigit(version[0])) return false;
  return std::all_of(version.begin(), version.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '.' || c == '+' || c == '!';
  });
}

bool IsEnvName(absl::string_view name) {
  if (name.empty() || absl::ascii_isdigit(name[0])) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return absl::ascii_isalnum(c) || c == '_'; });
}

// The keys each source kind takes besides `kind`.
const std::map<std::string, std::set<std::string>>& SourceKeys() {
  static const auto* keys = new std::map<std::string, std::set<std::string>>{
      {"git", {"url", "tag", "submodules"}},
      {"pypi", {"project", "index"}},
      {"upload", {"path"}},
      {"archive", {"url", "sha256"}},
  };
  return *keys;
}

// A key of `table` that its kind does not take: an error naming the kinds that do.
absl::Status CheckSourceKeys(const Where& where, const toml::table& table, absl::string_view prefix,
                             const std::string& kind) {
  const std::set<std::string>& own = SourceKeys().at(kind);
  for (const auto& [key, value] : table) {
    const std::string name(key.str());
    if (name == "kind" || own.count(name) > 0) continue;
    if (kind == "pypi") {
      return where.Error(value, Join(prefix, name),
                         "a pypi source takes only `project` (default: the recipe's package) "
                         "and `index`: remove this key, or use kind = \"git\", \"archive\" or "
                         "\"upload\"");
    }
    std::vector<std::string> owners;
    for (const auto& [other, keys] : SourceKeys()) {
      if (keys.count(name) > 0) owners.push_back(other);
    }
    return where.Error(
        value, Join(prefix, name),
        absl::StrCat("only ", owners.front() == "archive" ? "an " : "a ",
                     absl::StrJoin(owners, " or "),
                     " source has this key: remove it or use kind = \"", owners.front(), "\""));
  }
  return absl::OkStatus();
}

// A release archive's URL: http(s), its last path part a plain file name with an archive
// suffix, placeholders only {version}.
absl::Status CheckArchiveUrl(absl::string_view url) {
  if (!absl::StartsWith(url, "https://") && !absl::StartsWith(url, "http://")) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", url,
                     "\" is not an http(s) URL: give the release archive's URL, e.g. "
                     "https://github.com/pytorch/vision/archive/refs/tags/v{version}.tar.gz"));
  }
  if (absl::Status s = CheckPlaceholders(url, SourcePlaceholders()); !s.ok()) return s;
  absl::string_view path = url.substr(url.find("://") + 3);
  path = path.substr(0, path.find_first_of("?#"));
  const size_t slash = path.rfind('/');
  const absl::string_view file = slash == absl::string_view::npos ? "" : path.substr(slash + 1);
  // {version} filled in with a version's characters keeps a plain name plain.
  const std::string sample = absl::StrReplaceAll(file, {{"{version}", "1.0"}});
  if (!CheckSourceArchiveName(sample).ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", url,
                     "\" names no archive file: its path must end in a file name (letters, digits, "
                     "'.', '_', '-', '+') with one of ",
                     absl::StrJoin(SourceArchiveSuffixes(), ", "),
                     " (e.g. .../archive/refs/tags/v{version}.tar.gz)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<RecipeSource> SourceFrom(const Where& where, const toml::table& table,
                                        absl::string_view prefix) {
  if (absl::Status s =
          CheckKeys(where, table, prefix,
                    {"kind", "url", "tag", "submodules", "path", "project", "index", "sha256"});
      !s.ok()) {
    return s;
  }
  RecipeSource source;
  auto kind = StringAt(where, table, "kind", prefix, true);
  if (!kind.ok()) return kind.status();
  if (SourceKeys().count(**kind) == 0) {
    return where.Error(*table.get("kind"), Join(prefix, "kind"),
                       absl::StrCat("unknown source kind \"", **kind,
                                    "\": use \"git\" (url + tag), \"pypi\" (the package's "
                                    "source distribution), \"archive\" (a release archive's "
                                    "url, optional sha256) or \"upload\" (farmctl submit "
                                    "--source DIR)"));
  }
  if (absl::Status s = CheckSourceKeys(where, table, prefix, **kind); !s.ok()) return s;
  if (**kind == "git") {
    source.kind = RecipeSource::Kind::kGit;
    auto url = StringAt(where, table, "url", prefix, true);
    if (!url.ok()) return url.status();
    auto tag = StringAt(where, table, "tag", prefix, true);
    if (!tag.ok()) return tag.status();
    source.git_url = **url;
    source.tag_pattern = **tag;
    if (absl::Status s = CheckPlaceholders(source.tag_pattern, SourcePlaceholders()); !s.ok()) {
      return where.Error(*table.get("tag"), Join(prefix, "tag"), s.message());
    }
    if (const toml::node* sub = table.get("submodules"); sub != nullptr) {
      if (!sub->is_boolean()) {
        return where.Error(*sub, Join(prefix, "submodules"),
                           absl::StrCat("must be true or false, not ", TypeName(sub->type())));
      }
      source.submodules = sub->as_boolean()->get();
    }
  } else if (**kind == "pypi") {
    source.kind = RecipeSource::Kind::kPypi;
    auto project = StringAt(where, table, "project", prefix, false);
    if (!project.ok()) return project.status();
    if (project->has_value()) {
      if (!IsValidName(**project)) {
        return where.Error(*table.get("project"), Join(prefix, "project"),
                           absl::StrCat("\"", **project,
                                        "\" is not a PyPI project name: use letters, digits, "
                                        "'-', '_' and '.'"));
      }
      source.pypi_project = **project;
    }
    auto index = StringAt(where, table, "index", prefix, false);
    if (!index.ok()) return index.status();
    if (index->has_value()) {
      if (!absl::StartsWith(**index, "https://") && !absl::StartsWith(**index, "http://")) {
        return where.Error(*table.get("index"), Join(prefix, "index"),
                           absl::StrCat("\"", **index,
                                        "\" is not an index URL: give a PEP 503 simple index "
                                        "such as https://pypi.org/simple/, or leave it out"));
      }
      source.pypi_index = **index;
    }
  } else if (**kind == "archive") {
    source.kind = RecipeSource::Kind::kArchive;
    auto url = StringAt(where, table, "url", prefix, true);
    if (!url.ok()) return url.status();
    if (absl::Status s = CheckArchiveUrl(**url); !s.ok()) {
      return where.Error(*table.get("url"), Join(prefix, "url"), s.message());
    }
    source.archive_url = **url;
    auto sha256 = StringAt(where, table, "sha256", prefix, false);
    if (!sha256.ok()) return sha256.status();
    if (sha256->has_value()) {
      const std::string digest = absl::AsciiStrToLower(**sha256);
      if (digest.size() != 64 || !std::all_of(digest.begin(), digest.end(), [](char c) {
            return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'f');
          })) {
        return where.Error(*table.get("sha256"), Join(prefix, "sha256"),
                           absl::StrCat("\"", **sha256,
                                        "\" is not a sha256: give the archive's 64 hex digits "
                                        "(`sha256sum FILE`), or leave it out when not known"));
      }
      source.archive_sha256 = digest;
    }
  } else {
    source.kind = RecipeSource::Kind::kUpload;
    auto path = StringAt(where, table, "path", prefix, false);
    if (!path.ok()) return path.status();
    if (path->has_value()) {
      fs::path dir = **path;
      if (dir.is_relative()) dir = fs::path(where.file()).parent_path() / dir;
      std::error_code ec;
      fs::path resolved = fs::weakly_canonical(fs::absolute(dir), ec);
      if (ec || !fs::is_directory(resolved, ec)) {
        return where.Error(*table.get("path"), Join(prefix, "path"),
                           absl::StrCat("\"", **path, "\" (", dir.string(),
                                        ") is not a directory: give a path relative to the "
                                        "recipe file, or leave it out to require --source"));
      }
      source.default_dir = resolved.string();
    }
  }
  return source;
}

// `own_tables`: per version, its table when it overrides [python] or [build.env], else null.
absl::Status ReadVersions(const Where& where, const toml::table& root,
                          const std::optional<RecipeSource>& default_source, Recipe& recipe,
                          std::vector<const toml::table*>& own_tables) {
  const toml::node* node = root.get("versions");
  if (node == nullptr || !node->is_array() || node->as_array()->empty()) {
    return where.Error(node != nullptr ? node->source() : root.source(), "versions",
                       "give at least one version: versions = [\"1.0\"] or [[versions]] tables "
                       "with version = \"1.0\"");
  }
  int took_default = 0;  // versions with the [source] table's source
  for (const toml::node& item : *node->as_array()) {
    RecipeVersion version;
    const toml::table* own_source = nullptr;
    const toml::table* own_table = nullptr;
    if (item.is_string()) {
      version.version = item.as_string()->get();
    } else if (item.is_table()) {
      const toml::table& t = *item.as_table();
      if (absl::Status s = CheckKeys(where, t, "versions", {"version", "source", "python", "env"});
          !s.ok()) {
        return s;
      }
      if (t.contains("python") || t.contains("env")) own_table = &t;
      auto v = StringAt(where, t, "version", "versions", true);
      if (!v.ok()) return v.status();
      version.version = **v;
      auto src = TableAt(where, t, "source", "versions", false);
      if (!src.ok()) return src.status();
      own_source = *src;
    } else {
      return where.Error(
          item, "versions",
          absl::StrCat("items must be version strings or tables, not ", TypeName(item.type())));
    }
    if (!IsValidVersion(version.version)) {
      return where.Error(item, "versions",
                         absl::StrCat("\"", version.version,
                                      "\" is not a version: use a PEP 440 version such as 2.9.1"));
    }
    if (recipe.FindVersion(version.version) != nullptr) {
      return where.Error(item, "versions",
                         absl::StrCat("version ", version.version, " is listed twice"));
    }
    if (own_source != nullptr) {
      auto s = SourceFrom(where, *own_source, "versions.source");
      if (!s.ok()) return s.status();
      version.source = *s;
    } else if (default_source) {
      version.source = *default_source;
      ++took_default;
    } else {
      return where.Error(item, "versions",
                         absl::StrCat("version ", version.version,
                                      " has no source: add a top-level [source] table or a "
                                      "source in this version's table"));
    }
    recipe.versions.push_back(std::move(version));
    own_tables.push_back(own_table);
  }
  // One archive has one digest: a [source] sha256 shared by several versions is wrong for all
  // but one of them.
  if (took_default > 1 && default_source && !default_source->archive_sha256.empty()) {
    const toml::node* sha256 = root.get("source")->as_table()->get("sha256");
    return where.Error(*sha256, "source.sha256",
                       absl::StrCat(took_default,
                                    " versions take this source, and one sha256 fits one archive. "
                                    "Fix: give each version its own source table with its "
                                    "sha256 (versions = [{ version = \"1.0\", source = { kind = "
                                    "\"archive\", url = \"...\", sha256 = \"...\" } }]), or "
                                    "leave sha256 out"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Recipe> FromTable(const Where& where, const toml::table& root);

// The recipe as `version` builds it: the file's table with the version's `python` in place of
// [python], its `env` over [build.env], its source and itself as the only version; loaded (and
// so checked) as a whole recipe.
absl::StatusOr<std::shared_ptr<const Recipe>> VersionRecipe(const Where& where,
                                                            const toml::table& root,
                                                            const toml::table& own,
                                                            const RecipeVersion& version) {
  toml::table merged = root;
  merged.insert_or_assign("versions", toml::array{version.version});
  if (const toml::node* source = own.get("source")) merged.insert_or_assign("source", *source);
  if (const toml::node* python = own.get("python")) {
    if (!python->is_table()) {
      return where.Error(
          *python, "versions.python",
          absl::StrCat("must be a table like [python], not ", TypeName(python->type())));
    }
    merged.insert_or_assign("python", *python);
  }
  if (const toml::node* env = own.get("env")) {
    if (!env->is_table()) {
      return where.Error(*env, "versions.env",
                         absl::StrCat("must be a table of NAME = \"value\" like [build.env], not ",
                                      TypeName(env->type())));
    }
    toml::table* build = merged.get_as<toml::table>("build");
    if (build == nullptr) {
      return where.Error(*env, "versions.env", "the recipe has no [build] table to add it to");
    }
    toml::table build_env;
    if (const toml::table* base = build->get_as<toml::table>("env")) build_env = *base;
    for (const auto& [name, value] : *env->as_table()) build_env.insert_or_assign(name, value);
    build->insert_or_assign("env", std::move(build_env));
  }
  auto recipe = FromTable(where, merged);
  if (!recipe.ok()) return recipe.status();
  recipe->versions.front().source = version.source;
  return std::make_shared<const Recipe>(*std::move(recipe));
}

absl::Status ReadPlatform(const Where& where, const toml::table& root, Recipe& recipe) {
  auto table = TableAt(where, root, "platform", "", true);
  if (!table.ok()) return table.status();
  const toml::table& t = **table;
  if (absl::Status s =
          CheckKeys(where, t, "platform", {"cpu_archs", "glibc_max", "cuda_min", "cuda_max"});
      !s.ok()) {
    return s;
  }
  auto archs = StringArrayAt(where, t, "cpu_archs", "platform");
  if (!archs.ok()) return archs.status();
  static const std::set<std::string> kCpus = {"aarch64", "x86_64", "ppc64le", "s390x"};
  if (archs->empty()) {
    return where.Error(t.source(), "platform.cpu_archs",
                       "give the CPU architectures a build host may have, e.g. [\"aarch64\"]");
  }
  for (const std::string& cpu : *archs) {
    if (kCpus.count(cpu) == 0) {
      return where.Error(*t.get("cpu_archs"), "platform.cpu_archs",
                         absl::StrCat("unknown CPU arch \"", cpu,
                                      "\": use aarch64, x86_64, ppc64le or s390x (as uname -m "
                                      "prints them)"));
    }
  }
  recipe.platform.cpu_archs = *archs;

  auto glibc = StringAt(where, t, "glibc_max", "platform", true);
  if (!glibc.ok()) return glibc.status();
  auto ceiling = ParseGlibcCeiling(**glibc);
  if (!ceiling.ok()) {
    return where.Error(*t.get("glibc_max"), "platform.glibc_max", ceiling.status().message());
  }
  recipe.platform.glibc_max = *ceiling;

  auto cmin = CudaVersionAt(where, t, "cuda_min", "platform");
  if (!cmin.ok()) return cmin.status();
  auto cmax = CudaVersionAt(where, t, "cuda_max", "platform");
  if (!cmax.ok()) return cmax.status();
  if (*cmax < *cmin) {
    return where.Error(*t.get("cuda_max"), "platform.cuda_max",
                       absl::StrCat("cuda_max ", cmax->ToString(), " is below cuda_min ",
                                    cmin->ToString(), ": swap them"));
  }
  recipe.platform.cuda = CudaRange{*cmin, *cmax};
  return absl::OkStatus();
}

// [python.farm_fallback.<project>]: index (optional) and cuda, for a project of
// farm_requirements (read first).
absl::Status ReadFarmFallbacks(const Where& where, const toml::table& python, Recipe& recipe) {
  auto table = TableAt(where, python, "farm_fallback", "python", false);
  if (!table.ok()) return table.status();
  if (*table == nullptr) return absl::OkStatus();
  for (auto&& [key, node] : **table) {
    const std::string project(key.str());
    const std::string prefix = absl::StrCat("python.farm_fallback.", project);
    auto requirement =
        std::find_if(recipe.farm_requirements.begin(), recipe.farm_requirements.end(),
                     [&](const FarmRequirement& r) {
                       return NormalizeProjectName(r.project) == NormalizeProjectName(project);
                     });
    if (requirement == recipe.farm_requirements.end()) {
      std::vector<std::string> named;
      for (const FarmRequirement& r : recipe.farm_requirements) named.push_back(r.project);
      return where.Error(
          key.source(), prefix,
          absl::StrCat("no farm requirement is for ", project, " (farm_requirements names ",
                       named.empty() ? "none" : absl::StrJoin(named, ", "),
                       "). Fix: name the project of a farm_requirements entry, as "
                       "[python.farm_fallback.torch] for \"torch==2.11.0\""));
    }
    if (!node.is_table()) {
      return where.Error(
          node, prefix, absl::StrCat("must be a table (index, cuda), not ", TypeName(node.type())));
    }
    const toml::table& t = *node.as_table();
    if (absl::Status s = CheckKeys(where, t, prefix, {"index", "cuda"}); !s.ok()) return s;
    FarmFallback fallback;
    auto index = StringAt(where, t, "index", prefix, false);
    if (!index.ok()) return index.status();
    if (index->has_value()) {
      // One way to say "the host's index": leave the key out.
      if (absl::Status s = CheckFallbackIndexUrl(**index); !s.ok()) {
        return where.Error(*t.get("index"), Join(prefix, "index"), s.message());
      }
      fallback.index_url = **index;
    }
    auto cuda = CudaVersionAt(where, t, "cuda", prefix);
    if (!cuda.ok()) return cuda.status();
    fallback.cuda = *cuda;
    requirement->fallback = fallback;
  }
  return absl::OkStatus();
}

absl::Status ReadPython(const Where& where, const toml::table& root, Recipe& recipe) {
  auto table = TableAt(where, root, "python", "", true);
  if (!table.ok()) return table.status();
  const toml::table& t = **table;
  if (absl::Status s = CheckKeys(where, t, "python",
                                 {"version", "requirements", "farm_requirements", "farm_fallback"});
      !s.ok()) {
    return s;
  }
  auto version = StringAt(where, t, "version", "python", true);
  if (!version.ok()) return version.status();
  if (absl::Status s = CheckPythonVersion(**version); !s.ok()) {
    return where.Error(*t.get("version"), "python.version", s.message());
  }
  recipe.python = **version;
  auto requirements = StringArrayAt(where, t, "requirements", "python");
  if (!requirements.ok()) return requirements.status();
  recipe.python_requirements = *requirements;
  auto farm = StringArrayAt(where, t, "farm_requirements", "python");
  if (!farm.ok()) return farm.status();
  std::set<std::string> projects;
  for (size_t i = 0; i < farm->size(); ++i) {
    const toml::node& node = *t.get("farm_requirements")->as_array()->get(i);
    auto requirement = ParseFarmRequirement((*farm)[i]);
    if (!requirement.ok()) {
      return where.Error(node, "python.farm_requirements", requirement.status().message());
    }
    // One wheel per project: pip installs one version of it.
    if (!projects.insert(NormalizeProjectName(requirement->project)).second) {
      return where.Error(node, "python.farm_requirements",
                         absl::StrCat(requirement->project, " is named twice: keep one version"));
    }
    for (const std::string& r : recipe.python_requirements) {
      auto project = RequirementProjectName(r);
      if (project.ok() &&
          NormalizeProjectName(*project) == NormalizeProjectName(requirement->project)) {
        return where.Error(node, "python.farm_requirements",
                           absl::StrCat(requirement->project,
                                        " is in requirements too. Fix: keep it in one of them: "
                                        "farm_requirements for the farm's own wheel, "
                                        "requirements for a package index's"));
      }
    }
    recipe.farm_requirements.push_back(*requirement);
  }
  return ReadFarmFallbacks(where, t, recipe);
}

absl::Status ReadBuild(const Where& where, const toml::table& root, Recipe& recipe) {
  auto table = TableAt(where, root, "build", "", true);
  if (!table.ok()) return table.status();
  const toml::table& t = **table;
  if (absl::Status s = CheckKeys(
          where, t, "build",
          {"prepare", "command", "env", "wheel", "job_memory_gib", "strict_nvcc", "strict_cc"});
      !s.ok()) {
    return s;
  }
  const toml::node* command = t.get("command");
  if (command == nullptr) {
    return where.Error(t.source(), "build.command",
                       "missing: give the command that builds the wheel, e.g. [\"python3\", "
                       "\"setup.py\", \"bdist_wheel\"]");
  }
  auto parsed = CommandFrom(where, *command, "build.command", BuildPlaceholders());
  if (!parsed.ok()) return parsed.status();
  recipe.build.command = *parsed;

  if (const toml::node* prepare = t.get("prepare"); prepare != nullptr) {
    if (!prepare->is_array()) {
      return where.Error(*prepare, "build.prepare",
                         "must be an array of commands (shell strings or argv arrays)");
    }
    for (const toml::node& item : *prepare->as_array()) {
      auto step = CommandFrom(where, item, "build.prepare", BuildPlaceholders());
      if (!step.ok()) return step.status();
      recipe.build.prepare.push_back(*step);
    }
  }
  auto env = TableAt(where, t, "env", "build", false);
  if (!env.ok()) return env.status();
  if (*env != nullptr) {
    for (auto&& [key, node] : **env) {
      const std::string name(key.str());
      const std::string full = absl::StrCat("build.env.", name);
      if (!IsEnvName(name)) {
        return where.Error(key.source(), full,
                           "not an environment variable name: use letters, digits and _");
      }
      if (!node.is_string()) {
        return where.Error(node, full,
                           absl::StrCat("must be a string, not ", TypeName(node.type()),
                                        " (quote it: ", name, " = \"1\")"));
      }
      const std::string value = node.as_string()->get();
      if (absl::Status s = CheckPlaceholders(value, BuildPlaceholders()); !s.ok()) {
        return where.Error(node, full, s.message());
      }
      recipe.build.env[name] = value;
    }
  }
  auto wheel = StringAt(where, t, "wheel", "build", false);
  if (!wheel.ok()) return wheel.status();
  if (wheel->has_value()) {
    const std::string& glob = **wheel;
    if (glob.empty() || glob[0] == '/' || absl::StrContains(glob, "..") ||
        !absl::EndsWith(glob, ".whl")) {
      return where.Error(*t.get("wheel"), "build.wheel",
                         absl::StrCat("\"", glob,
                                      "\" must be a relative glob inside the source tree ending "
                                      "in .whl, e.g. \"dist/*.whl\""));
    }
    recipe.build.wheel_glob = glob;
  }
  auto memory = NumberAt(where, t, "job_memory_gib", "build");
  if (!memory.ok()) return memory.status();
  if (memory->has_value()) {
    if (**memory < 0.25) {
      return where.Error(*t.get("job_memory_gib"), "build.job_memory_gib",
                         "must be at least 0.25 (GiB of RAM one compile job needs)");
    }
    recipe.build.job_memory_gib = **memory;
  }
  for (const auto& [key, flag] :
       {std::pair<const char*, bool*>{"strict_nvcc", &recipe.build.strict_nvcc},
        std::pair<const char*, bool*>{"strict_cc", &recipe.build.strict_cc}}) {
    const toml::node* strict = t.get(key);
    if (strict == nullptr) continue;
    if (!strict->is_boolean()) {
      return where.Error(*strict, absl::StrCat("build.", key),
                         absl::StrCat("must be true or false, not ", TypeName(strict->type())));
    }
    *flag = strict->as_boolean()->get();
  }
  return absl::OkStatus();
}

absl::Status ReadPublish(const Where& where, const toml::table& root, Recipe& recipe) {
  const toml::node* node = root.get("publish");
  if (node == nullptr) {
    recipe.publish.push_back(PublishTarget{});  // the built-in index
    return absl::OkStatus();
  }
  if (!node->is_array_of_tables()) {
    return where.Error(*node, "publish",
                       "must be [[publish]] tables, each with kind = \"builtin\", \"repository\" "
                       "or \"command\"");
  }
  for (const toml::node& item : *node->as_array()) {
    const toml::table& t = *item.as_table();
    if (absl::Status s =
            CheckKeys(where, t, "publish", {"kind", "url", "username", "password_env", "command"});
        !s.ok()) {
      return s;
    }
    auto kind = StringAt(where, t, "kind", "publish", true);
    if (!kind.ok()) return kind.status();
    PublishTarget target;
    auto only = [&](std::initializer_list<const char*> allowed) -> absl::Status {
      for (const char* key : {"url", "username", "password_env", "command"}) {
        const bool ok = std::any_of(allowed.begin(), allowed.end(),
                                    [&](const char* a) { return std::string(a) == key; });
        if (!ok && t.contains(key)) {
          return where.Error(*t.get(key), absl::StrCat("publish.", key),
                             absl::StrCat("not used by kind = \"", **kind, "\": remove it"));
        }
      }
      return absl::OkStatus();
    };
    if (**kind == "builtin") {
      if (absl::Status s = only({}); !s.ok()) return s;
      target.kind = PublishTarget::Kind::kBuiltin;
    } else if (**kind == "repository") {
      if (absl::Status s = only({"url", "username", "password_env"}); !s.ok()) return s;
      target.kind = PublishTarget::Kind::kRepository;
      auto url = StringAt(where, t, "url", "publish", true);
      if (!url.ok()) return url.status();
      if (!absl::StartsWith(**url, "http://") && !absl::StartsWith(**url, "https://")) {
        return where.Error(*t.get("url"), "publish.url",
                           absl::StrCat("\"", **url,
                                        "\" is not an http(s) URL: give the legacy upload URL, "
                                        "e.g. https://upload.pypi.org/legacy/"));
      }
      target.url = **url;
      auto user = StringAt(where, t, "username", "publish", false);
      if (!user.ok()) return user.status();
      if (user->has_value()) target.username = **user;
      auto password = StringAt(where, t, "password_env", "publish", true);
      if (!password.ok()) return password.status();
      if (!IsEnvName(**password)) {
        return where.Error(*t.get("password_env"), "publish.password_env",
                           "give the NAME of an environment variable holding the token (never "
                           "the token itself)");
      }
      target.password_env = **password;
    } else if (**kind == "command") {
      if (absl::Status s = only({"command"}); !s.ok()) return s;
      target.kind = PublishTarget::Kind::kCommand;
      const toml::node* command = t.get("command");
      if (command == nullptr) {
        return where.Error(t.source(), "publish.command",
                           "missing: give the hook, e.g. [\"gh\", \"release\", \"upload\", "
                           "\"v{version}\", \"{wheel}\"]");
      }
      // The hook runs on the coordinator with values from the build's wheel: argv only, so a
      // value is one argument and never shell text.
      if (command->is_string()) {
        return where.Error(
            *command, "publish.command",
            "a shell string is refused here: the hook runs on the coordinator and its values "
            "come from what the build produced. Fix: write it as an argv array, e.g. [\"gh\", "
            "\"release\", \"upload\", \"v{version}\", \"{wheel}\"]; for a shell, pass each "
            "value as an argument after the script: [\"sh\", \"-c\", \"gh release upload v1 "
            "\\\"$1\\\"\", \"sh\", \"{wheel}\"] (or read $FARM_WHEEL)");
      }
      auto parsed = CommandFrom(where, *command, "publish.command", PublishPlaceholders());
      if (!parsed.ok()) return parsed.status();
      if (absl::Status s = CommandHookPublisher::CheckTemplate(parsed->argv); !s.ok()) {
        return where.Error(*command, "publish.command", s.message());
      }
      target.command = *parsed;
    } else {
      return where.Error(*t.get("kind"), "publish.kind",
                         absl::StrCat("unknown publish kind \"", **kind,
                                      "\": use \"builtin\", \"repository\" or \"command\""));
    }
    recipe.publish.push_back(std::move(target));
  }
  return absl::OkStatus();
}

// One [[prerequisites]] table: a library the build needs and where it comes from.
absl::StatusOr<Prerequisite> PrerequisiteFrom(const Where& where, const toml::table& t) {
  constexpr absl::string_view kPrefix = "prerequisites";
  if (absl::Status s = CheckKeys(
          where, t, kPrefix, {"name", "version", "wheel", "host_library", "linker_names", "env"});
      !s.ok()) {
    return s;
  }
  Prerequisite p;
  p.line = static_cast<int>(t.source().begin.line);
  auto name = StringAt(where, t, "name", kPrefix, true);
  if (!name.ok()) return name.status();
  p.name = **name;
  if (p.name.empty() || p.name.size() > 64 ||
      !std::all_of(p.name.begin(), p.name.end(), [](char c) {
        return absl::ascii_isalnum(c) || c == ' ' || c == '.' || c == '_' || c == '-' || c == '+';
      })) {
    return where.Error(*t.get("name"), "prerequisites.name",
                       "give the library's name in 1-64 letters, digits, spaces or . _ - +, "
                       "e.g. \"cuDNN\"");
  }
  const std::string key = absl::StrCat("prerequisites.", p.name);
  auto version = StringAt(where, t, "version", kPrefix, false);
  if (!version.ok()) return version.status();
  if (version->has_value()) {
    auto spec = VersionSpecifier::Parse(**version);
    if (!spec.ok())
      return where.Error(*t.get("version"), key + ".version", spec.status().message());
    p.version = spec->text();
  }
  auto wheel = StringAt(where, t, "wheel", kPrefix, false);
  if (!wheel.ok()) return wheel.status();
  auto host = StringAt(where, t, "host_library", kPrefix, false);
  if (!host.ok()) return host.status();
  if (wheel->has_value() == host->has_value()) {
    return where.Error(
        wheel->has_value() ? t.get("host_library")->source() : t.source(), key,
        absl::StrCat(wheel->has_value() ? "both wheel and host_library given" : "no source given",
                     ": say where it comes from with exactly one of wheel = \"nvidia-...\" (a pip "
                     "requirement installed into the build environment) or host_library = "
                     "\"libX.so.N\" (the build host's own, checked when the build is planned)"));
  }
  if (wheel->has_value()) {
    p.wheel = **wheel;
    const toml::node& node = *t.get("wheel");
    if (absl::Status s = CheckPlaceholders(p.wheel, PrerequisiteWheelPlaceholders()); !s.ok()) {
      return where.Error(node, key + ".wheel", s.message());
    }
    auto sample = PrerequisiteWheelFor(p, ToolkitVersion{13, 0});
    if (!sample.ok()) return where.Error(node, key + ".wheel", sample.status().message());
    if (auto project = RequirementProjectName(*sample); !project.ok()) {
      return where.Error(node, key + ".wheel", project.status().message());
    }
  } else {
    p.host_library = **host;
    if (!IsSoname(p.host_library)) {
      return where.Error(*t.get("host_library"), key + ".host_library",
                         absl::StrCat("\"", p.host_library,
                                      "\" is not a soname: give the file name the dynamic loader "
                                      "knows (`ldconfig -p`), e.g. \"libcudnn.so.9\""));
    }
  }
  auto links = StringArrayAt(where, t, "linker_names", kPrefix);
  if (!links.ok()) return links.status();
  for (const std::string& link : *links) {
    const toml::node& node = *t.get("linker_names");
    if (!p.FromWheel()) {
      return where.Error(node, key + ".linker_names",
                         "only a wheel prerequisite gets linker names: a host library's are the "
                         "host's business (its -dev package). Remove it");
    }
    if (!absl::StartsWith(link, "{site_packages}/") || absl::StrContains(link, "..")) {
      return where.Error(node, key + ".linker_names",
                         absl::StrCat("\"", link,
                                      "\" must name a file the wheel installs, starting with "
                                      "{site_packages}/ and without .., e.g. "
                                      "\"{site_packages}/nvidia/nccl/lib/libnccl.so.2\""));
    }
    if (absl::Status s = CheckPlaceholders(link, PrerequisiteEnvPlaceholders()); !s.ok()) {
      return where.Error(node, key + ".linker_names", s.message());
    }
    if (auto name = LinkerNameFor(link); !name.ok()) {
      return where.Error(node, key + ".linker_names", name.status().message());
    }
    p.linker_names.push_back(link);
  }
  auto env = TableAt(where, t, "env", kPrefix, false);
  if (!env.ok()) return env.status();
  if (*env != nullptr) {
    for (auto&& [k, node] : **env) {
      const std::string var(k.str());
      const std::string full = absl::StrCat(key, ".env.", var);
      if (!IsEnvName(var)) {
        return where.Error(k.source(), full,
                           "not an environment variable name: use letters, digits and _");
      }
      if (!node.is_string()) {
        return where.Error(node, full,
                           absl::StrCat("must be a string, not ", TypeName(node.type()),
                                        " (quote it: ", var, " = \"1\")"));
      }
      const std::string value = node.as_string()->get();
      if (absl::Status s = CheckPlaceholders(value, PrerequisiteEnvPlaceholders()); !s.ok()) {
        return where.Error(node, full, s.message());
      }
      if (absl::StrContains(value, '$')) {
        return where.Error(node, full,
                           "a prerequisite's values take no $VAR: they point at the prerequisite. "
                           "Extend the host's variables in [build.env]");
      }
      // The build environment's own: a prerequisite must not undo the virtualenv or the farm.
      if (var == "PATH" || var == "VIRTUAL_ENV" || var == "PYTHONHOME" || var == "PYTHONPATH" ||
          absl::StartsWith(var, "FARM_")) {
        return where.Error(k.source(), full,
                           absl::StrCat("the build host sets ", var,
                                        " for the build environment itself: point the package's "
                                        "own variables at the prerequisite instead"));
      }
      if (!p.FromWheel() && absl::StrContains(value, "{site_packages}")) {
        return where.Error(node, full,
                           "a host library is not in the build environment: {site_packages} is "
                           "only for wheel prerequisites");
      }
      p.env[var] = value;
    }
  }
  return p;
}

absl::Status ReadPrerequisites(const Where& where, const toml::table& root, Recipe& recipe) {
  const toml::node* node = root.get("prerequisites");
  if (node == nullptr) return absl::OkStatus();
  if (!node->is_array_of_tables()) {
    return where.Error(*node, "prerequisites",
                       "must be [[prerequisites]] tables, each with a name and a wheel or "
                       "host_library");
  }
  for (const toml::node& item : *node->as_array()) {
    auto p = PrerequisiteFrom(where, *item.as_table());
    if (!p.ok()) return p.status();
    for (const Prerequisite& earlier : recipe.prerequisites) {
      if (absl::AsciiStrToLower(earlier.name) == absl::AsciiStrToLower(p->name)) {
        return where.Error(*item.as_table()->get("name"), "prerequisites.name",
                           absl::StrCat("\"", p->name, "\" is declared twice (also on line ",
                                        earlier.line, "): keep one"));
      }
    }
    // One place sets each variable: a second would silently win over the first.
    for (const auto& [var, value] : p->env) {
      std::string other;
      if (recipe.build.env.count(var) > 0) other = "[build.env]";
      for (const Prerequisite& earlier : recipe.prerequisites) {
        if (earlier.env.count(var) > 0) other = absl::StrCat("prerequisite \"", earlier.name, "\"");
      }
      if (!other.empty()) {
        return where.Error(*item.as_table()->get("env")->as_table()->get(var),
                           absl::StrCat("prerequisites.", p->name, ".env.", var),
                           absl::StrCat(var, " is also set by ", other, ": set it in one place"));
      }
    }
    recipe.prerequisites.push_back(std::move(*p));
  }
  return absl::OkStatus();
}

// One arch of the [archs] table: "8.0" (also "80", "sm_80", "9.0a"), no +PTX.
absl::StatusOr<CudaTarget> ArchAt(const Where& where, const toml::node& node,
                                  absl::string_view key) {
  if (!node.is_string()) {
    return where.Error(
        node, key,
        absl::StrCat("must be an arch string such as \"8.0\", not ", TypeName(node.type())));
  }
  auto item = ParseArchItem(node.as_string()->get());
  if (!item.ok()) return where.Error(node, key, item.status().message());
  if (item->ptx) {
    return where.Error(node, key,
                       "give the SM alone (\"8.0\"): whether PTX is emitted is archs.ptx");
  }
  return item->target;
}

absl::Status ReadArchs(const Where& where, const toml::table& root, Recipe& recipe) {
  auto table = TableAt(where, root, "archs", "", false);
  if (!table.ok()) return table.status();
  if (*table == nullptr) return absl::OkStatus();
  const toml::table& t = **table;
  if (absl::Status s =
          CheckKeys(where, t, "archs",
                    {"buildable", "min", "min_reason", "ptx", "split_below", "split_reason"});
      !s.ok()) {
    return s;
  }
  ArchRules& rules = recipe.archs;
  rules.line = static_cast<int>(t.source().begin.line);
  if (const toml::node* buildable = t.get("buildable"); buildable != nullptr) {
    if (!buildable->is_array() || buildable->as_array()->empty()) {
      return where.Error(*buildable, "archs.buildable",
                         "give the archs the package can compile, e.g. [\"8.0\", \"9.0\"], or "
                         "leave the key out when it compiles whatever is asked");
    }
    for (const toml::node& item : *buildable->as_array()) {
      auto target = ArchAt(where, item, "archs.buildable");
      if (!target.ok()) return target.status();
      if (std::find(rules.buildable.begin(), rules.buildable.end(), *target) !=
          rules.buildable.end()) {
        return where.Error(item, "archs.buildable",
                           absl::StrCat(target->DottedName(), " is listed twice"));
      }
      rules.buildable.push_back(*target);
    }
    std::sort(rules.buildable.begin(), rules.buildable.end());
  }
  // A limit comes with the reason a refused user reads.
  auto limit = [&](const char* key, const char* reason_key, std::optional<CudaTarget>& target,
                   std::string& reason) -> absl::Status {
    const toml::node* node = t.get(key);
    auto text = StringAt(where, t, reason_key, "archs", false);
    if (!text.ok()) return text.status();
    if (node == nullptr) {
      if (text->has_value()) {
        return where.Error(
            *t.get(reason_key), Join("archs", reason_key),
            absl::StrCat("a reason without archs.", key, ": add ", key, " or remove it"));
      }
      return absl::OkStatus();
    }
    auto parsed = ArchAt(where, *node, Join("archs", key));
    if (!parsed.ok()) return parsed.status();
    if (!text->has_value() || absl::StripAsciiWhitespace(**text).empty()) {
      return where.Error(
          *node, Join("archs", key),
          absl::StrCat("give archs.", reason_key, " too: the refusal tells the user why"));
    }
    target = *parsed;
    reason = **text;
    return absl::OkStatus();
  };
  if (absl::Status s = limit("min", "min_reason", rules.min, rules.min_reason); !s.ok()) return s;
  if (absl::Status s = limit("split_below", "split_reason", rules.split_below, rules.split_reason);
      !s.ok()) {
    return s;
  }
  if (const toml::node* ptx = t.get("ptx"); ptx != nullptr) {
    if (!ptx->is_boolean()) {
      return where.Error(*ptx, "archs.ptx",
                         absl::StrCat("must be true or false, not ", TypeName(ptx->type())));
    }
    rules.ptx = ptx->as_boolean()->get();
  }
  if (rules.min && !rules.buildable.empty() &&
      std::none_of(rules.buildable.begin(), rules.buildable.end(),
                   [&](const CudaTarget& b) { return b.sm >= rules.min->sm; })) {
    return where.Error(*t.get("min"), "archs.min",
                       "no buildable arch is at or above it: fix archs.min or archs.buildable");
  }
  return absl::OkStatus();
}

absl::Status ReadSize(const Where& where, const toml::table& root, Recipe& recipe) {
  auto table = TableAt(where, root, "size", "", false);
  if (!table.ok()) return table.status();
  if (*table == nullptr) return absl::OkStatus();
  if (absl::Status s = CheckKeys(where, **table, "size", {"base_mib", "per_arch_mib"}); !s.ok()) {
    return s;
  }
  auto base = NumberAt(where, **table, "base_mib", "size");
  if (!base.ok()) return base.status();
  auto per_arch = NumberAt(where, **table, "per_arch_mib", "size");
  if (!per_arch.ok()) return per_arch.status();
  if (base->has_value() && !per_arch->has_value()) {
    return where.Error((*table)->source(), "size.per_arch_mib",
                       "base_mib needs per_arch_mib too: the estimate is base + per_arch * archs");
  }
  recipe.size.base_mib = *base;
  recipe.size.per_arch_mib = *per_arch;
  return absl::OkStatus();
}

// [smoke] gpu_wait = "6h": how long require_gpu waits for a GPU worker that runs an SM. A
// duration as Go writes them ("90m", "1h30m", "3s"), whole seconds, 1s to 30 days.
absl::StatusOr<std::optional<absl::Duration>> GpuWaitAt(const Where& where, const toml::table& t,
                                                        bool require_gpu) {
  auto text = StringAt(where, t, "gpu_wait", "smoke", false);
  if (!text.ok()) return text.status();
  if (!text->has_value()) return std::optional<absl::Duration>();
  const toml::node& node = *t.get("gpu_wait");
  if (!require_gpu) {
    return where.Error(node, "smoke.gpu_wait",
                       "only a build with require_gpu = true waits for a GPU worker. Fix: set "
                       "require_gpu = true, or drop gpu_wait");
  }
  constexpr absl::Duration kMax = absl::Hours(30 * 24);
  absl::Duration wait;
  if (!absl::ParseDuration(**text, &wait) || wait < absl::Seconds(1) || wait > kMax ||
      absl::Trunc(wait, absl::Seconds(1)) != wait) {
    return where.Error(
        node, "smoke.gpu_wait",
        absl::StrCat("\"", **text,
                     "\" is not a duration of whole seconds from 1s to 720h. Fix: write it with "
                     "its unit, e.g. \"6h\", \"90m\" or \"1h30m\""));
  }
  return std::optional<absl::Duration>(wait);
}

absl::Status ReadSmoke(const Where& where, const toml::table& root, Recipe& recipe) {
  auto table = TableAt(where, root, "smoke", "", false);
  if (!table.ok()) return table.status();
  if (*table == nullptr) return absl::OkStatus();
  const toml::table& t = **table;
  if (absl::Status s = CheckKeys(
          where, t, "smoke", {"command", "requirements", "on_failure", "require_gpu", "gpu_wait"});
      !s.ok()) {
    return s;
  }
  SmokeSpec smoke;
  const toml::node* command = t.get("command");
  if (command == nullptr) {
    return where.Error(t.source(), "smoke.command",
                       "missing: give the command that tests the installed wheel, e.g. \"python -c "
                       "'import demo_cuda_ext'\"");
  }
  auto parsed = CommandFrom(where, *command, "smoke.command", {"sm"});
  if (!parsed.ok()) return parsed.status();
  smoke.command = *parsed;
  auto requirements = StringArrayAt(where, t, "requirements", "smoke");
  if (!requirements.ok()) return requirements.status();
  for (const std::string& r : *requirements) {
    if (absl::Status s = CheckPlaceholders(r, {"cuda_major"}); !s.ok()) {
      return where.Error(*t.get("requirements"), "smoke.requirements", s.message());
    }
  }
  smoke.requirements = *requirements;
  auto on_failure = StringAt(where, t, "on_failure", "smoke", false);
  if (!on_failure.ok()) return on_failure.status();
  if (on_failure->has_value()) {
    if (**on_failure != "block" && **on_failure != "mark") {
      return where.Error(*t.get("on_failure"), "smoke.on_failure",
                         absl::StrCat("\"", **on_failure,
                                      "\" is not a policy: use \"block\" (a failed smoke test "
                                      "stops publishing) or \"mark\" (publish, marked failed)"));
    }
    smoke.block_on_failure = **on_failure == "block";
  }
  if (const toml::node* require = t.get("require_gpu"); require != nullptr) {
    if (!require->is_boolean()) {
      return where.Error(*require, "smoke.require_gpu",
                         absl::StrCat("must be true or false, not ", TypeName(require->type())));
    }
    smoke.require_gpu = require->as_boolean()->get();
  }
  auto gpu_wait = GpuWaitAt(where, t, smoke.require_gpu);
  if (!gpu_wait.ok()) return gpu_wait.status();
  if (gpu_wait->has_value()) smoke.gpu_wait = **gpu_wait;
  recipe.smoke = std::move(smoke);
  return absl::OkStatus();
}

absl::StatusOr<Recipe> FromTable(const Where& where, const toml::table& root) {
  if (absl::Status s =
          CheckKeys(where, root, "",
                    {"name", "package", "description", "python", "source", "versions", "platform",
                     "build", "publish", "size", "prerequisites", "archs", "smoke"});
      !s.ok()) {
    return s;
  }
  Recipe recipe;
  recipe.file = where.file();
  auto name = StringAt(where, root, "name", "", true);
  if (!name.ok()) return name.status();
  const std::string stem = fs::path(where.file()).stem().string();
  if (!IsValidName(**name)) {
    return where.Error(*root.get("name"), "name",
                       absl::StrCat("\"", **name,
                                    "\" is not a recipe name: use letters, digits, "
                                    "'-', '_' and '.'"));
  }
  if (**name != stem) {
    return where.Error(*root.get("name"), "name",
                       absl::StrCat("\"", **name, "\" differs from the file name \"", stem,
                                    ".toml\": rename one so they match"));
  }
  recipe.name = **name;
  auto package = StringAt(where, root, "package", "", true);
  if (!package.ok()) return package.status();
  if (!IsValidName(**package)) {
    return where.Error(*root.get("package"), "package",
                       absl::StrCat("\"", **package,
                                    "\" is not a distribution name: use letters, digits, '-', "
                                    "'_' and '.'"));
  }
  recipe.package = **package;
  auto description = StringAt(where, root, "description", "", false);
  if (!description.ok()) return description.status();
  recipe.description = description->value_or("");

  std::optional<RecipeSource> default_source;
  auto source_table = TableAt(where, root, "source", "", false);
  if (!source_table.ok()) return source_table.status();
  if (*source_table != nullptr) {
    auto source = SourceFrom(where, **source_table, "source");
    if (!source.ok()) return source.status();
    default_source = *source;
  }
  std::vector<const toml::table*> own_tables;
  if (absl::Status s = ReadVersions(where, root, default_source, recipe, own_tables); !s.ok()) {
    return s;
  }
  for (RecipeVersion& v : recipe.versions) {
    if (v.source.kind == RecipeSource::Kind::kPypi && v.source.pypi_project.empty()) {
      v.source.pypi_project = recipe.package;
    }
  }
  if (absl::Status s = ReadPython(where, root, recipe); !s.ok()) return s;
  if (absl::Status s = ReadPlatform(where, root, recipe); !s.ok()) return s;
  if (absl::Status s = ReadBuild(where, root, recipe); !s.ok()) return s;
  if (absl::Status s = ReadPrerequisites(where, root, recipe); !s.ok()) return s;
  if (absl::Status s = ReadPublish(where, root, recipe); !s.ok()) return s;
  if (absl::Status s = ReadSize(where, root, recipe); !s.ok()) return s;
  if (absl::Status s = ReadArchs(where, root, recipe); !s.ok()) return s;
  if (absl::Status s = ReadSmoke(where, root, recipe); !s.ok()) return s;
  for (size_t i = 0; i < recipe.versions.size(); ++i) {
    if (own_tables[i] == nullptr) continue;
    auto own = VersionRecipe(where, root, *own_tables[i], recipe.versions[i]);
    if (!own.ok()) return own.status();
    recipe.versions[i].own_recipe = *std::move(own);
  }
  return recipe;
}

}  // namespace

absl::StatusOr<Recipe> ParseRecipe(absl::string_view toml_text, const std::string& path) {
  const Where where(path);
  try {
    toml::table root =
        toml::parse(std::string_view(toml_text.data(), toml_text.size()), std::string_view(path));
    return FromTable(where, root);
  } catch (const toml::parse_error& e) {
    // toml++ reports syntax errors by exception; they end here as a status.
    return where.Error(e.source(), "",
                       absl::StrCat("TOML syntax error: ", std::string(e.description())));
  }
}

absl::StatusOr<Recipe> LoadRecipeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("cannot read recipe ", path, ": check the path and its permissions"));
  }
  std::ostringstream text;
  text << in.rdbuf();
  return ParseRecipe(text.str(), path);
}

absl::StatusOr<RecipeDirectory> LoadRecipeDirectory(const std::string& dir) {
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    return absl::FailedPreconditionError(absl::StrCat("cannot read the recipes directory ", dir,
                                                      ": ", ec.message(),
                                                      ". Fix: point --recipes-dir at it"));
  }
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : it) {
    if (entry.path().extension() == ".toml" && entry.is_regular_file(ec)) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  RecipeDirectory out;
  for (const fs::path& file : files) {
    auto recipe = LoadRecipeFile(file.string());
    if (recipe.ok()) {
      out.recipes.push_back(std::move(*recipe));
    } else {
      out.errors.push_back(recipe.status());
    }
  }
  std::sort(out.recipes.begin(), out.recipes.end(),
            [](const Recipe& a, const Recipe& b) { return a.name < b.name; });
  return out;
}

}  // namespace farm
