#include "libfarm/tls/pem_files.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "absl/strings/str_cat.h"
#include "libfarm/files/file_contents.h"
#include "libfarm/tls/openssl_ptr.h"

namespace farm {
namespace {

BioPtr MemoryBio(const std::string& bytes) {
  return BioPtr(BIO_new_mem_buf(bytes.data(), static_cast<int>(bytes.size())));
}

absl::Time FromAsn1Time(const ASN1_TIME* t) {
  std::tm tm{};
  if (t == nullptr || ASN1_TIME_to_tm(t, &tm) != 1) return absl::InfinitePast();
  return absl::FromTimeT(timegm(&tm));
}

std::string OneLineSubject(X509* cert) {
  char buf[512];
  X509_NAME_oneline(X509_get_subject_name(cert), buf, sizeof(buf));
  return buf;
}

X509Ptr FirstCertificate(const std::string& pem) {
  auto bio = MemoryBio(pem);
  return X509Ptr(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

absl::StatusOr<std::string> ReadNamedFile(const std::string& path, const std::string& what) {
  auto bytes = ReadFileContents(path);
  if (!bytes.ok()) {
    return absl::NotFoundError(absl::StrCat(what, ": cannot read ", path, ": ",
                                            bytes.status().message(),
                                            ". Fix: pass the path of an existing PEM file"));
  }
  return bytes;
}

}  // namespace

std::string OpenSslError() {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "no details";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  return buf;
}

absl::StatusOr<CertificateFile> ReadCertificateFile(const std::string& path,
                                                    const std::string& what) {
  auto bytes = ReadNamedFile(path, what);
  if (!bytes.ok()) return bytes.status();
  auto cert = FirstCertificate(*bytes);
  if (cert == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", path, " holds no PEM certificate (", OpenSslError(),
                     "). Fix: pass a file that starts with '-----BEGIN CERTIFICATE-----'"));
  }
  ERR_clear_error();
  return CertificateFile{.pem = *std::move(bytes),
                         .subject = OneLineSubject(cert.get()),
                         .not_before = FromAsn1Time(X509_get0_notBefore(cert.get())),
                         .not_after = FromAsn1Time(X509_get0_notAfter(cert.get()))};
}

absl::StatusOr<CertificateFile> ReadCurrentCertificateFile(const std::string& path,
                                                           const std::string& what,
                                                           absl::Time now) {
  auto cert = ReadCertificateFile(path, what);
  if (!cert.ok()) return cert.status();
  if (now > cert->not_after) {
    return absl::FailedPreconditionError(absl::StrCat(
        what, ": certificate ", path, " (", cert->subject, ") expired on ",
        absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", cert->not_after, absl::UTCTimeZone()),
        ". Fix: issue a new certificate and restart"));
  }
  if (now < cert->not_before) {
    return absl::FailedPreconditionError(absl::StrCat(
        what, ": certificate ", path, " (", cert->subject, ") is not valid before ",
        absl::FormatTime("%Y-%m-%d %H:%M:%S UTC", cert->not_before, absl::UTCTimeZone()),
        ". Fix: check this host's clock, or issue a certificate valid from now"));
  }
  return cert;
}

absl::StatusOr<std::string> ReadPrivateKeyFile(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat(what, ": cannot read private key ", path, ": ",
                                            std::strerror(errno),
                                            ". Fix: pass the path of an existing PEM key"));
  }
  // A key others can read is a key others may already have: refuse rather than serve with it.
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", st.st_mode & 07777);
    return absl::PermissionDeniedError(
        absl::StrCat(what, ": private key ", path, " has mode ", mode,
                     ", readable or writable by group or others. Fix: chmod 600 ", path));
  }
  auto bytes = ReadNamedFile(path, what);
  if (!bytes.ok()) return bytes.status();
  auto bio = MemoryBio(*bytes);
  PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (key == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": ", path, " holds no unencrypted PEM private key (", OpenSslError(),
        "). Fix: pass the key file (-----BEGIN PRIVATE KEY-----) without a passphrase"));
  }
  ERR_clear_error();
  return bytes;
}

absl::Status CheckKeyMatchesCertificate(const CertificateFile& cert, const std::string& cert_path,
                                        const std::string& key_pem, const std::string& key_path) {
  auto x509 = FirstCertificate(cert.pem);
  auto bio = MemoryBio(key_pem);
  PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  const bool match =
      x509 != nullptr && key != nullptr && X509_check_private_key(x509.get(), key.get()) == 1;
  ERR_clear_error();
  if (!match) {
    return absl::InvalidArgumentError(
        absl::StrCat("private key ", key_path, " does not belong to certificate ", cert_path, " (",
                     cert.subject, "). Fix: pass the key the certificate was issued for"));
  }
  return absl::OkStatus();
}

absl::StatusOr<CertificateAndKey> ReadCertificateAndKey(const std::string& cert_path,
                                                        const std::string& key_path) {
  auto cert = ReadCurrentCertificateFile(cert_path, "--tls-cert");
  if (!cert.ok()) return cert.status();
  auto key = ReadPrivateKeyFile(key_path, "--tls-key");
  if (!key.ok()) return key.status();
  if (absl::Status s = CheckKeyMatchesCertificate(*cert, cert_path, *key, key_path); !s.ok()) {
    return s;
  }
  return CertificateAndKey{.cert = *std::move(cert), .key_pem = *std::move(key)};
}

}  // namespace farm
