// The webhook's serving key pair, from the --tls-cert / --tls-key files, kept current while it
// serves. cert-manager rotates a certificate by rewriting its Secret, and the kubelet publishes
// that by swapping a `..data` symlink in the volume (the files are links through it), so the pair
// is re-read by path now and then and compared by content: inode or mtime of a link tells nothing,
// and a content compare also sees a file rewritten in place.
//
// A replacement that does not make a pair (a truncated PEM, a key that is not the certificate's)
// is logged once and the previous pair kept; new content is tried again at a later check. Files
// caught mid-update (the cert read before, the key after a swap) are re-read at once, not rejected.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "base/openssl_objects.h"
#include "base/result.h"

namespace iogate {

struct TlsFiles {
  std::string cert_path;  // --tls-cert: PEM, the leaf first, then any intermediates
  std::string key_path;   // --tls-key: PEM, unencrypted (PKCS#8, or traditional RSA/EC)
};

// One serving identity; never changed once made, so a handshake holding it through a shared_ptr
// reads it without a lock while a reload installs the next one.
struct ServingCertificate {
  X509Ptr leaf;
  EvpPkeyPtr key;
  X509StackPtr chain;   // intermediates; empty, never null
  std::string subject;  // RFC 2253: "CN=iogate-webhook.iogate.svc"
  std::string serial;   // upper-case hex, as `openssl x509 -serial` prints it
  std::chrono::system_clock::time_point not_after;
};

// PEM texts → a pair. Usage errors that name the flag and path of the file at fault: no
// certificate, not a private key, or a key that does not belong to the certificate.
Result<std::shared_ptr<const ServingCertificate>> parse_serving_certificate(const TlsFiles& files,
                                                                            const std::string& cert_pem,
                                                                            const std::string& key_pem);

class CertificateReloader {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // `clock` defaults to steady_clock::now; tests pass a fake one.
  explicit CertificateReloader(TlsFiles files, std::chrono::milliseconds check_interval = std::chrono::seconds(10),
                               Clock clock = {});
  CertificateReloader(const CertificateReloader&) = delete;
  CertificateReloader& operator=(const CertificateReloader&) = delete;

  // At startup: the first pair, or a usage error (exit 2) naming --tls-cert or --tls-key and why.
  Status load();

  // The pair to serve now; thread-safe. Re-reads the files first when the check interval has
  // passed since the last look: one caller does that, concurrent callers meanwhile get the pair
  // in place rather than wait on file I/O. Null only before a successful load().
  std::shared_ptr<const ServingCertificate> current();

  // The pair in place, without looking at the files.
  std::shared_ptr<const ServingCertificate> snapshot() const;

  // Reads both files now (waiting for a check in progress) and installs a changed, valid pair.
  // True when a new pair was installed.
  bool reload_if_changed();

  uint64_t reloads() const { return reloads_.load(); }        // replacements installed after load()
  uint64_t rejections() const { return rejections_.load(); }  // changed files that made no pair
  const TlsFiles& files() const { return files_; }

 private:
  // SHA-256 of the cert text, then of the key text: what was last examined, good or not, without
  // keeping the key's text around.
  using Digest = std::array<unsigned char, 64>;
  bool check_locked();

  const TlsFiles files_;
  const std::chrono::milliseconds interval_;
  const Clock clock_;

  std::mutex check_mutex_;  // one reader of the files at a time; guards the fields below
  bool loaded_ = false;
  Digest seen_{};
  std::string read_failure_;  // the last unreadable-file message, logged once rather than per check
  std::chrono::steady_clock::time_point next_check_{};

  mutable std::mutex pair_mutex_;  // held only to copy or swap the pointer
  std::shared_ptr<const ServingCertificate> pair_;

  std::atomic<uint64_t> reloads_{0};
  std::atomic<uint64_t> rejections_{0};
};

}  // namespace iogate
