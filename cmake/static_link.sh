#!/usr/bin/env bash
# Runs the iogate link command ("$@") and drops exactly glibc's notes that getaddrinfo,
# gethostbyname and dlopen "in statically linked applications require at runtime the shared
# libraries from the glibc version used for linking"; every other line, and the exit status, pass.
#
# The calls are needed and safe in the static binary: cpp-httplib resolves the API server's host
# (a kubeconfig names it, often by DNS name) and the webhook's listen address with getaddrinfo;
# libssl pulls OpenSSL's BIO lookup (getaddrinfo, gethostbyname) and DSO (dlopen) code in. Since
# glibc 2.34 the files and dns NSS modules are built into libc, so name lookups work with no shared
# library (the FROM scratch image has none); only other NSS modules, or an OpenSSL configuration
# that loads a dynamic engine or provider, would need one: iogate names neither. The linkers have no
# switch that drops one symbol's note (ld -w drops every warning), hence this filter, on this link only.
set -uo pipefail
messages=$(mktemp)
trap 'rm -f "$messages"' EXIT
"$@" 2>"$messages"
status=$?
grep -Ev "warning: Using '(getaddrinfo|gethostbyname|dlopen)' in statically linked applications requires at runtime the shared libraries from the glibc version used for linking$" "$messages" >&2
exit "$status"
