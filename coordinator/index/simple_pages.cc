#include "coordinator/index/simple_pages.h"

#include <set>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "coordinator/index/package_index.h"

namespace farm::coordinator {
namespace {

constexpr char kApiVersion[] = "1.1";

std::string UploadTime(const google::protobuf::Timestamp& ts) {
  const absl::Time t = absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", t, absl::UTCTimeZone());
}

std::string HtmlHead(const std::string& title) {
  return absl::StrCat(
      "<!DOCTYPE html>\n<html>\n<head>\n<meta name=\"pypi:repository-version\" content=\"",
      kApiVersion, "\">\n<title>", HtmlEscape(title), "</title>\n</head>\n<body>\n");
}

}  // namespace

std::string HtmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string RelativeFileUrl(const farm::v1::PackageFile& file, const std::string& to_root) {
  return absl::StrCat(to_root, "files/", file.wheel().hash(), "/", PercentEncode(file.filename()));
}

std::string RenderRootHtml(const std::vector<std::string>& projects) {
  std::string out = HtmlHead("Simple index");
  for (const std::string& p : projects) {
    absl::StrAppend(&out, "<a href=\"", PercentEncode(p), "/\">", HtmlEscape(p), "</a><br>\n");
  }
  out += "</body>\n</html>\n";
  return out;
}

std::string RenderRootJson(const std::vector<std::string>& projects) {
  nlohmann::json j = {{"meta", {{"api-version", kApiVersion}}},
                      {"projects", nlohmann::json::array()}};
  for (const std::string& p : projects) j["projects"].push_back({{"name", p}});
  return j.dump();
}

std::string RenderProjectHtml(const std::string& project,
                              const std::vector<farm::v1::PackageFile>& files,
                              const std::string& to_root) {
  std::string out = HtmlHead(absl::StrCat("Links for ", project));
  absl::StrAppend(&out, "<h1>Links for ", HtmlEscape(project), "</h1>\n");
  for (const auto& f : files) {
    absl::StrAppend(&out, "<a href=\"", HtmlEscape(RelativeFileUrl(f, to_root)),
                    "#sha256=", f.wheel().hash(), "\"");
    if (!f.requires_python().empty()) {
      absl::StrAppend(&out, " data-requires-python=\"", HtmlEscape(f.requires_python()), "\"");
    }
    if (!f.core_metadata().hash().empty()) {
      // PEP 714 name, plus the PEP 658 one older pips read.
      absl::StrAppend(&out, " data-core-metadata=\"sha256=", f.core_metadata().hash(),
                      "\" data-dist-info-metadata=\"sha256=", f.core_metadata().hash(), "\"");
    }
    absl::StrAppend(&out, ">", HtmlEscape(f.filename()), "</a><br>\n");
  }
  out += "</body>\n</html>\n";
  return out;
}

std::string RenderProjectJson(const std::string& project,
                              const std::vector<farm::v1::PackageFile>& files,
                              const std::string& to_root) {
  nlohmann::json j = {{"meta", {{"api-version", kApiVersion}}},
                      {"name", project},
                      {"files", nlohmann::json::array()},
                      {"versions", nlohmann::json::array()}};
  std::set<std::string> versions;
  for (const auto& f : files) {
    nlohmann::json file = {{"filename", f.filename()},
                           {"url", RelativeFileUrl(f, to_root)},
                           {"hashes", {{"sha256", f.wheel().hash()}}},
                           {"size", f.wheel().size_bytes()},
                           {"upload-time", UploadTime(f.uploaded_at())}};
    if (!f.requires_python().empty()) file["requires-python"] = f.requires_python();
    if (!f.core_metadata().hash().empty()) {
      // PEP 714 name only: pip 22.3-23.0 (Debian 12's pip) crashes on the PEP 691 dict form
      // of the old "dist-info-metadata" key, which is why PEP 714 renamed it.
      file["core-metadata"] = {{"sha256", f.core_metadata().hash()}};
    }
    j["files"].push_back(std::move(file));
    versions.insert(f.version());
  }
  for (const std::string& v : versions) j["versions"].push_back(v);
  return j.dump();
}

}  // namespace farm::coordinator
