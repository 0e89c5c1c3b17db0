#include "libfarm/recipes/recipe_proto.h"

#include "libfarm/text/utf8_fields.h"

namespace farm {
namespace {

void CommandToProto(const RecipeCommand& command, farm::v1::RecipeCommand* out) {
  for (const std::string& arg : command.argv) out->add_argv(arg);
  out->set_shell(command.shell);
}

RecipeCommand CommandFromProto(const farm::v1::RecipeCommand& command) {
  RecipeCommand out;
  out.argv.assign(command.argv().begin(), command.argv().end());
  out.shell = command.shell();
  return out;
}

void PrerequisiteToProto(const Prerequisite& p, farm::v1::RecipePrerequisite* out) {
  out->set_name(p.name);
  out->set_version(p.version);
  out->set_wheel(p.wheel);
  out->set_host_library(p.host_library);
  for (const std::string& link : p.linker_names) out->add_linker_names(link);
  out->mutable_env()->insert(p.env.begin(), p.env.end());
  out->set_line(static_cast<uint32_t>(p.line));
}

Prerequisite PrerequisiteFromProto(const farm::v1::RecipePrerequisite& p) {
  Prerequisite out;
  out.name = p.name();
  out.version = p.version();
  out.wheel = p.wheel();
  out.host_library = p.host_library();
  out.linker_names.assign(p.linker_names().begin(), p.linker_names().end());
  out.env.insert(p.env().begin(), p.env().end());
  out.line = static_cast<int>(p.line());
  return out;
}

}  // namespace

farm::v1::Recipe RecipeToProto(const Recipe& recipe) {
  farm::v1::Recipe out;
  out.set_name(recipe.name);
  out.set_package(recipe.package);
  out.set_description(recipe.description);
  out.set_file(recipe.file);
  for (const RecipeVersion& v : recipe.versions) {
    farm::v1::RecipeVersion* pv = out.add_versions();
    pv->set_version(v.version);
    farm::v1::RecipeSource* s = pv->mutable_source();
    s->set_kind(v.source.KindName());
    s->set_git_url(v.source.git_url);
    s->set_tag_pattern(v.source.tag_pattern);
    s->set_submodules(v.source.submodules);
    s->set_default_dir(v.source.default_dir);
    s->set_pypi_project(v.source.pypi_project);
    s->set_pypi_index(v.source.pypi_index);
    s->set_archive_url(v.source.archive_url);
    s->set_archive_sha256(v.source.archive_sha256);
  }
  for (const std::string& cpu : recipe.platform.cpu_archs) out.add_cpu_archs(cpu);
  out.set_glibc_max(recipe.platform.glibc_max.ToString());
  out.set_cuda_min(recipe.platform.cuda.min.ToString());
  out.set_cuda_max(recipe.platform.cuda.max.ToString());
  out.set_python(recipe.python);
  for (const std::string& r : recipe.python_requirements) out.add_python_requirements(r);
  for (const FarmRequirement& r : recipe.farm_requirements) out.add_farm_requirements(r.Text());
  for (const Prerequisite& p : recipe.prerequisites)
    PrerequisiteToProto(p, out.add_prerequisites());
  for (const RecipeCommand& step : recipe.build.prepare) CommandToProto(step, out.add_prepare());
  CommandToProto(recipe.build.command, out.mutable_command());
  for (const auto& [name, value] : recipe.build.env) (*out.mutable_env())[name] = value;
  out.set_wheel_glob(recipe.build.wheel_glob);
  out.set_job_memory_gib(recipe.build.job_memory_gib);
  out.set_strict_nvcc(recipe.build.strict_nvcc);
  out.set_strict_cc(recipe.build.strict_cc);
  if (recipe.smoke) {
    farm::v1::RecipeSmoke* smoke = out.mutable_smoke();
    CommandToProto(recipe.smoke->command, smoke->mutable_command());
    for (const std::string& r : recipe.smoke->requirements) smoke->add_requirements(r);
    smoke->set_on_failure(recipe.smoke->block_on_failure ? "block" : "mark");
    smoke->set_require_gpu(recipe.smoke->require_gpu);
    smoke->set_gpu_wait_seconds(
        static_cast<uint32_t>(absl::ToInt64Seconds(recipe.smoke->gpu_wait)));
  }
  for (const PublishTarget& t : recipe.publish) {
    farm::v1::RecipePublishTarget* p = out.add_publish();
    p->set_kind(t.KindName());
    p->set_url(t.url);
    if (t.kind == PublishTarget::Kind::kRepository) p->set_username(t.username);
    p->set_password_env(t.password_env);
    if (t.kind == PublishTarget::Kind::kCommand) CommandToProto(t.command, p->mutable_command());
  }
  if (recipe.size.per_arch_mib) {
    out.set_has_size_estimate(true);
    out.set_size_base_mib(recipe.size.base_mib.value_or(0.0));
    out.set_size_per_arch_mib(*recipe.size.per_arch_mib);
  }
  // TOML text is UTF-8 (the parser checks), but the file's path and the directories resolved
  // against it are the host's bytes; a lease or a reply carrying them must still parse.
  EscapeInvalidUtf8Fields(&out);
  return out;
}

Recipe BuildRecipeFromProto(const farm::v1::Recipe& proto) {
  Recipe out;
  out.name = proto.name();
  out.package = proto.package();
  out.file = proto.file();
  out.python = proto.python();
  out.python_requirements.assign(proto.python_requirements().begin(),
                                 proto.python_requirements().end());
  for (const auto& p : proto.prerequisites()) out.prerequisites.push_back(PrerequisiteFromProto(p));
  // Checked when the recipe loaded; one that no longer parses is left out of the build's
  // environment rather than installed unchecked.
  for (const auto& r : proto.farm_requirements()) {
    if (auto parsed = ParseFarmRequirement(r); parsed.ok())
      out.farm_requirements.push_back(*parsed);
  }
  for (const auto& step : proto.prepare()) out.build.prepare.push_back(CommandFromProto(step));
  out.build.command = CommandFromProto(proto.command());
  out.build.env.insert(proto.env().begin(), proto.env().end());
  out.build.wheel_glob = proto.wheel_glob();
  out.build.job_memory_gib = proto.job_memory_gib();
  out.build.strict_nvcc = proto.strict_nvcc();
  out.build.strict_cc = proto.strict_cc();
  return out;
}

}  // namespace farm
