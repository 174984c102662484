#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The tables `hotvm run --dump-acpi` writes, through ACPICA's own tools
# (Debian: acpica-tools), TAP output:
#
#   acpi-tools.sh HOTVM [IASL [ACPIEXEC]]
#
# For 1, 8, 255 and 288 possible CPUs (one at boot):
#  - `iasl -d` disassembles every table without an error, a warning or a
#    remark, and the MADT, FADT and XSDT say what acpi.c meant;
#  - `acpiexec` loads them (all but the RSDP: see run_acpiexec), the namespace has exactly one ACPI0007
#    device per possible CPU, and the CPU methods run without AE_ errors.
#
# acpiexec has no register block behind the SystemMemory regions: it keeps
# a buffer per region, filled with -fv's byte, so a read returns the fill or
# what AML wrote last.  With -vr it logs every access, which is what is
# checked here: each method must touch exactly the registers of
# docs/design.md §6.2, in order.  With fill 0, CPEN reads 0, so _STA is 0 and _MAT's
# flags are 0; with fill 1 the CPU looks enabled (_STA 0xF, flags 1); with
# the insert (or remove) bit stuck on, as a broken VMM might leave it,
# CSCN must still stop after one pass per possible CPU.
#
# Skips (TAP "1..0 # SKIP", exit 0: what meson's TAP protocol reads as a
# skip; 77 would be an error there) when iasl or acpiexec is missing.

. "$(dirname "$0")/../lib.sh"
HOTVM=$1
IASL=${2:-$(command -v iasl)}
ACPIEXEC=${3:-$(command -v acpiexec)}

if [ -z "$HOTVM" ] || [ ! -x "$HOTVM" ]; then
	echo "usage: $0 HOTVM [IASL [ACPIEXEC]]" >&2
	exit 2
fi
if [ -z "$IASL" ] || [ -z "$ACPIEXEC" ]; then
	echo "1..0 # SKIP iasl or acpiexec not found: install acpica-tools"
	exit 0
fi

tap_tmpdir acpi

# check NAME WANT GOT: equal strings pass.
check() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		not_ok "$1" "want '$2', got '$3'"
	fi
}

# The CPU's device name: C000 .. CFFF, its index in hex.
cpu_name() {
	printf 'C%03X' "$1"
}

# le32 V: V as four little-endian bytes, the way acpiexec prints buffers.
le32() {
	printf '%02X %02X %02X %02X' $(($1 & 255)) $((($1 >> 8) & 255)) \
		$((($1 >> 16) & 255)) $((($1 >> 24) & 255))
}

# mat CPU FLAGS: the _MAT buffer acpiexec should print, "Length LL = bytes".
mat() {
	if [ "$1" -lt 255 ]; then
		printf 'Length 08 = 00 08 %02X %02X %s' "$1" "$1" "$(le32 "$2")"
	else
		printf 'Length 10 = 09 10 00 00 %s %s %s' "$(le32 "$1")" \
			"$(le32 "$2")" "$(le32 "$1")"
	fi
}

# acpiexec FILL OUT COMMANDS [SETTLE]: runs the ';'-separated commands on the
# current dump.  They go in on stdin, one a line, as typed at its prompt:
# -b refuses a batch longer than 1023 characters.  Every table but the
# RSDP: acpiexec 20200925 reads an RSDP file as if it were an SDT, past
# its 36 bytes (under meson's MALLOC_PERTURB_ it then fails "AE_NO_MEMORY,
# ???? ... Attempted table install failed"); it makes its own RSDP anyway.
# With SETTLE (seconds) it waits that long before quit: acpiexec runs each
# Notify handler on a thread of its own, and a quit that comes first (a
# loaded host) cuts them short ("Outstanding cache allocations", Notify
# lines missing or run together).
run_acpiexec() {
	{
		echo "$3" | tr ';' '\n'
		[ -z "${4:-}" ] || sleep "$4"
		echo quit
	} | (cd "$dir" && "$ACPIEXEC" -fv "$1" -vr \
		apic.dat dsdt.dat facp.dat xsdt.dat) >"$2" 2>&1
}

# section OUT K: what acpiexec printed for the K-th command (from 1) of the
# batch, register accesses shortened to "W|R ADDR WIDTH VALUE" (hex).
section() {
	awk -v k="$2" '
		/^Evaluating / { i++; next }
		i != k { next }
		/SystemMemory (Write|Read)/ {
			for (f = 1; f <= NF; f++) {
				if ($f == "Val") v = $(f + 1)
				if ($f == "Addr") a = $(f + 1)
				if ($f == "BitWidth") w = $(f + 1)
			}
			print (/Write/ ? "W" : "R"), a, w, v
			next
		}
		{ print }' "$1"
}

# accesses OUT K: the register accesses of command K, on one line.
accesses() {
	section "$1" "$2" | grep -E '^[WR] ' | tr '\n' ';' | sed 's/;$//'
}

# result OUT K: what command K returned: "Integer = V", "Length LL = bytes"
# for a buffer, "none".
result() {
	section "$1" "$2" | awk '
		/No object was returned/ { r = "none" }
		/\[Integer\] = / { r = "Integer = " $NF }
		/\[Buffer\] Length/ {
			s = $0
			sub(/.*\[Buffer\] /, "", s)
			sub(/ *\/\/.*/, "", s)
			sub(/= +[0-9A-F]+: /, "= ", s)
			gsub(/  +/, " ", s)
			r = s
		}
		END { print (r == "" ? "missing" : r) }'
}

# clean_run NAME OUT [N]: no AE_ status, no ACPI Error or Warning anywhere
# in the run, and N commands evaluated.
clean_run() {
	if grep -E 'AE_|ACPI Error|ACPI Warning|ACPI Exception|\*\*\*\*' "$2" \
		>"$tmp/bad"; then
		not_ok "$1" "acpiexec reported errors" "$tmp/bad"
	elif [ -n "${3:-}" ] && [ "$(grep -c '^Evaluating ' "$2")" -ne "$3" ]; then
		not_ok "$1" "acpiexec evaluated $(grep -c '^Evaluating ' "$2") of $3 commands" "$2"
	else
		ok "$1"
	fi
}

# count COMMANDS: how many of the ';'-separated commands evaluate something.
count() {
	echo "$1" | tr ';' '\n' | grep -c evaluate
}

# The CPUs to look at closely: both ends, the middle, the xAPIC limit.
cpus_to_check() {
	max=$1
	for c in 0 1 $((max / 2)) 254 255 $((max - 1)); do
		[ "$c" -lt "$max" ] && echo "$c"
	done | sort -n -u
}

# --- iasl: every table disassembles, and says what we meant -------------

check_iasl() {
	max=$1
	for t in apic dsdt facp xsdt; do
		if ! (cd "$dir" && "$IASL" -d "$t.dat") >"$dir/$t.log" 2>&1; then
			not_ok "$max CPUs: iasl -d $t.dat" "iasl failed" \
				"$dir/$t.log"
		elif grep -i -E 'error|warning|remark' "$dir/$t.log" \
			"$dir/$t.dsl" >"$tmp/bad"; then
			not_ok "$max CPUs: iasl -d $t.dat" \
				"iasl complained" "$tmp/bad"
		else
			ok "$max CPUs: iasl -d $t.dat: no errors, warnings, remarks"
		fi
	done

	# iasl 20200925 takes no RSDP binary, not even its own (iasl -T RSDP
	# compiled): check the fields by hand then.
	if (cd "$dir" && "$IASL" -d rsdp.dat) >"$dir/rsdp.log" 2>&1; then
		ok "$max CPUs: iasl -d rsdp.dat"
	elif grep -q 'does not contain a valid ACPI table' "$dir/rsdp.log"; then
		skip "$max CPUs: iasl -d rsdp.dat" \
			"this iasl disassembles no RSDP binary"
	else
		not_ok "$max CPUs: iasl -d rsdp.dat" "iasl failed" \
			"$dir/rsdp.log"
	fi
	# The bytes as $1 .. $36: split on purpose.
	# shellcheck disable=SC2046
	set -- $(od -An -v -tu1 "$dir/rsdp.dat")
	sig=$(head -c 8 "$dir/rsdp.dat")
	sum20=0
	sum36=0
	i=0
	for b in "$@"; do
		[ $i -lt 20 ] && sum20=$((sum20 + b))
		sum36=$((sum36 + b))
		i=$((i + 1))
	done
	check "$max CPUs: RSDP: signature, revision 2, 36 bytes, checksums" \
		"RSD PTR /2/36/36/0/0" \
		"$sig/${16}/${21}/$i/$((sum20 % 256))/$((sum36 % 256))"

	got=$(grep -c 'ACPI Table Address' "$dir/xsdt.dsl")
	check "$max CPUs: XSDT lists the FADT and the MADT" 2 "$got"
	got=$(grep -E '\] +Revision :|FADT Minor Revision :|Hardware Reduced \(V5\) :|CMOS RTC Not Present \(V5\) :' \
		"$dir/facp.dsl" | sed 's/.*: *//' | tr '\n' ' ')
	check "$max CPUs: FADT 6.3, no CMOS RTC, hardware-reduced" \
		"06 1 1 03 " "$got"

	lapic=$(grep -c 'Subtable Type : 00 \[Processor Local APIC\]' \
		"$dir/apic.dsl")
	x2apic=$(grep -c 'Subtable Type : 09 \[Processor Local x2APIC\]' \
		"$dir/apic.dsl")
	# The flags words: this iasl decodes Online Capable for xAPIC only.
	enabled=$(grep -c 'Flags (decoded below) : 00000001' "$dir/apic.dsl")
	capable=$(grep -c 'Flags (decoded below) : 00000002' "$dir/apic.dsl")
	want_x2=0
	[ "$max" -gt 255 ] && want_x2=$((max - 255))
	check "$max CPUs: MADT: xAPIC, x2APIC entries, 1 enabled, rest online capable" \
		"$((max - want_x2)) $want_x2 1 $((max - 1))" \
		"$lapic $x2apic $enabled $capable"
}

# --- acpiexec: the namespace ---------------------------------------------

check_namespace() {
	max=$1
	out=$tmp/ns
	run_acpiexec 0 "$out" 'namespace'
	clean_run "$max CPUs: acpiexec loads the tables" "$out"
	# Each table's header once, matched anywhere on a line: on a busy CI
	# machine acpiexec's "ACPI: " prefix was once not at the start of the
	# line of one of them (3 of 4 matched so), with the table loaded.
	got=$(grep -oE '(XSDT|FACP|APIC|DSDT) 0x[0-9A-F]+ [0-9A-F]+ \(v[0-9]+ HOTVM' \
		"$out" | cut -c1-4 | sort -u | wc -l)
	check "$max CPUs: acpiexec took hotvm's XSDT, FACP, APIC, DSDT" \
		4 "$got"

	# One line per CPU device: "name hid uid ej0" (ej0: 1 if it has one).
	awk '
		$2 ~ /^C[0-9A-F][0-9A-F][0-9A-F]$/ && $3 == "Device" {
			if (dev != "") print dev, hid, uid, ej
			dev = $2; hid = ""; uid = ""; ej = 0; next
		}
		dev != "" && $1 <= 2 { print dev, hid, uid, ej; dev = "" }
		dev != "" && $2 == "_HID" { hid = $NF }
		dev != "" && $2 == "_UID" { uid = $NF }
		dev != "" && $2 == "_EJ0" { ej = 1 }
		END { if (dev != "") print dev, hid, uid, ej }' "$out" \
		>"$tmp/cpus"
	check "$max CPUs: the namespace has $max CPU devices" \
		"$max" "$(grep -c . "$tmp/cpus")"
	c=0
	bad=""
	while read -r name hid uid ej; do
		want_ej=1
		[ $c -eq 0 ] && want_ej=0
		want="$(cpu_name $c) \"ACPI0007\" $(printf '%016X' $c) $want_ej"
		[ "$name $hid $uid $ej" = "$want" ] ||
			bad="$bad; want '$want', got '$name $hid $uid $ej'"
		c=$((c + 1))
	done <"$tmp/cpus"
	if [ -z "$bad" ]; then
		ok "$max CPUs: C000..$(cpu_name $((max - 1))): ACPI0007, _UID = index, _EJ0 on all but CPU 0"
	else
		not_ok "$max CPUs: CPU devices" "${bad#; }"
	fi
	got=$(grep -E '^ +1 +(CPUS|GED_|COM1|MRES) Device' "$out" |
		awk '{ print $2 }' | tr '\n' ' ')
	check "$max CPUs: \\_SB has CPUS, GED_, COM1, MRES" \
		"CPUS GED_ COM1 MRES " "$got"
	got=$(awk '$2 == "GED_" { g = 1 } g && $2 == "_CRS" { print; exit }' \
		"$out" | sed 's/.*Len /Len /')
	check "$max CPUs: the GED's _CRS holds only its interrupt (GSI 5)" \
		"Len 0B = 89 06 00 03 01 05 00 00 00 79 00" "$got"
}

# --- acpiexec: the CPU methods, register by register ----------------------

# The register block (docs/design.md §6.2) and the GED's event register.
SEL=FEB00100
FLAGS=FEB00104
CMD=FEB00105
DATA=FEB00108
GED=FEB00000

check_methods() {
	max=$1
	out=$tmp/methods
	cmds=""
	for c in $(cpus_to_check "$max"); do
		p="\\_SB.CPUS.$(cpu_name "$c")"
		cmds="$cmds evaluate $p._STA; evaluate $p._MAT;"
		# What Linux does on a removal: _OST(3, 0x84), _EJ0, _OST(3, 0).
		cmds="$cmds evaluate $p._OST 3 0x84 (00);"
		[ "$c" -ne 0 ] && cmds="$cmds evaluate $p._EJ0 1;"
		cmds="$cmds evaluate $p._OST 3 0 (00);"
	done
	cmds="$cmds evaluate \\_SB.CPUS.CSCN; evaluate \\_SB.GED_._EVT 8"
	run_acpiexec 0 "$out" "$cmds"
	clean_run "$max CPUs: the CPU methods run without AE_ errors" "$out" \
		"$(count "$cmds")"

	k=0
	fl=00000000 # the flags byte reads what _EJ0 wrote last
	for c in $(cpus_to_check "$max"); do
		name=$(cpu_name "$c")
		s=$(printf '%08X' "$c")
		k=$((k + 1))
		check "$max CPUs: $name._STA selects it, reads CPEN 0, returns 0" \
			"W $SEL 20 $s;R $FLAGS 8 $fl|Integer = 0000000000000000" \
			"$(accesses "$out" $k)|$(result "$out" $k)"
		k=$((k + 1))
		check "$max CPUs: $name._MAT: $([ "$c" -lt 255 ] && echo "Local APIC (0)" || echo "Local x2APIC (9)"), not enabled" \
			"$(mat "$c" 0)" "$(result "$out" $k)"
		k=$((k + 1))
		check "$max CPUs: $name._OST(3, 0x84): event, then status" \
			"W $SEL 20 $s;W $CMD 8 00000001;W $DATA 20 00000003;W $CMD 8 00000002;W $DATA 20 00000084|none" \
			"$(accesses "$out" $k)|$(result "$out" $k)"
		if [ "$c" -ne 0 ]; then
			k=$((k + 1))
			check "$max CPUs: $name._EJ0 writes only the eject bit" \
				"W $SEL 20 $s;W $FLAGS 8 00000008|none" \
				"$(accesses "$out" $k)|$(result "$out" $k)"
			fl=00000008
		fi
		k=$((k + 1))
		check "$max CPUs: $name._OST(3, 0)" \
			"W $SEL 20 $s;W $CMD 8 00000001;W $DATA 20 00000003;W $CMD 8 00000002;W $DATA 20 00000000|none" \
			"$(accesses "$out" $k)|$(result "$out" $k)"
	done
	k=$((k + 1))
	check "$max CPUs: CSCN with no event pending: one pass, no Notify" \
		"W $SEL 20 00000000;W $CMD 8 00000000;R $DATA 20 00000000;R $FLAGS 8 $fl;R $FLAGS 8 $fl|0" \
		"$(accesses "$out" $k)|$(section "$out" $k | grep -c Notify)"
	k=$((k + 1))
	check "$max CPUs: GED _EVT with no CPU event: reads the event register only" \
		"R $GED 20 00000000" "$(accesses "$out" $k)"

	# Fill 1: CPEN reads 1, the CPU is enabled.
	out=$tmp/enabled
	cmds=""
	for c in $(cpus_to_check "$max"); do
		p="\\_SB.CPUS.$(cpu_name "$c")"
		cmds="$cmds evaluate $p._STA; evaluate $p._MAT;"
	done
	run_acpiexec 1 "$out" "${cmds%;}"
	clean_run "$max CPUs: enabled CPUs: no AE_ errors" "$out" \
		"$(count "$cmds")"
	k=0
	for c in $(cpus_to_check "$max"); do
		name=$(cpu_name "$c")
		k=$((k + 1))
		check "$max CPUs: $name._STA = 0xF when CPEN reads 1" \
			"Integer = 000000000000000F" "$(result "$out" $k)"
		k=$((k + 1))
		check "$max CPUs: $name._MAT: enabled" "$(mat "$c" 1)" \
			"$(result "$out" $k)"
	done
}

# scan FILL NOTIFY VALUE WHAT: the last CPU as the one with the event (its
# index written to the command data register through _OST's status), the
# event bit stuck on, the GED's CPU bit set by the fill: _EVT must call
# CSCN, which must Notify that CPU once per pass and stop after max passes.
check_scan() {
	max=$1
	fill=$2
	value=$3
	what=$4
	clear=$5
	last=$((max - 1))
	name=$(cpu_name $last)
	out=$tmp/scan
	run_acpiexec "$fill" "$out" \
		"evaluate \\_SB.CPUS.C000._OST 1 $last (00); evaluate \\_SB.GED_._EVT 0" 2
	clean_run "$max CPUs: GED _EVT with $what stuck on: no AE_ errors" \
		"$out" 2
	got=$(section "$out" 2 | grep -c "Notify on \[$name\] .* Value $value")
	# A fill with the GED's power-button bit (0x02) is one press too.
	press=$(((fill >> 1) & 1))
	pwrb=$(section "$out" 2 | grep -c "Notify on \[PWRB\] .* Value 0x80")
	others=$(section "$out" 2 | grep Notify |
		grep -v "\[PWRB\]" | grep -c -v "\[$name\]")
	clears=$(section "$out" 2 | grep -c "^W $FLAGS 8 0000000$clear$")
	check "$max CPUs: $what stuck on: CSCN notifies $name $value and clears it once per pass, $max passes; PWRB notified 0x80 $press times" \
		"$max 0 $max $press" "$got $others $clears $pwrb"
}

for max in 1 8 255 288; do
	dir=$tmp/$max
	mkdir "$dir"
	if ! "$HOTVM" run --cpus "boot=1,max=$max" --dump-acpi "$dir" \
		>"$tmp/out" 2>&1; then
		not_ok "$max CPUs: hotvm run --dump-acpi" "it failed" "$tmp/out"
		continue
	fi
	check "$max CPUs: --dump-acpi writes the five tables" \
		"apic.dat dsdt.dat facp.dat rsdp.dat xsdt.dat" \
		"$(cd "$dir" && echo *)"
	check_iasl "$max"
	check_namespace "$max"
	check_methods "$max"
	check_scan "$max" 0x0a 0x01 "insert pending" 2
	check_scan "$max" 0x0c 0x03 "remove pending" 4
done

# --- --dump-acpi's own errors ----------------------------------------------

# expect_usage NAME DIR WORDS: exit status 2 and a message with WORDS.
expect_usage() {
	"$HOTVM" run --dump-acpi "$2" >"$tmp/out" 2>&1
	status=$?
	if [ $status -eq 2 ] && grep -q "$3" "$tmp/out"; then
		ok "$1"
	else
		not_ok "$1" "want status 2 and '$3', got status $status" \
			"$tmp/out"
	fi
}

expect_usage "--dump-acpi to a missing directory: status 2" \
	"$tmp/missing" "create the directory first"
: >"$tmp/file"
expect_usage "--dump-acpi to a file: status 2" "$tmp/file" "not a directory"
mkdir "$tmp/ro"
chmod 555 "$tmp/ro"
if [ "$(id -u)" -ne 0 ]; then
	expect_usage "--dump-acpi to a read-only directory: status 2" \
		"$tmp/ro" "not writable"
elif command -v setpriv >/dev/null; then
	# root may write anywhere: ask as nobody.
	chmod 755 "$tmp"
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$HOTVM" run --dump-acpi "$tmp/ro" >"$tmp/out" 2>&1
	status=$?
	if [ $status -eq 126 ] || [ $status -eq 127 ]; then
		skip "--dump-acpi to a read-only directory" \
			"user nobody cannot run $HOTVM"
	elif [ $status -eq 2 ] && grep -q "not writable" "$tmp/out"; then
		ok "--dump-acpi to a read-only directory: status 2"
	else
		not_ok "--dump-acpi to a read-only directory: status 2" \
			"want status 2 and 'not writable', got $status" \
			"$tmp/out"
	fi
else
	skip "--dump-acpi to a read-only directory" "root and no setpriv"
fi

tap_end
