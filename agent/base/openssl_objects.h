// OpenSSL objects owned by unique_ptrs, each freed by its own function, and the PEM reading that
// the API client (kube/) and the webhook's serving pair (webhook/) share. Every function here
// leaves OpenSSL's error queue empty, so that a later failure is not blamed on an old reason.
#pragma once

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace iogate {

template <auto Free>
struct OpensslFree {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};
void free_x509_stack(STACK_OF(X509) * s);  // the certificates too
void free_openssl_string(char* s);         // OPENSSL_free is a macro

using BioPtr = std::unique_ptr<BIO, OpensslFree<&BIO_free>>;
using BignumPtr = std::unique_ptr<BIGNUM, OpensslFree<&BN_free>>;
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, OpensslFree<&EVP_PKEY_free>>;
using OpensslStringPtr = std::unique_ptr<char, OpensslFree<&free_openssl_string>>;
using X509Ptr = std::unique_ptr<X509, OpensslFree<&X509_free>>;
using X509StackPtr = std::unique_ptr<STACK_OF(X509), OpensslFree<&free_x509_stack>>;
using X509StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, OpensslFree<&X509_STORE_CTX_free>>;
using X509StorePtr = std::unique_ptr<X509_STORE, OpensslFree<&X509_STORE_free>>;

// A read-only BIO over `text`, which must outlive it.
BioPtr memory_bio(std::string_view text);

// ": bad base64 decode", OpenSSL's reason for the last failure, or "" where it gave none.
std::string openssl_reason();

// Every certificate of a PEM bundle, in order. A usage error where there is none, or where a
// block after them is damaged: a chain served or presented without its intermediate fails only at
// the peer, so it is refused here. The message says which, with OpenSSL's reason; the caller
// names the file or field.
Result<std::vector<X509Ptr>> read_pem_certificates(std::string_view pem);

// An unencrypted PEM private key (PKCS#8, or traditional RSA/EC). Never asks for a passphrase:
// OpenSSL's default would prompt on the terminal.
Result<EvpPkeyPtr> read_pem_private_key(std::string_view pem);

}  // namespace iogate
