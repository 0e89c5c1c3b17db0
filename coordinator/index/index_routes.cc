#include "coordinator/index/index_routes.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <httplib.h>

#include <memory>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "coordinator/index/simple_format.h"
#include "coordinator/index/simple_pages.h"
#include "coordinator/index/upload_handler.h"
#include "libfarm/cuda/arch_set_label.h"
#include "libfarm/publish/core_metadata.h"

namespace farm::coordinator {
namespace {

constexpr size_t kServeChunk = 1 << 20;
constexpr const char* kUploadPaths[] = {"/", "/legacy/", "/legacy"};

void NotFound(httplib::Response& res, const std::string& what) {
  res.status = 404;
  res.set_content(absl::StrCat("404 ", what, "\n"), "text/plain; charset=utf-8");
}

void Redirect(httplib::Response& res, const std::string& location) {
  res.status = 301;
  res.set_header("Location", location);
}

// Picks HTML or JSON; false (after answering 406) when the client accepts neither.
bool Negotiate(const httplib::Request& req, httplib::Response& res, NegotiatedFormat* out) {
  res.set_header("Vary", "Accept");
  *out = NegotiateSimpleFormat(req.get_header_value("Accept"));
  if (out->format == SimpleFormat::kNotAcceptable) {
    res.status = 406;
    res.set_content(
        "406 this index serves application/vnd.pypi.simple.v1+json, "
        "application/vnd.pypi.simple.v1+html and text/html\n",
        "text/plain; charset=utf-8");
    return false;
  }
  return true;
}

// Streams a CAS blob; the fd stays open for as long as httplib still reads.
bool ServeBlob(httplib::Response& res, const std::string& path, const std::string& content_type) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    return false;
  }
  auto holder = std::shared_ptr<int>(new int(fd), [](int* p) {
    ::close(*p);
    delete p;
  });
  // Published files never change under their name and hash.
  res.set_header("Cache-Control", "public, max-age=31536000, immutable");
  res.set_content_provider(
      static_cast<size_t>(st.st_size), content_type,
      [holder](size_t offset, size_t length, httplib::DataSink& sink) {
        std::string buf(std::min(length, kServeChunk), '\0');
        const ssize_t n = ::pread(*holder, buf.data(), buf.size(), static_cast<off_t>(offset));
        if (n <= 0) return false;
        return sink.write(buf.data(), static_cast<size_t>(n));
      },
      [holder](bool) {});
  return true;
}

// /simple/<project>/ or /<set>/simple/<project>/: `prefix` is "" or "/<set>", `arch_set` ""
// or the set's name.
void ServeProjectPage(const httplib::Request& req, httplib::Response& res, PackageIndex* index,
                      const std::string& prefix, const std::string& arch_set) {
  const std::string name = req.matches[req.matches.size() - 2];
  const std::string project = NormalizeProjectName(name);
  if (project != name || req.matches[req.matches.size() - 1].length() == 0) {
    // Clients must ask for the normalized URL with its slash; help those that don't.
    Redirect(res, absl::StrCat(prefix, "/simple/", project, "/"));
    return;
  }
  NegotiatedFormat format;
  if (!Negotiate(req, res, &format)) return;
  const auto files = index->Files(project, arch_set);
  if (files.empty()) {
    NotFound(res, arch_set.empty() ? absl::StrCat("no project \"", project, "\" in this index")
                                   : absl::StrCat("no file of project \"", project,
                                                  "\" for arch set ", arch_set, " in this index"));
    return;
  }
  // One level deeper than /simple/<project>/ under an arch set.
  const std::string to_root = arch_set.empty() ? "../../" : "../../../";
  res.set_content(format.format == SimpleFormat::kJson ? RenderProjectJson(project, files, to_root)
                                                       : RenderProjectHtml(project, files, to_root),
                  format.content_type);
}

// The arch set a URL's first segment names, when it is one in canonical form; otherwise
// answers (404 for anything that is no arch set, whatever it holds; 301 to the canonical
// name for another spelling of one, `rest` being the path after "/simple") and returns "".
std::string ResolveArchSet(const std::string& segment, const std::string& rest,
                           httplib::Response& res) {
  auto archs = ParseArchSetName(segment);
  if (!archs.ok()) {
    // The segment is the client's text: escaped, and never part of a path we open.
    NotFound(res, absl::StrCat("no such index: ", absl::CHexEscape(archs.status().message())));
    return "";
  }
  const std::string canonical = ArchSetName(*archs);
  if (canonical != segment) {
    Redirect(res, absl::StrCat("/", canonical, "/simple", rest));
    return "";
  }
  return canonical;
}

}  // namespace

std::vector<BodyLimit> IndexBodyLimits(const IndexHttpOptions& options) {
  std::vector<BodyLimit> limits;
  const TokenVerifier* auth = options.auth;
  for (const char* path : kUploadPaths) {
    limits.push_back(
        {"POST", path, options.max_upload_bytes + kMaxUploadFormOverhead,
         [auth](const httplib::Request& req) { return RefuseUploadWithoutToken(req, *auth); }});
  }
  return limits;
}

void RegisterIndexRoutes(httplib::Server& server, PackageIndex* index,
                         const IndexHttpOptions& options) {
  server.Get("/simple",
             [](const httplib::Request&, httplib::Response& res) { Redirect(res, "/simple/"); });
  server.Get("/simple/", [index](const httplib::Request& req, httplib::Response& res) {
    NegotiatedFormat format;
    if (!Negotiate(req, res, &format)) return;
    const std::vector<std::string> projects = index->Projects();
    res.set_content(
        format.format == SimpleFormat::kJson ? RenderRootJson(projects) : RenderRootHtml(projects),
        format.content_type);
  });
  server.Get(R"(/simple/([^/]+)(/?))",
             [index](const httplib::Request& req, httplib::Response& res) {
               ServeProjectPage(req, res, index, "", "");
             });
  // One index per arch set, beside the whole one: /sm75-sm90/simple/ lists only the files
  // labelled "+cuXY.sm75.sm90", so `pip install --index-url .../sm75-sm90/simple/ torch`
  // gets that set's wheel.
  server.Get(R"(/([^/]+)/simple)", [](const httplib::Request& req, httplib::Response& res) {
    const std::string set = ResolveArchSet(req.matches[1], "/", res);
    if (!set.empty()) Redirect(res, absl::StrCat("/", set, "/simple/"));
  });
  server.Get(R"(/([^/]+)/simple/)", [index](const httplib::Request& req, httplib::Response& res) {
    const std::string set = ResolveArchSet(req.matches[1], "/", res);
    if (set.empty()) return;
    NegotiatedFormat format;
    if (!Negotiate(req, res, &format)) return;
    const std::vector<std::string> projects = index->Projects(set);
    if (projects.empty()) {
      const std::vector<std::string> sets = index->ArchSets();
      NotFound(res, absl::StrCat("nothing is published for arch set ", set, "; arch sets here: ",
                                 sets.empty() ? "none" : absl::StrJoin(sets, ", ")));
      return;
    }
    res.set_content(
        format.format == SimpleFormat::kJson ? RenderRootJson(projects) : RenderRootHtml(projects),
        format.content_type);
  });
  server.Get(R"(/([^/]+)/simple/([^/]+)(/?))",
             [index](const httplib::Request& req, httplib::Response& res) {
               // Encoded: a redirect carries nothing of the client's text as it came.
               const std::string set = ResolveArchSet(
                   req.matches[1], absl::StrCat("/", PercentEncode(req.matches[2]), "/"), res);
               if (!set.empty()) ServeProjectPage(req, res, index, absl::StrCat("/", set), set);
             });
  server.Get(R"(/files/([0-9a-f]{64})/([^/]+))",
             [index](const httplib::Request& req, httplib::Response& res) {
               const std::string sha256 = req.matches[1];
               const std::string requested = req.matches[2];
               absl::string_view name = requested;
               const bool metadata = absl::ConsumeSuffix(&name, ".metadata");
               auto file = index->Find(sha256, std::string(name));
               if (!file) {
                 NotFound(res, "no such file in this index");
                 return;
               }
               auto path = index->BlobPath(metadata ? file->core_metadata() : file->wheel());
               if (!path.ok() || !ServeBlob(res, *path,
                                            metadata ? "text/plain; charset=utf-8"
                                                     : "application/octet-stream")) {
                 res.status = 500;
                 res.set_content("500 the file's bytes are missing from the CAS\n", "text/plain");
               }
             });
  auto upload =
      std::make_shared<LegacyUploadHandler>(index, options.auth, options.max_upload_bytes);
  for (const char* path : kUploadPaths) {
    server.Post(
        path, [upload](const httplib::Request& req, httplib::Response& res,
                       const httplib::ContentReader& reader) { upload->Handle(req, res, reader); });
  }
}

}  // namespace farm::coordinator
