// How GuardedHttpServer reads and writes one connection: the socket as it is, or TLS over
// it. httplib's SSLServer cannot be used there: it brings its own socket stream, which
// would bypass the limits GuardedHttpServer's stream enforces; so TLS is a layer under
// that stream instead, with the same timeouts.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace farm::coordinator {

class ConnectionIo {
 public:
  static constexpr ssize_t kTimedOut = -2;
  virtual ~ConnectionIo() = default;
  // Up to `size` bytes, waiting at most `timeout` for the first: kTimedOut if none came,
  // 0 when the peer closed, -1 on an error.
  virtual ssize_t Receive(char* buf, size_t size, absl::Duration timeout) = 0;
  // Some of `size` bytes, waiting at most `timeout` to be able to: -1 when that fails.
  virtual ssize_t Send(const char* buf, size_t size, absl::Duration timeout) = 0;
  // Bytes already received and decrypted but not yet read (a poll on the socket cannot
  // see these).
  virtual bool HasPending() const = 0;
};

// The socket itself (blocking, as httplib hands it over).
std::unique_ptr<ConnectionIo> PlainConnectionIo(int fd);

// The server side of TLS for the HTTP port: the coordinator's certificate and key.
class HttpsContext {
 public:
  // Errors name the files; they were checked by LoadServerTls already, so this fails only
  // on what OpenSSL itself refuses (e.g. a key too weak for its security level).
  static absl::StatusOr<std::unique_ptr<HttpsContext>> FromFiles(const std::string& cert_file,
                                                                 const std::string& key_file);
  ~HttpsContext();
  HttpsContext(const HttpsContext&) = delete;
  HttpsContext& operator=(const HttpsContext&) = delete;

  // Makes `fd` non-blocking and completes the handshake within `timeout` (a client that
  // never finishes it holds a thread no longer than a slow request head would). The
  // caller still closes `fd`.
  absl::StatusOr<std::unique_ptr<ConnectionIo>> Accept(int fd, absl::Duration timeout) const;

 private:
  explicit HttpsContext(SSL_CTX* ctx) : ctx_(ctx) {}
  SSL_CTX* ctx_;
};

}  // namespace farm::coordinator
