#!/usr/bin/env bash
# make_certs.sh DIR: a throwaway PKI for the test API server (tests/lib/pki.sh).
#   ca.crt/ca.key          the test CA (trust anchor for clients, and the CA that client certs chain to)
#   server.crt/server.key  the server's certificate, SAN IP:127.0.0.1 and DNS:localhost
#   client.crt/client.key  CN=iogate-test, O=system:masters, for kubeconfig client-certificate auth
set -euo pipefail
dir=${1:?usage: make_certs.sh DIR}
source "$(dirname "${BASH_SOURCE[0]}")/../lib/pki.sh"
pki_ca "$dir" iogate-test-ca
pki_sign "$dir" server "/CN=iogate-test-apiserver" "$(pki_server_ext IP:127.0.0.1,DNS:localhost)"
pki_sign "$dir" client "/O=system:masters/CN=iogate-test" "$(pki_client_ext)"
