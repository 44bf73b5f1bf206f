# YAML for the shell tests: PY, a python3 with the yaml module (Debian's has python3-yaml, a
# yamllint dependency; another python3 first on PATH may not), and to_json. Source it after
# tests/lib/check.sh: without the module the test fails, naming the package.
PY=/usr/bin/python3
[[ -x $PY ]] || PY=python3
"$PY" -c 'import yaml' 2>/dev/null || fail "python3 has no yaml module: apt-get install python3-yaml"

# to_json FILE: a YAML file (multi-document) as a JSON array of its non-empty documents.
to_json() {
  "$PY" -c '
import json, sys, yaml
json.dump([d for d in yaml.safe_load_all(open(sys.argv[1])) if d], sys.stdout)' "$1"
}
