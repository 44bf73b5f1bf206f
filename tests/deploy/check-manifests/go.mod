// check-manifests: iogate's own rules for rendered manifests (tests/deploy/build_tools.sh).
module iogate.test/deploy/check-manifests

go 1.26.0

require gopkg.in/yaml.v3 v3.0.1
