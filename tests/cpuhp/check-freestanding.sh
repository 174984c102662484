#!/bin/sh
# Fails if the freestanding cpuhp archive references a symbol it does not
# define itself: libc calls (including compiler-emitted memcpy/memset) would
# not link into the tiny guest.
set -eu
lib=$1
defined=$(nm --defined-only "$lib" | awk 'NF == 3 { print $3 }' | sort -u)
undefined=$(nm -u "$lib" | awk '$1 == "U" { print $2 }' | sort -u)
missing=$(printf '%s\n' "$undefined" | grep -vxF "$defined" || true)
if [ -n "$missing" ]; then
	echo "freestanding cpuhp needs symbols from outside: $missing" >&2
	exit 1
fi
echo "freestanding cpuhp is self-contained ($(printf '%s\n' "$defined" | wc -l) symbols)"
