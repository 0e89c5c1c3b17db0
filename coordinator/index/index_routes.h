// The built-in index on the coordinator's HTTP port:
//   GET  /simple/               project list (PEP 503 HTML or PEP 691 JSON, by Accept)
//   GET  /simple/<project>/     files with #sha256=, data-requires-python, core metadata;
//                               a non-normalized name or a missing "/" redirects (301)
//   GET  /<set>/simple/[<project>/]  the same, only the files of one arch set ("sm75-sm90":
//                               versions labelled "+cuXY.sm75.sm90", arch_set_label.h); a
//                               name that is no arch set is a 404, another spelling of one
//                               redirects (301) to its canonical name
//   GET  /files/<sha256>/<file> the wheel (and <file>.metadata, PEP 658)
//   POST / and /legacy/         the legacy upload API (upload_handler.h), token required
// Reading is open to anyone who can reach the port, like any simple index; writing needs
// the farm token.
#pragma once

#include <cstdint>
#include <string>

#include "coordinator/http/http_server.h"
#include "coordinator/index/package_index.h"
#include "coordinator/index/upload_handler.h"

namespace httplib {
class Server;
}

namespace farm::coordinator {

struct IndexHttpOptions {
  const TokenVerifier* auth = nullptr;  // who may upload (the password is a farm token)
  uint64_t max_upload_bytes = uint64_t{2} << 30;
};

// The upload routes and their body limit: the file plus the form fields beside it.
std::vector<BodyLimit> IndexBodyLimits(const IndexHttpOptions& options);

// Registers the routes; `index` must outlive `server`. Call before the server listens.
void RegisterIndexRoutes(httplib::Server& server, PackageIndex* index,
                         const IndexHttpOptions& options);

// The index as one of the HTTP server's route sets. Listening beyond loopback changes
// nothing here: reads are public like any simple index, uploads always need the token.
class IndexRoutes : public HttpRoutes {
 public:
  IndexRoutes(PackageIndex* index, IndexHttpOptions options)
      : index_(index), options_(std::move(options)) {}
  void RegisterRoutes(httplib::Server& server, bool /*loopback*/) override {
    RegisterIndexRoutes(server, index_, options_);
  }
  std::vector<BodyLimit> BodyLimits() const override { return IndexBodyLimits(options_); }

 private:
  PackageIndex* const index_;
  const IndexHttpOptions options_;
};

}  // namespace farm::coordinator
