// Standard base64 (RFC 4648 §4): decoding for kubeconfig's *-data fields, encoding for the
// webhook's JSON patches (AdmissionReview's `patch` is base64 of the patch's bytes).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace iogate {

// std::nullopt on a character outside the alphabet, a '=' before the end or a dangling single
// character. Whitespace (line breaks in hand-wrapped files) is skipped; trailing '=' padding may
// be present or not. Not OpenSSL's EVP_DecodeBlock: it takes no whitespace, needs the padding
// and counts it into the length.
std::optional<std::string> decode_base64(std::string_view text);

// With '=' padding and no line breaks, as Go's base64.StdEncoding writes it (OpenSSL's
// EVP_EncodeBlock).
std::string encode_base64(std::string_view bytes);

}  // namespace iogate
