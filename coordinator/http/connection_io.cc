#include "coordinator/http/connection_io.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libfarm/tls/pem_files.h"

namespace farm::coordinator {
namespace {

bool Poll(int fd, short events, absl::Duration timeout) {
  pollfd p{.fd = fd, .events = events, .revents = 0};
  while (true) {
    const int ms =
        static_cast<int>(std::clamp<int64_t>(absl::ToInt64Milliseconds(timeout), 0, 60000));
    const int n = ::poll(&p, 1, ms);
    if (n < 0 && errno == EINTR) continue;
    return n > 0;
  }
}

class PlainIo final : public ConnectionIo {
 public:
  explicit PlainIo(int fd) : fd_(fd) {}
  ssize_t Receive(char* buf, size_t size, absl::Duration timeout) override {
    if (!Poll(fd_, POLLIN, timeout)) return kTimedOut;
    return ::recv(fd_, buf, size, 0);
  }
  ssize_t Send(const char* buf, size_t size, absl::Duration timeout) override {
    if (!Poll(fd_, POLLOUT, timeout)) return -1;
    return ::send(fd_, buf, size, MSG_NOSIGNAL);
  }
  bool HasPending() const override { return false; }

 private:
  const int fd_;
};

// Non-blocking TLS: every OpenSSL call that wants the socket waits for it with poll, up to
// the caller's deadline, so no read or write can block past it.
class TlsIo final : public ConnectionIo {
 public:
  TlsIo(SSL* ssl, int fd) : ssl_(ssl), fd_(fd) {}
  ~TlsIo() override {
    SSL_shutdown(ssl_);  // one try at close_notify; the socket is closed by the caller
    SSL_free(ssl_);
    ERR_clear_error();
  }

  // `op` until it succeeds, fails, or the socket is not ready by `deadline`.
  template <typename Op>
  ssize_t Drive(Op op, absl::Time deadline, ssize_t on_timeout) {
    while (true) {
      const int r = op();
      if (r > 0) return r;
      switch (SSL_get_error(ssl_, r)) {
        case SSL_ERROR_WANT_READ:
          if (!Poll(fd_, POLLIN, deadline - absl::Now())) return on_timeout;
          break;
        case SSL_ERROR_WANT_WRITE:
          if (!Poll(fd_, POLLOUT, deadline - absl::Now())) return on_timeout;
          break;
        case SSL_ERROR_ZERO_RETURN:
          return 0;
        default:
          last_error_ = OpenSslError();
          return -1;
      }
    }
  }

  ssize_t Receive(char* buf, size_t size, absl::Duration timeout) override {
    const int n = static_cast<int>(std::min<size_t>(size, 1 << 30));
    return Drive([&] { return SSL_read(ssl_, buf, n); }, absl::Now() + timeout, kTimedOut);
  }
  ssize_t Send(const char* buf, size_t size, absl::Duration timeout) override {
    const int n = static_cast<int>(std::min<size_t>(size, 1 << 30));
    return Drive([&] { return SSL_write(ssl_, buf, n); }, absl::Now() + timeout, -1);
  }
  bool HasPending() const override { return SSL_pending(ssl_) > 0; }
  const std::string& last_error() const { return last_error_; }

  bool Handshake(absl::Duration timeout) {
    return Drive([this] { return SSL_accept(ssl_); }, absl::Now() + timeout, -1) > 0;
  }

 private:
  SSL* const ssl_;
  const int fd_;
  std::string last_error_ = "timed out";
};

}  // namespace

std::unique_ptr<ConnectionIo> PlainConnectionIo(int fd) { return std::make_unique<PlainIo>(fd); }

absl::StatusOr<std::unique_ptr<HttpsContext>> HttpsContext::FromFiles(const std::string& cert_file,
                                                                      const std::string& key_file) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return absl::InternalError("SSL_CTX_new failed: " + OpenSslError());
  std::unique_ptr<HttpsContext> out(new HttpsContext(ctx));
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  // Writes may return part of a buffer, and retry with it moved: what Send promises.
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (SSL_CTX_use_certificate_chain_file(ctx, cert_file.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(ctx, key_file.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(ctx) != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot serve HTTPS with --tls-cert ", cert_file, " and --tls-key ", key_file, ": ",
        OpenSslError(),
        ". Fix: use a certificate and key OpenSSL accepts (RSA >= 2048 bits or ECDSA P-256), "
        "e.g. from 'farmctl up --tls'"));
  }
  return out;
}

HttpsContext::~HttpsContext() { SSL_CTX_free(ctx_); }

absl::StatusOr<std::unique_ptr<ConnectionIo>> HttpsContext::Accept(int fd,
                                                                   absl::Duration timeout) const {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
    return absl::InternalError("cannot make the connection non-blocking");
  }
  SSL* ssl = SSL_new(ctx_);
  if (ssl == nullptr) return absl::InternalError("SSL_new failed: " + OpenSslError());
  auto io = std::make_unique<TlsIo>(ssl, fd);
  if (SSL_set_fd(ssl, fd) != 1) return absl::InternalError("SSL_set_fd failed");
  if (!io->Handshake(timeout)) {
    return absl::UnavailableError(absl::StrCat("TLS handshake failed (", io->last_error(), ")"));
  }
  return io;
}

}  // namespace farm::coordinator
