// The simple repository API pages (PEP 503 HTML, PEP 691 JSON at api-version 1.1 with the
// PEP 700 fields), rendered from the index's records. File URLs are relative to the page
// ("../../files/..."), so the pages stay right behind a reverse proxy.
#pragma once

#include <string>
#include <vector>

#include "farm/v1/package_index.pb.h"

namespace farm::coordinator {

std::string RenderRootHtml(const std::vector<std::string>& projects);
std::string RenderRootJson(const std::vector<std::string>& projects);
// `to_root` leads from the project page to the index's root: "../../" from
// /simple/<project>/, "../../../" from an arch set's /<set>/simple/<project>/.
std::string RenderProjectHtml(const std::string& project,
                              const std::vector<farm::v1::PackageFile>& files,
                              const std::string& to_root = "../../");
std::string RenderProjectJson(const std::string& project,
                              const std::vector<farm::v1::PackageFile>& files,
                              const std::string& to_root = "../../");

// The relative link from a project page to a file: "../../files/<sha256>/<name>".
std::string RelativeFileUrl(const farm::v1::PackageFile& file,
                            const std::string& to_root = "../../");

std::string HtmlEscape(const std::string& text);

}  // namespace farm::coordinator
