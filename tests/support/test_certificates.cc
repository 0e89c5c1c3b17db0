#include "tests/support/test_certificates.h"

#include <cstdlib>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "libfarm/process/path_search.h"
#include "libfarm/process/subprocess.h"

namespace farm::testing {
namespace {

// `openssl ca` rather than `x509 -req`: only it can back-date a certificate, which the
// expired cases need; one config serves every certificate.
constexpr char kScript[] = R"(set -euo pipefail
cd "$1"
umask 077
cat > ca.cnf <<'CNF'
[ca]
default_ca = test_ca
[test_ca]
database = db/index.txt
new_certs_dir = db
serial = db/serial
default_md = sha256
policy = any
unique_subject = no
[any]
commonName = supplied
[server]
basicConstraints = critical,CA:FALSE
subjectAltName = IP:127.0.0.1,DNS:localhost
extendedKeyUsage = serverAuth
[client]
basicConstraints = critical,CA:FALSE
extendedKeyUsage = clientAuth
CNF
new_ca() {  # name
  mkdir -p "db-$1" && touch "db-$1/index.txt" && echo 01 > "db-$1/serial"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$1.key" \
    -out "$1.pem" -days 30 -subj "/CN=Wheelfarm test $1" 2>/dev/null
}
issue() {  # ca name cn extensions validity-args...
  local ca=$1 name=$2 cn=$3 ext=$4
  shift 4
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$name.key" \
    -out "$name.csr" -subj "/CN=$cn" 2>/dev/null
  rm -rf db && cp -r "db-$ca" db
  openssl ca -batch -notext -config ca.cnf -cert "$ca.pem" -keyfile "$ca.key" -in "$name.csr" \
    -out "$name.pem" -extensions "$ext" "$@" 2>/dev/null
  rm -rf "db-$ca" && mv db "db-$ca"
}
new_ca ca
new_ca other-ca
issue ca server localhost server -days 30
issue ca client w1 client -days 30
issue ca expired-server localhost server -startdate 20200101000000Z -enddate 20200201000000Z
issue ca expired-client w1 client -startdate 20200101000000Z -enddate 20200201000000Z
issue other-ca foreign-client w1 client -days 30
chmod 644 ./*.pem
)";

}  // namespace

absl::StatusOr<TestPki> MakeTestPki(const std::string& dir) {
  const char* path = std::getenv("PATH");
  if (!FindOnPath("openssl", path != nullptr ? path : "/usr/bin:/bin").has_value()) {
    return absl::FailedPreconditionError(
        "the TLS tests need the openssl command line. Fix: apt-get install openssl");
  }
  std::filesystem::create_directories(dir);
  auto r = RunCommand({"bash", "-c", kScript, "make-test-pki", dir}, absl::Seconds(60));
  if (!r.ok()) return r.status();
  if (r->exit_code != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("making test certificates with openssl failed:\n", r->stderr_text));
  }
  auto pair = [&dir](const std::string& name) {
    return CertAndKey{absl::StrCat(dir, "/", name, ".pem"), absl::StrCat(dir, "/", name, ".key")};
  };
  return TestPki{.ca = dir + "/ca.pem",
                 .other_ca = dir + "/other-ca.pem",
                 .server = pair("server"),
                 .client = pair("client"),
                 .expired_server = pair("expired-server"),
                 .expired_client = pair("expired-client"),
                 .foreign_client = pair("foreign-client")};
}

}  // namespace farm::testing
