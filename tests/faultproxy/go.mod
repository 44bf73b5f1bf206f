// A fault-injecting TLS reverse proxy in front of the real kube-apiserver, for the e2e tests
// (README.md). Standard library only.
module iogate.test/faultproxy

go 1.26.0
