#!/usr/bin/env bash
# Fails when a C source or header differs from what clang-format makes of it.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files -co --exclude-standard '*.c' '*.h')
[ ${#files[@]} -gt 0 ] || exit 0
if ! clang-format --dry-run --Werror "${files[@]}"; then
	echo "check-format: run 'clang-format -i' on the files above" >&2
	exit 1
fi
echo "check-format: ${#files[@]} files formatted"
