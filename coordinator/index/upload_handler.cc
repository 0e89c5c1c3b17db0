#include "coordinator/index/upload_handler.h"

#include <httplib.h>

#include <map>
#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "libfarm/logging/logger.h"
#include "libfarm/publish/core_metadata.h"
#include "libfarm/publish/upload_digests.h"
#include "libfarm/publish/wheel_package.h"
#include "libfarm/units/byte_size.h"

namespace farm::coordinator {
namespace {

constexpr uint64_t kMaxFieldBytes = kMaxUploadFieldBytes;

void Reply(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(message + "\n", "text/plain; charset=utf-8");
}

std::string First(const std::map<std::string, std::vector<std::string>>& fields,
                  const std::string& name) {
  auto it = fields.find(name);
  return it == fields.end() || it->second.empty() ? std::string() : it->second.front();
}

// What arrived in the multipart body.
struct ReceivedUpload {
  enum class Part { kField, kContent, kIgnored };
  Part part = Part::kIgnored;
  std::string part_name;
  std::map<std::string, std::vector<std::string>> fields;
  uint64_t field_bytes = 0;
  int content_parts = 0;
  std::string filename;
  std::optional<VerifiedFileWriter> writer;
  UploadHasher hasher;
  uint64_t content_bytes = 0;
  // The first problem, which ends the upload.
  int error_status = 0;
  std::string error;

  bool Fail(int status, std::string message) {
    if (error_status == 0) {
      error_status = status;
      error = std::move(message);
    }
    return false;
  }
};

}  // namespace

std::optional<RequestRefusal> RefuseUploadWithoutToken(const httplib::Request& req,
                                                       const TokenVerifier& auth) {
  const std::string value = req.get_header_value("Authorization");
  absl::string_view header = value;
  if (absl::ConsumePrefix(&header, "Basic ") || absl::ConsumePrefix(&header, "basic ")) {
    std::string decoded;
    if (absl::Base64Unescape(absl::StripAsciiWhitespace(header), &decoded)) {
      const size_t colon = decoded.find(':');
      // Any user name: twine sends "__token__", people type their own.
      if (colon != std::string::npos &&
          auth.AuthorizeToken(absl::string_view(decoded).substr(colon + 1), "HTTP.Upload").ok()) {
        return std::nullopt;
      }
    }
  }
  return RequestRefusal{
      401,
      "401 Unauthorized: this index needs a farm token whose role may upload (admin or submit) "
      "as the password (any user name). Fix: twine upload -u __token__ -p "
      "\"$(cat DATA_DIR/token)\" ...",
      {{"WWW-Authenticate", "Basic realm=\"wheelfarm\""}}};
}

void LegacyUploadHandler::Handle(const httplib::Request& req, httplib::Response& res,
                                 const httplib::ContentReader& reader) const {
  auto log = ComponentLogger("index");
  uint64_t content_length = 0;
  const bool has_length = req.has_header("Content-Length") &&
                          absl::SimpleAtoi(req.get_header_value("Content-Length"), &content_length);

  // The HTTP port refused this already (IndexBodyLimits); asked again for a server without
  // that guard. Either way the body is not read.
  if (auto refusal = RefuseUploadWithoutToken(req, *auth_)) {
    res.set_header("Connection", "close");
    for (const auto& [name, header] : refusal->headers) res.set_header(name, header);
    log->warn("refused an upload from {}: missing or wrong credentials", req.remote_addr);
    Reply(res, refusal->status, refusal->message);
    return;
  }
  if (has_length && content_length > max_upload_bytes_) {
    res.set_header("Connection", "close");
    Reply(res, 413,
          absl::StrCat("413 the upload is ", FormatByteSize(content_length),
                       ", over this index's limit of ", FormatByteSize(max_upload_bytes_),
                       ". Fix: raise farm-coordinator --index-max-upload"));
    return;
  }
  if (!req.is_multipart_form_data()) {
    res.set_header("Connection", "close");
    Reply(res, 400,
          "400 expected a multipart/form-data body (the legacy upload API, as twine sends "
          "it)");
    return;
  }

  ReceivedUpload up;
  const int64_t size_hint = has_length ? static_cast<int64_t>(content_length) : 0;
  auto on_part = [&](const httplib::MultipartFormData& part) {
    up.part_name = part.name;
    if (part.name == "content" && !part.filename.empty()) {
      if (++up.content_parts > 1) return up.Fail(400, "400 more than one \"content\" file part");
      up.part = ReceivedUpload::Part::kContent;
      up.filename = part.filename;
      auto writer = index_->BeginUpload(size_hint);
      if (!writer.ok()) {
        return up.Fail(writer.status().code() == absl::StatusCode::kResourceExhausted ? 507 : 500,
                       std::string(writer.status().message()));
      }
      up.writer.emplace(*std::move(writer));
    } else if (!part.filename.empty()) {
      up.part = ReceivedUpload::Part::kIgnored;  // signatures, attestations: not kept
    } else {
      up.part = ReceivedUpload::Part::kField;
      up.fields[part.name].emplace_back();
    }
    return true;
  };
  auto on_data = [&](const char* data, size_t n) {
    switch (up.part) {
      case ReceivedUpload::Part::kContent: {
        up.content_bytes += n;
        if (up.content_bytes > max_upload_bytes_) {
          return up.Fail(413, absl::StrCat("413 the file is over this index's limit of ",
                                           FormatByteSize(max_upload_bytes_),
                                           ". Fix: raise farm-coordinator --index-max-upload"));
        }
        const absl::string_view chunk(data, n);
        up.hasher.Update(chunk);
        if (absl::Status s = up.writer->Append(chunk); !s.ok()) {
          return up.Fail(500, absl::StrCat("500 cannot store the upload: ", s.message()));
        }
        return true;
      }
      case ReceivedUpload::Part::kField:
      case ReceivedUpload::Part::kIgnored:
        up.field_bytes += n;
        if (up.field_bytes > kMaxFieldBytes) {
          return up.Fail(413, absl::StrCat("413 the form fields besides the file exceed ",
                                           FormatByteSize(kMaxFieldBytes)));
        }
        if (up.part == ReceivedUpload::Part::kField) {
          up.fields[up.part_name].back().append(data, n);
        }
        return true;
    }
    return true;
  };
  if (!reader(on_part, on_data)) {
    res.set_header("Connection", "close");
    if (up.error_status != 0) {
      Reply(res, up.error_status, up.error);
    } else {
      Reply(res, res.status == 413 ? 413 : 400,
            absl::StrCat(res.status == 413 ? "413" : "400",
                         " the multipart body is malformed or was cut off"));
    }
    return;
  }

  const std::string action = First(up.fields, ":action");
  if (action != "file_upload") {
    Reply(res, 400,
          absl::StrCat("400 unsupported :action \"", action,
                       "\": this index accepts file_upload only"));
    return;
  }
  if (!up.writer) {
    Reply(res, 400, "400 no \"content\" file part: the wheel itself is missing");
    return;
  }
  auto filename_ok = CheckWheelFilename(up.filename);
  if (!filename_ok.ok()) {
    Reply(res, 400, absl::StrCat("400 ", filename_ok.status().message()));
    return;
  }
  const std::string filetype = First(up.fields, "filetype");
  if (!filetype.empty() && filetype != "bdist_wheel") {
    Reply(res, 400,
          absl::StrCat("400 filetype \"", filetype,
                       "\" is not accepted: this index serves "
                       "wheels (bdist_wheel) only"));
    return;
  }
  const UploadDigests digests = up.hasher.Finish();
  const std::string claimed_sha = absl::AsciiStrToLower(First(up.fields, "sha256_digest"));
  const std::string claimed_md5 = First(up.fields, "md5_digest");
  if (claimed_sha.empty() && claimed_md5.empty()) {
    Reply(res, 400,
          "400 no sha256_digest field: send the sha256 of the file (hex) so corruption in "
          "transit is caught");
    return;
  }
  if (!claimed_sha.empty() && claimed_sha != digests.sha256_hex) {
    Reply(res, 400,
          absl::StrCat("400 digest mismatch: sha256_digest says ", claimed_sha,
                       " but the uploaded bytes of ", up.filename, " have sha256 ",
                       digests.sha256_hex,
                       ". Nothing was stored. Fix: upload the file again; "
                       "if it keeps failing the file or the client is broken"));
    return;
  }
  if (!claimed_md5.empty() && !Md5Matches(claimed_md5, digests.md5_hex)) {
    Reply(res, 400,
          absl::StrCat("400 digest mismatch: md5_digest says ", claimed_md5,
                       " but the uploaded bytes of ", up.filename, " have md5 ", digests.md5_hex,
                       ". Nothing was stored"));
    return;
  }
  auto wheel = ReadWheelPackage(up.writer->temp_path(), up.filename);
  if (!wheel.ok()) {
    Reply(res, 400, absl::StrCat("400 ", wheel.status().message()));
    return;
  }
  const std::string form_name = First(up.fields, "name");
  const std::string form_version = First(up.fields, "version");
  if (form_name.empty() || form_version.empty()) {
    Reply(res, 400, "400 the form must carry the name and version fields");
    return;
  }
  if (NormalizeProjectName(form_name) != NormalizeProjectName(wheel->metadata.name())) {
    Reply(res, 400,
          absl::StrCat("400 the form says name \"", form_name,
                       "\" but the wheel's METADATA says \"", wheel->metadata.name(), "\""));
    return;
  }
  if (!SameVersionSpelling(form_version, wheel->metadata.version())) {
    Reply(res, 400,
          absl::StrCat("400 the form says version \"", form_version,
                       "\" but the wheel's METADATA says \"", wheel->metadata.version(), "\""));
    return;
  }
  auto published = index_->AddUpload(*std::move(up.writer), *wheel, digests);
  if (!published.ok()) {
    const absl::StatusCode code = published.status().code();
    const int status = code == absl::StatusCode::kAlreadyExists       ? 409
                       : code == absl::StatusCode::kResourceExhausted ? 507
                       : code == absl::StatusCode::kInvalidArgument   ? 400
                                                                      : 500;
    Reply(res, status, absl::StrCat(status, " ", published.status().message()));
    return;
  }
  log->info("upload from {}: {} {}", req.remote_addr, up.filename,
            published->already_present ? "was already published (identical bytes)" : "published");
  Reply(res, 200,
        absl::StrCat("OK ", published->already_present ? "(already published) " : "",
                     published->url));
}

}  // namespace farm::coordinator
