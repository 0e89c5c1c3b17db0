#include "libfarm/publish/multipart_body.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace farm {
namespace {

std::string RandomBoundary() {
  std::random_device rd;
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "wheelfarm-";
  for (int i = 0; i < 32; ++i) out.push_back(kHex[rd() % 16]);
  return out;
}

// Quotes in a Content-Disposition parameter are percent-encoded, as browsers do (HTML5).
std::string QuoteParam(const std::string& value) {
  return absl::StrReplaceAll(value, {{"\"", "%22"}, {"\r", "%0D"}, {"\n", "%0A"}});
}

}  // namespace

MultipartBody::MultipartBody(std::string boundary)
    : boundary_(boundary.empty() ? RandomBoundary() : std::move(boundary)) {}

MultipartBody::~MultipartBody() {
  for (Segment& s : segments_) {
    if (s.fd >= 0) ::close(s.fd);
  }
}

void MultipartBody::AppendText(const std::string& text) {
  if (!segments_.empty() && segments_.back().fd < 0) {
    segments_.back().text += text;
  } else {
    segments_.push_back(Segment{.text = text});
  }
  size_ += text.size();
}

void MultipartBody::AddField(const std::string& name, const std::string& value) {
  AppendText(absl::StrCat("--", boundary_, "\r\nContent-Disposition: form-data; name=\"",
                          QuoteParam(name), "\"\r\n\r\n", value, "\r\n"));
}

absl::Status MultipartBody::AddFile(const std::string& name, const std::string& filename,
                                    const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", std::strerror(errno)));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return absl::InvalidArgumentError(absl::StrCat(path, " is not a regular file"));
  }
  AppendText(absl::StrCat("--", boundary_, "\r\nContent-Disposition: form-data; name=\"",
                          QuoteParam(name), "\"; filename=\"", QuoteParam(filename),
                          "\"\r\nContent-Type: application/octet-stream\r\n\r\n"));
  segments_.push_back(
      Segment{.fd = fd, .file_size = static_cast<uint64_t>(st.st_size), .path = path});
  size_ += static_cast<uint64_t>(st.st_size);
  AppendText("\r\n");
  return absl::OkStatus();
}

void MultipartBody::Finish() { AppendText(absl::StrCat("--", boundary_, "--\r\n")); }

std::string MultipartBody::content_type() const {
  return absl::StrCat("multipart/form-data; boundary=", boundary_);
}

absl::StatusOr<std::string> MultipartBody::Read(uint64_t offset, size_t max) const {
  std::string out;
  uint64_t start = 0;
  for (const Segment& s : segments_) {
    const uint64_t end = start + s.size();
    if (offset < end && out.size() < max) {
      const uint64_t from = offset - start;
      const size_t want = static_cast<size_t>(std::min<uint64_t>(end - offset, max - out.size()));
      if (s.fd < 0) {
        out.append(s.text, static_cast<size_t>(from), want);
      } else {
        const size_t old = out.size();
        out.resize(old + want);
        size_t done = 0;
        while (done < want) {
          const ssize_t n =
              ::pread(s.fd, out.data() + old + done, want - done, static_cast<off_t>(from + done));
          if (n < 0 && errno == EINTR) continue;
          if (n <= 0) {
            return absl::DataLossError(
                absl::StrCat(s.path, " shrank or became unreadable while being uploaded",
                             n < 0 ? absl::StrCat(": ", std::strerror(errno)) : std::string()));
          }
          done += static_cast<size_t>(n);
        }
      }
      offset += want;
    }
    start = end;
  }
  return out;
}

}  // namespace farm
