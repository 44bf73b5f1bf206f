#include "base/openssl_objects.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include <fmt/format.h>

namespace iogate {

void free_x509_stack(STACK_OF(X509) * s) { sk_X509_pop_free(s, X509_free); }
void free_openssl_string(char* s) { OPENSSL_free(s); }

BioPtr memory_bio(std::string_view text) { return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size()))); }

std::string openssl_reason() {
  unsigned long code = ERR_peek_last_error();
  ERR_clear_error();
  if (code == 0) return "";
  const char* reason = ERR_reason_error_string(code);
  return reason ? std::string(": ") + reason : "";
}

Result<std::vector<X509Ptr>> read_pem_certificates(std::string_view pem) {
  std::vector<X509Ptr> certs;
  BioPtr bio = memory_bio(pem);
  ERR_clear_error();
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) certs.emplace_back(cert);
  // The bundle's end reads as "no start line"; anything else is a damaged block.
  unsigned long end = ERR_peek_last_error();
  if (ERR_GET_LIB(end) != ERR_LIB_PEM || ERR_GET_REASON(end) != PEM_R_NO_START_LINE || certs.empty()) {
    std::string why = openssl_reason();
    if (certs.empty()) return usage_error("no PEM certificate" + why);
    return usage_error(fmt::format("damaged PEM after certificate {}{}", certs.size(), why));
  }
  ERR_clear_error();
  return certs;
}

namespace {

int no_passphrase(char*, int, int, void*) { return -1; }

}  // namespace

Result<EvpPkeyPtr> read_pem_private_key(std::string_view pem) {
  BioPtr bio = memory_bio(pem);
  ERR_clear_error();
  EvpPkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr));
  if (!key) return usage_error("not an unencrypted PEM private key" + openssl_reason());
  ERR_clear_error();
  return key;
}

}  // namespace iogate
