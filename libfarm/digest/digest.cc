#include "libfarm/digest/digest.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "libfarm/digest/sha256.h"

namespace farm {
namespace {

constexpr absl::string_view kForm =
    "expected HASH/SIZE or HASH, where HASH is 64 lowercase hex characters (SHA-256) and "
    "SIZE a byte count";

// Files are hashed in reads of this size: few syscalls, constant memory.
constexpr size_t kReadBytes = 1 << 20;

}  // namespace

farm::v1::Digest DigestOfBytes(absl::string_view bytes) {
  Sha256 sha;
  sha.Update(bytes);
  farm::v1::Digest d;
  d.set_hash(sha.FinishHex());
  d.set_size_bytes(static_cast<int64_t>(bytes.size()));
  return d;
}

std::string DeterministicBytes(const google::protobuf::Message& message) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return bytes;
}

farm::v1::Digest DigestOfMessage(const google::protobuf::Message& message) {
  return DigestOfBytes(DeterministicBytes(message));
}

absl::StatusOr<farm::v1::Digest> DigestOfFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    const std::string msg = absl::StrCat("cannot read ", path, ": ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(msg) : absl::PermissionDeniedError(msg);
  }
  absl::Cleanup close_fd = [fd] { ::close(fd); };
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  Sha256 sha;
  std::vector<char> buf(kReadBytes);
  int64_t total = 0;
  while (true) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      return absl::InternalError(absl::StrCat("reading ", path, ": ", std::strerror(errno)));
    if (n == 0) break;
    sha.Update(absl::string_view(buf.data(), static_cast<size_t>(n)));
    total += n;
  }
  farm::v1::Digest d;
  d.set_hash(sha.FinishHex());
  d.set_size_bytes(total);
  return d;
}

absl::Status ValidateHash(absl::string_view hash) {
  bool ok = hash.size() == 64;
  for (char c : hash) ok = ok && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  if (!ok) {
    return absl::InvalidArgumentError(
        absl::StrCat("malformed digest hash '", hash.substr(0, 80),
                     "': expected 64 lowercase hex characters (SHA-256)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateDigest(const farm::v1::Digest& digest) {
  if (absl::Status s = ValidateHash(digest.hash()); !s.ok()) return s;
  if (digest.size_bytes() < 0) {
    return absl::InvalidArgumentError(absl::StrCat("digest ", digest.hash(), " has size ",
                                                   digest.size_bytes(), ": expected >= 0"));
  }
  return absl::OkStatus();
}

absl::StatusOr<farm::v1::Digest> ParseDigest(const std::string& text) {
  farm::v1::Digest d;
  const size_t slash = text.find('/');
  const std::string hash = text.substr(0, slash);
  if (!ValidateHash(hash).ok()) {
    return absl::InvalidArgumentError(absl::StrCat("malformed digest '", text, "': ", kForm));
  }
  d.set_hash(hash);
  d.set_size_bytes(-1);
  if (slash != std::string::npos) {
    int64_t size = -1;
    if (!absl::SimpleAtoi(text.substr(slash + 1), &size) || size < 0) {
      return absl::InvalidArgumentError(absl::StrCat("malformed digest '", text, "': ", kForm));
    }
    d.set_size_bytes(size);
  }
  return d;
}

std::string DigestToString(const farm::v1::Digest& digest) {
  return absl::StrCat(digest.hash(), "/", digest.size_bytes());
}

bool SameDigest(const farm::v1::Digest& a, const farm::v1::Digest& b) {
  return a.hash() == b.hash() && a.size_bytes() == b.size_bytes();
}

}  // namespace farm
