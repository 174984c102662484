#!/bin/sh
# Writes an assembly file that links the guest ELF $1 into hotvm as
# hotvm_guest_start..hotvm_guest_end.  The path is made absolute because the
# assembler may run in another directory than this script.
set -eu
in=$1
out=$2
case $in in
/*) abs=$in ;;
*) abs=$(cd "$(dirname "$in")" && pwd)/$(basename "$in") ;;
esac
cat >"$out" <<EOS
	.section .rodata.hotvm_guest, "a"
	.balign 16
	.globl hotvm_guest_start
	.globl hotvm_guest_end
hotvm_guest_start:
	.incbin "$abs"
hotvm_guest_end:
	.section .note.GNU-stack, "", @progbits
EOS
