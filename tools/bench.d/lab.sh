#!/usr/bin/env bash
# lab: the tiny phase in the nested lab, with the kernel's count of each VMM's exits
#
# tools/bench tiny in the nested lab (tools/lab), for hosts without
# /dev/kvm: the tiny guest on the lab's real KVM, hotvm against QEMU 7.2
# (and an older build with --before) in one lab boot, with the kernel's
# count of each VMM's exits (kvm:kvm_userspace_exit and kvm:kvm_exit in
# tracefs) next to hotvm's own.  Prints the table here and saves the JSON.
#
#   tools/bench lab [-b BUILD] [-c CYCLES] [-m MAX] [--before BUILD]
#                      [--prestage K] [--no-qemu] [--no-kernel-exits]
#                      [-o JSON] [-l LOG] [-s SMP] [-t SECONDS]
#     -b            build with vmm/hotvm, guest/hotvm-tiny.elf,
#                   tests/e2e/bench-states and lab-cache (default build)
#     -c, -m        tools/bench tiny's cycles and max vCPUs (default 10,
#                   16; it wants -m >= 9)
#     --before B    also the older build B (its vmm/hotvm and guest image)
#     --prestage K  also hotvm --prestage K (K vCPUs created ahead), a
#                   column of its own
#     --no-qemu     hotvm alone
#     --no-kernel-exits  hotvm's own count of exits only (no tracefs)
#     -o            the JSON (default BUILD/bench-lab.json)
#     -l            the lab's console log (default BUILD/bench-lab.log)
#     -s            the lab's CPUs (default 1: lab.sh --smp > 1 now and
#                   then locks up under TCG; vCPUs are threads either way)
#     -t            the lab's timeout per boot (default 2400)
# About 5 minutes with the defaults on a loaded 2-core host (10 when the
# lab's kernel freezes once and boots again).  Needs what tools/lab/lab.sh
# needs (and its --with-qemu, --with-python).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
build=$top/build
before=
prestage=
cycles=10
max=16
qemu=1
kexits=--kernel-exits
json=
log=
smp=1
timeout=2400

usage() { sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
while [ $# -gt 0 ]; do
	case $1 in
	-[bcmolst] | --before | --prestage) [ $# -ge 2 ] || usage ;;
	esac
	case $1 in
	-b) build=$2; shift ;;
	-c) cycles=$2; shift ;;
	-m) max=$2; shift ;;
	--before) before=$2; shift ;;
	--prestage) prestage=$2; shift ;;
	--no-qemu) qemu= ;;
	--no-kernel-exits) kexits= ;;
	-o) json=$2; shift ;;
	-l) log=$2; shift ;;
	-s) smp=$2; shift ;;
	-t) timeout=$2; shift ;;
	-h | --help) usage 0 ;;
	*) echo "bench-lab: unknown option '$1'" >&2; usage ;;
	esac
	shift
done
build=$(cd "$build" && pwd)
json=${json:-$build/bench-lab.json}
log=${log:-$build/bench-lab.log}

# What tools/bench tiny reads of a build, at the same paths in the lab.
lab_args=(--add "$top/tools/bench.d/tiny.py:/lab/tools/bench.d/tiny.py"
	--add "$top/tools/bench_table.py:/lab/tools/bench_table.py"
	--add "$top/tools/hotvm_qmp.py:/lab/tools/hotvm_qmp.py")
copy_build() { # BUILD DEST [e2e]
	local f
	for f in vmm/hotvm guest/hotvm-tiny.elf ${3:+tests/e2e/bench-states}; do
		[ -e "$1/$f" ] || { echo "bench-lab: no $1/$f (ninja -C $1)" >&2; exit 2; }
	done
	lab_args+=(--bin "$1/vmm/hotvm:$2/vmm/hotvm"
		--add "$1/guest/hotvm-tiny.elf:$2/guest/hotvm-tiny.elf")
	[ -z "${3:-}" ] || lab_args+=(--bin "$1/tests/e2e/bench-states:$2/tests/e2e/bench-states")
}
copy_build "$build" /lab/after e2e
bench="python3 /lab/tools/bench.d/tiny.py -b /lab/after -c $cycles -m $max"
bench="$bench -o /tmp/bench.json -p /tmp/bench.png $kexits"
[ -z "$prestage" ] || bench="$bench --prestage $prestage"
if [ -n "$before" ]; then
	copy_build "$(cd "$before" && pwd)" /lab/before
	bench="$bench --before /lab/before"
fi
if [ -n "$qemu" ]; then lab_args+=(--with-qemu); else bench="$bench --no-qemu"; fi

# The JSON comes back as one console line.
run="mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || :
echo \"BENCH-INFO: kernel \$(uname -r), \$(nproc) CPU(s)\"
st=0; BENCH_TIMEOUT=300 $bench || st=\$?
[ ! -e /tmp/bench.json ] || python3 -c 'import json, sys
print(\"BENCH-JSON:\", json.dumps(json.load(open(sys.argv[1]))))' /tmp/bench.json
exit \$st"

echo "bench-lab: -c $cycles -m $max${before:+ --before $before}${prestage:+ --prestage $prestage}${qemu:+ with QEMU} in the nested lab (--smp $smp, timeout ${timeout}s; log: $log)" >&2
status=0
"$top/tools/lab/lab.sh" --cache "$build/lab-cache" --smp "$smp" --with-python \
	--silence 300 --retries 2 "${lab_args[@]}" --run "$run" --log "$log" \
	--quiet --timeout "$timeout" || status=$?

grep -a '^# .* s: ' "$log" | tr -d '\r' >&2 || :
if grep -a '^BENCH-JSON: ' "$log" | tail -n 1 | tr -d '\r' | cut -c 13- >"$json.tmp" &&
	[ -s "$json.tmp" ]; then
	mv "$json.tmp" "$json"
	python3 "$top/tools/bench.d/tiny.py" --table "$json"
	echo "# json: $json"
else
	rm -f "$json.tmp"
	echo "bench-lab: no figures came back (log: $log)" >&2
	[ "$status" != 0 ] || status=1
fi
[ "$status" = 0 ] || echo "bench-lab: the lab exited with status $status (log: $log)" >&2
exit "$status"
