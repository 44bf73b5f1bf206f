# Throwaway certificates for the tests, made with the openssl CLI; source this file. Keys are EC
# P-256: fast to make, accepted by Go and OpenSSL. Valid two days, never committed.
#
#   pki_ca DIR CN                    DIR/ca.crt and DIR/ca.key
#   pki_sign DIR NAME SUBJECT EXT    DIR/NAME.crt and DIR/NAME.key signed by DIR's CA; EXT is the
#                                    openssl extension lines (newline-separated)

pki_key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

pki_ca() {
  mkdir -p "$1"
  pki_key "$1/ca.key"
  openssl req -x509 -new -key "$1/ca.key" -sha256 -days 2 -subj "/CN=$2" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$1/ca.crt" 2>/dev/null
  chmod 600 "$1/ca.key"
}

pki_sign() {
  local dir=$1 name=$2
  pki_key "$dir/$name.key"
  openssl req -new -key "$dir/$name.key" -subj "$3" -out "$dir/$name.csr" 2>/dev/null
  printf '%s\n' "$4" >"$dir/$name.ext"
  openssl x509 -req -in "$dir/$name.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
    -sha256 -days 2 -extfile "$dir/$name.ext" -out "$dir/$name.crt" 2>/dev/null
  rm -f "$dir/$name.csr" "$dir/$name.ext" "$dir/ca.srl"
  chmod 600 "$dir/$name.key"
}

# The extension lines of a TLS client and of a TLS server for SANS ("IP:127.0.0.1,DNS:localhost").
pki_client_ext() {
  printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
    "extendedKeyUsage=clientAuth"
}
pki_server_ext() {
  printf '%s\n' "basicConstraints=CA:FALSE" "keyUsage=critical,digitalSignature,keyEncipherment" \
    "extendedKeyUsage=serverAuth" "subjectAltName=$1"
}
