#!/usr/bin/env bash
# The C++ of agent/ and tests/ against .clang-format: clang-format --dry-run names every file and
# line it would change. Fix with: clang-format -i $(git ls-files 'agent/*.cc' 'agent/*.h' 'tests/*.cc' 'tests/*.h')
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
source "$(dirname "$0")/../lib/check.sh"
need_tool clang-format
cd "$root"
mapfile -t files < <(find agent tests -name '*.cc' -o -name '*.h' | sort)
((${#files[@]} > 0)) || fail "no C++ files under agent/ and tests/ in $root"
clang-format --dry-run --Werror "${files[@]}" ||
  fail "the files above are not formatted as .clang-format says; fix: clang-format -i FILE..."
pass "${#files[@]} C++ files formatted as .clang-format says"
