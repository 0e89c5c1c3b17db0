#include "libfarm/auth/token.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "libfarm/digest/sha256.h"

namespace farm {
namespace {

constexpr size_t kTokenBytes = 32;
constexpr size_t kMinTokenLength = 16;

}  // namespace

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot read token file ", path, ": ",
                                            std::strerror(errno),
                                            ". Fix: pass --token-file with the farm's token "
                                            "(the coordinator's token file)"));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string token(absl::StripAsciiWhitespace(buffer.str()));
  if (token.size() < kMinTokenLength) {
    return absl::InvalidArgumentError(absl::StrCat("token file ", path, " holds ", token.size(),
                                                   " characters; a farm token needs at least ",
                                                   kMinTokenLength,
                                                   ". Fix: use the coordinator's "
                                                   "token file"));
  }
  if (token.find_first_of(" \t\r\n") != std::string::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("token file ", path, " holds more than one word; it must hold one token"));
  }
  return token;
}

absl::StatusOr<std::string> GenerateToken() { return RandomHex(kTokenBytes); }

absl::StatusOr<std::string> RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  if (getrandom(raw.data(), raw.size(), 0) != static_cast<ssize_t>(raw.size())) {
    return absl::InternalError(absl::StrCat("getrandom failed: ", std::strerror(errno)));
  }
  return absl::BytesToHexString(raw);
}

std::string TokenDigest(absl::string_view token) {
  Sha256 sha;
  sha.Update(token);
  return sha.FinishHex();
}

absl::StatusOr<std::string> CreateTokenFile(const std::string& path) {
  absl::StatusOr<std::string> generated = GenerateToken();
  if (!generated.ok()) return generated.status();
  const std::string& token = *generated;
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create token file ", path, ": ", std::strerror(errno)));
  }
  std::string line = token + "\n";
  bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
            ::fsync(fd) == 0;
  ::close(fd);
  if (!ok) return absl::InternalError(absl::StrCat("cannot write token file ", path));
  return token;
}

bool TokensEqual(absl::string_view a, absl::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    unsigned char ca = i < a.size() ? a[i] : 0;
    unsigned char cb = i < b.size() ? b[i] : 0;
    diff |= ca ^ cb;
  }
  return diff == 0;
}

}  // namespace farm
