#include "libfarm/publish/legacy_upload_client.h"

#include <httplib.h>

#include <cstring>
#include <filesystem>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "libfarm/logging/logger.h"
#include "libfarm/publish/legacy_upload_form.h"
#include "libfarm/publish/multipart_body.h"
#include "libfarm/publish/upload_digests.h"
#include "libfarm/publish/wheel_package.h"
#include "libfarm/text/utf8.h"

namespace farm {
namespace {

constexpr size_t kChunkBytes = 1 << 20;

// A server's error page made readable in one line: tags dropped, whitespace collapsed,
// bounded, so an HTML error page does not flood the terminal.
std::string Summarize(const std::string& body) {
  std::string text;
  bool in_tag = false;
  bool space = false;
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c == '<') {
      // Style sheets and scripts are not part of the message.
      for (const char* block : {"style", "script"}) {
        if (body.compare(i + 1, std::strlen(block), block) == 0) {
          const size_t end = body.find(absl::StrCat("</", block), i);
          if (end != std::string::npos) i = end;
        }
      }
      in_tag = true;
    } else if (c == '>' && in_tag) {
      in_tag = false;
      space = true;
    } else if (!in_tag) {
      if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
        space = true;
      } else {
        if (space && !text.empty()) text.push_back(' ');
        space = false;
        text.push_back(c);
      }
    }
  }
  if (text.size() > 400) text = absl::StrCat(Utf8Prefix(text, 400), "...");
  return text;
}

std::string ServerSays(const httplib::Response& res) {
  const std::string body = Summarize(res.body);
  std::string out = absl::StrCat(res.status, " ", res.reason);
  if (!body.empty()) absl::StrAppend(&out, ": ", body);
  return out;
}

absl::Status ConnectionError(httplib::Error error, const HttpUrl& url, long verify_result) {
  const std::string where = url.ToString();
  switch (error) {
    case httplib::Error::Connection:
    case httplib::Error::ConnectionTimeout:
      return absl::UnavailableError(absl::StrCat(
          "cannot connect to ", where, " (", httplib::to_string(error),
          ": connection refused, host unreachable or timed out). Fix: check the URL and that "
          "the repository is running"));
    case httplib::Error::SSLConnection:
      return absl::UnavailableError(
          absl::StrCat("TLS handshake with ", where,
                       " failed. Fix: check that the URL's scheme and port "
                       "match the server (https on a plain-http port fails this way)"));
    case httplib::Error::SSLServerVerification:
    case httplib::Error::SSLLoadingCerts:
      return absl::UnavailableError(absl::StrCat(
          "cannot verify the TLS certificate of ", where, " (OpenSSL verify result ", verify_result,
          "). Fix: use the host name the certificate was issued for, or give its "
          "CA bundle with --ca-cert"));
    default:
      return absl::UnavailableError(absl::StrCat("upload to ", where,
                                                 " failed: ", httplib::to_string(error),
                                                 " (the connection broke; retry)"));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<LegacyUploadClient>> LegacyUploadClient::Create(
    LegacyUploadOptions options) {
  auto url = ParseHttpUrl(options.url);
  if (!url.ok()) return url.status();
  return std::unique_ptr<LegacyUploadClient>(
      new LegacyUploadClient(std::move(options), *std::move(url)));
}

absl::StatusOr<PublishResult> LegacyUploadClient::Publish(const std::string& wheel_path) {
  const std::string filename = std::filesystem::path(wheel_path).filename().string();
  auto wheel = ReadWheelPackage(wheel_path, filename);
  if (!wheel.ok()) return wheel.status();
  auto digests = DigestFileForUpload(wheel_path);
  if (!digests.ok()) return digests.status();

  MultipartBody body;
  for (const auto& [name, value] : LegacyUploadFields(*wheel, *digests)) {
    body.AddField(name, value);
  }
  if (absl::Status s = body.AddFile("content", filename, wheel_path); !s.ok()) return s;
  body.Finish();

  httplib::Client client(url_.Origin());
  client.set_connection_timeout(absl::ToChronoSeconds(options_.connect_timeout));
  client.set_read_timeout(absl::ToChronoSeconds(options_.io_timeout));
  client.set_write_timeout(absl::ToChronoSeconds(options_.io_timeout));
  // twine does not follow redirects either: a redirected POST would lose its body.
  client.set_follow_location(false);
  if (!options_.ca_cert_file.empty()) client.set_ca_cert_path(options_.ca_cert_file);
  if (!options_.username.empty() || !options_.password.empty()) {
    client.set_basic_auth(options_.username, options_.password);
  }
  httplib::Headers headers = {{"User-Agent", absl::StrCat("wheelfarm/", FARM_VERSION)}};
  absl::Status read_error;
  auto provider = [&body, &read_error](size_t offset, size_t length, httplib::DataSink& sink) {
    auto chunk = body.Read(offset, std::min(length, kChunkBytes));
    if (!chunk.ok()) {
      read_error = chunk.status();
      return false;
    }
    return sink.write(chunk->data(), chunk->size());
  };
  ComponentLogger("publish")->debug("uploading {} ({} bytes) to {}", filename, body.size(),
                                    url_.ToString());
  auto res = client.Post(url_.path, headers, static_cast<size_t>(body.size()), provider,
                         body.content_type());
  if (!read_error.ok()) return read_error;
  if (!res) return ConnectionError(res.error(), url_, client.get_openssl_verify_result());

  const int status = res->status;
  const std::string says = ServerSays(*res);
  if (status >= 200 && status < 300) {
    return PublishResult{.location = url_.ToString(), .detail = Summarize(res->body)};
  }
  const bool exists =
      status == 409 ||
      (status == 400 && (absl::StrContains(absl::AsciiStrToLower(res->reason), "already exist") ||
                         absl::StrContains(absl::AsciiStrToLower(res->body), "already exist")));
  if (exists && options_.skip_existing) {
    return PublishResult{.location = url_.ToString(), .already_present = true, .detail = says};
  }
  if (exists) {
    return absl::FailedPreconditionError(absl::StrCat(
        url_.ToString(), " already has a file named ", filename, " (", says,
        "). Fix: bump the version (or build tag), or pass --skip-existing if it is the same "
        "file"));
  }
  if (status == 401 || status == 403) {
    return absl::UnauthenticatedError(absl::StrCat(
        url_.ToString(), " refused the credentials (", says,
        "). Fix: check --username (\"__token__\" for API tokens) and the password in the "
        "environment variable named by --password-env"));
  }
  if (status >= 300 && status < 400) {
    return absl::InvalidArgumentError(
        absl::StrCat(url_.ToString(), " redirects to ", res->get_header_value("Location"), " (",
                     status, "). Fix: use the upload URL itself, usually ending in /legacy/"));
  }
  if (status == 404 || status == 405) {
    return absl::InvalidArgumentError(
        absl::StrCat(url_.ToString(), " has no upload endpoint (", says,
                     "). Fix: use the repository's upload URL (pypiserver: the root URL; devpi: "
                     "/USER/INDEX/; Warehouse: /legacy/)"));
  }
  if (status == 413) {
    return absl::InvalidArgumentError(absl::StrCat(url_.ToString(), " refused ", filename,
                                                   " as too large (", says,
                                                   "). Fix: raise the server's upload size limit"));
  }
  if (status >= 500) {
    return absl::UnavailableError(
        absl::StrCat(url_.ToString(), " failed on its side (", says, "); retry later"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat(url_.ToString(), " rejected ", filename, ": ", says));
}

}  // namespace farm
