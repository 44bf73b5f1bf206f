#!/usr/bin/env bash
# make_certs.sh DIR: a throwaway PKI for the test API server, made with the openssl CLI.
#   ca.crt/ca.key          the test CA (trust anchor for clients, and the CA that client certs chain to)
#   server.crt/server.key  the server's certificate, SAN IP:127.0.0.1 and DNS:localhost
#   client.crt/client.key  CN=iogate-test, O=system:masters, for kubeconfig client-certificate auth
# Generated at test time, never committed. Keys are EC P-256: fast to make, accepted by Go and OpenSSL.
set -euo pipefail
dir=${1:?usage: make_certs.sh DIR}
mkdir -p "$dir"
cd "$dir"

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }

key ca.key
openssl req -x509 -new -key ca.key -sha256 -days 2 -subj "/CN=iogate-test-ca" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -out ca.crt 2>/dev/null

sign() {  # sign NAME SUBJECT EXTENSIONS
  key "$1.key"
  openssl req -new -key "$1.key" -subj "$2" -out "$1.csr" 2>/dev/null
  printf '%s\n' "$3" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -sha256 -days 2 \
    -extfile "$1.ext" -out "$1.crt" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}

sign server "/CN=iogate-test-apiserver" \
  "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost"
sign client "/O=system:masters/CN=iogate-test" \
  "basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth"
rm -f ca.srl
chmod 600 ./*.key
