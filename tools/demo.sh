#!/bin/sh
# The main job: boot hotvm's built-in tiny guest with 2 of 4 possible vCPUs,
# hot-add two vCPUs and hot-remove them again while it runs, showing the host
# and guest state tables side by side after each step.  The guest's console
# lines are prefixed "guest|".
#
#   tools/demo.sh [BUILD_DIR]      (default: build)
#
# Without a usable /dev/kvm (a machine whose kernel is itself a guest may
# have none) it runs the same demo inside the nested lab's real KVM.
set -eu

build=${1:-build}
hotvm=${HOTVM:-$build/vmm/hotvm}
[ -x "$hotvm" ] || { echo "demo: $hotvm is not built: ninja -C $build" >&2; exit 2; }

if [ -z "${HOTVM_DEMO_IN_LAB:-}" ] && { [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; }; then
	echo "demo: no usable /dev/kvm here: running the demo inside the nested" \
		"lab (tools/lab/lab.sh; about 15 s, and the first time it" \
		"downloads Debian's kernel)" >&2
	exec "$(dirname "$0")/lab/lab.sh" --cache "$build/lab-cache" --smp 1 \
		--hotvm "$hotvm" --add "$0:/lab/demo.sh" \
		--run 'HOTVM=/bin/hotvm HOTVM_DEMO_IN_LAB=1 sh /lab/demo.sh'
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/hotvm-demo.XXXXXX")
sock=$dir/api.sock
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

mkfifo "$dir/console"
"$hotvm" run --name demo --cpus boot=2,max=4 --api-socket "$sock" \
	--serial stdio >"$dir/console" &
pid=$!

# Read the console until the guest is ready, then keep echoing it.
exec 3<"$dir/console"
while IFS= read -r line <&3; do
	echo "guest| $line"
	case $line in ready*) break ;; esac
done
while IFS= read -r line <&3; do echo "guest| $line"; done &

step() {
	echo
	echo "\$ hotvm cpu $*"
	"$hotvm" cpu "$@" --api-socket "$sock"
}

step list
step add 2
step add 3
step states 3
step list
step remove 3
step remove 2
step states 2
echo
echo "\$ kill -TERM $pid   # hotvm shuts down cleanly"
kill -TERM "$pid"
wait "$pid" && status=0 || status=$?
pid=
echo "hotvm exited with status $status"
