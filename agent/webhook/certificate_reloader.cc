#include "webhook/certificate_reloader.h"

#include <openssl/asn1.h>
#include <openssl/bn.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <ctime>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "base/clock.h"
#include "base/text_file.h"

namespace iogate {

namespace {

std::string subject_of(X509* cert) {
  BioPtr out(BIO_new(BIO_s_mem()));
  X509_NAME_print_ex(out.get(), X509_get_subject_name(cert), 0, XN_FLAG_RFC2253);
  char* data = nullptr;
  long n = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

std::string serial_of(X509* cert) {
  BignumPtr bn(ASN1_INTEGER_to_BN(X509_get0_serialNumber(cert), nullptr));
  if (!bn) return "";
  OpensslStringPtr hex(BN_bn2hex(bn.get()));
  return hex ? std::string(hex.get()) : "";
}

std::chrono::system_clock::time_point not_after_of(X509* cert) {
  std::tm tm{};
  if (ASN1_TIME_to_tm(X509_get0_notAfter(cert), &tm) != 1) return {};
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::string describe(const ServingCertificate& c) {
  return fmt::format("subject {}, serial {}, notAfter {}", c.subject, c.serial, rfc3339_seconds(c.not_after));
}

void warn_if_expired(const ServingCertificate& c, const TlsFiles& files) {
  if (c.not_after <= std::chrono::system_clock::now()) {
    spdlog::warn("webhook TLS: the certificate in --tls-cert {} expired at {}; clients will refuse it", files.cert_path,
                 rfc3339_seconds(c.not_after));
  }
}

}  // namespace

Result<std::shared_ptr<const ServingCertificate>> parse_serving_certificate(const TlsFiles& files,
                                                                            const std::string& cert_pem,
                                                                            const std::string& key_pem) {
  // A chain served without its intermediate fails at clients only: a damaged block is refused.
  auto certs = read_pem_certificates(cert_pem);
  if (!certs.ok()) return usage_error(fmt::format("--tls-cert {}: {}", files.cert_path, certs.error().message));
  auto key = read_pem_private_key(key_pem);
  if (!key.ok()) return usage_error(fmt::format("--tls-key {}: {}", files.key_path, key.error().message));
  std::vector<X509Ptr>& chain = *certs;
  if (X509_check_private_key(chain[0].get(), key->get()) != 1) {
    ERR_clear_error();
    return usage_error(fmt::format("--tls-key {}: not the private key of the certificate in --tls-cert {}",
                                   files.key_path, files.cert_path));
  }

  auto c = std::make_shared<ServingCertificate>();
  c->subject = subject_of(chain[0].get());
  c->serial = serial_of(chain[0].get());
  c->not_after = not_after_of(chain[0].get());
  c->chain.reset(sk_X509_new_null());
  if (!c->chain) return runtime_error("webhook TLS: out of memory");
  for (size_t i = 1; i < chain.size(); ++i) {
    if (sk_X509_push(c->chain.get(), chain[i].get()) <= 0) return runtime_error("webhook TLS: out of memory");
    chain[i].release();  // the stack owns it now
  }
  c->leaf = std::move(chain[0]);
  c->key = std::move(*key);
  return std::shared_ptr<const ServingCertificate>(std::move(c));
}

namespace {

std::array<unsigned char, 64> digest_of(const std::string& cert, const std::string& key) {
  std::array<unsigned char, 64> d{};
  EVP_Digest(cert.data(), cert.size(), d.data(), nullptr, EVP_sha256(), nullptr);
  EVP_Digest(key.data(), key.size(), d.data() + 32, nullptr, EVP_sha256(), nullptr);
  return d;
}

}  // namespace

CertificateReloader::CertificateReloader(TlsFiles files, std::chrono::milliseconds check_interval, Clock clock)
    : files_(std::move(files)),
      interval_(check_interval),
      clock_(clock ? std::move(clock) : Clock([] { return std::chrono::steady_clock::now(); })) {}

Status CertificateReloader::load() {
  std::lock_guard lock(check_mutex_);
  auto cert = read_text_file(files_.cert_path);
  if (!cert.ok()) return usage_error("--tls-cert: " + cert.error().message);
  auto key = read_text_file(files_.key_path);
  if (!key.ok()) return usage_error("--tls-key: " + key.error().message);
  auto pair = parse_serving_certificate(files_, *cert, *key);
  if (!pair.ok()) return pair.error();
  spdlog::info("webhook TLS: serving {} from --tls-cert {}", describe(**pair), files_.cert_path);
  warn_if_expired(**pair, files_);
  {
    std::lock_guard swap(pair_mutex_);
    pair_ = std::move(*pair);
  }
  seen_ = digest_of(*cert, *key);
  loaded_ = true;
  next_check_ = clock_() + interval_;
  return ok_status();
}

std::shared_ptr<const ServingCertificate> CertificateReloader::current() {
  {
    std::unique_lock lock(check_mutex_, std::try_to_lock);
    if (lock.owns_lock() && loaded_ && clock_() >= next_check_) check_locked();
  }
  return snapshot();
}

std::shared_ptr<const ServingCertificate> CertificateReloader::snapshot() const {
  std::lock_guard lock(pair_mutex_);
  return pair_;
}

bool CertificateReloader::reload_if_changed() {
  std::lock_guard lock(check_mutex_);
  return loaded_ && check_locked();
}

bool CertificateReloader::check_locked() {
  next_check_ = clock_() + interval_;
  // The two files are two reads, and an update can land between them or under one: the kubelet
  // swaps ..data and then removes the old generation (a path resolved through it vanishes), a
  // writer may rewrite the files in place. So a failed read or a pair that does not parse is read
  // again at once; only the same failure on every try, or the same content failing twice, counts.
  std::optional<Digest> failed;
  std::string read_failure;
  Error why;
  for (int attempt = 0; attempt < 3; ++attempt) {
    auto cert = read_text_file(files_.cert_path);
    auto key = cert.ok() ? read_text_file(files_.key_path) : Result<std::string>(std::string());
    if (!cert.ok() || !key.ok()) {
      read_failure = !cert.ok() ? "--tls-cert: " + cert.error().message : "--tls-key: " + key.error().message;
      continue;
    }
    read_failure.clear();
    Digest d = digest_of(*cert, *key);
    if (d == seen_) {
      read_failure_.clear();
      return false;
    }
    if (failed && d == *failed) break;
    auto pair = parse_serving_certificate(files_, *cert, *key);
    if (pair.ok()) {
      seen_ = d;
      read_failure_.clear();
      spdlog::info("webhook TLS: reloaded --tls-cert {}: now serving {}", files_.cert_path, describe(**pair));
      warn_if_expired(**pair, files_);
      {
        std::lock_guard swap(pair_mutex_);
        pair_ = std::move(*pair);
      }
      ++reloads_;
      return true;
    }
    failed = d;
    why = pair.error();
  }
  if (!read_failure.empty()) {
    // A Secret deleted or a volume gone: keep serving what we have; say so once, not every check.
    if (read_failure != read_failure_) {
      ++rejections_;
      spdlog::warn("webhook TLS: cannot re-read the serving certificate ({}); still serving {}", read_failure,
                   describe(*snapshot()));
    }
    read_failure_ = read_failure;
    return false;
  }
  read_failure_.clear();
  seen_ = *failed;  // not tried again until the files change
  ++rejections_;
  spdlog::warn("webhook TLS: new certificate files rejected: {}; still serving {}", why.message, describe(*snapshot()));
  return false;
}

}  // namespace iogate
