#!/usr/bin/env bash
# The C++ of agent/ and tests/ against .clang-format: clang-format --dry-run names every file and
# line it would change. Fix with: clang-format -i $(git ls-files 'agent/*.cc' 'agent/*.h' 'tests/*.cc' 'tests/*.h')
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
command -v clang-format >/dev/null || { echo "FAIL: clang-format is missing (bash scripts/install-deps.sh installs it)" >&2; exit 1; }
cd "$root"
mapfile -t files < <(find agent tests -name '*.cc' -o -name '*.h' | sort)
((${#files[@]} > 0)) || { echo "FAIL: no C++ files under agent/ and tests/ in $root" >&2; exit 1; }
if ! clang-format --dry-run --Werror "${files[@]}"; then
  echo "FAIL: the files above are not formatted as .clang-format says; fix: clang-format -i FILE..." >&2
  exit 1
fi
echo "ok: ${#files[@]} C++ files formatted as .clang-format says"
