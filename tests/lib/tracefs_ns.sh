# SPDX-License-Identifier: Apache-2.0
# tracefs_ns.sh: for live tests that record with tracefs.  tracefs, its
# instances and switches are the kernel's and machine-wide, so such a test
# runs once at a time (holding /tmp/porthole-tracefs.lock) and in a private
# mount namespace (mounting tracefs there never touches the machine's own
# mounts).
#
# enter_tracefs_ns WHAT ARGS...: re-runs the calling script that way with
# ARGS and returns inside the re-run.  Without root or unshare(1) it fails
# the suite with the reason: a live test never passes by not running.
enter_tracefs_ns() {
	what=$1
	shift
	[ -z "${PH_TRACEFS_NS:-}" ] || return 0
	why=
	[ "$(id -u)" = 0 ] || why="needs root (tracefs, mount namespaces)"
	[ -n "$why" ] || command -v unshare > /dev/null ||
		why="needs unshare(1) for a private mount namespace"
	if [ -z "$why" ]; then
		PH_TRACEFS_NS=1 exec flock -w 900 /tmp/porthole-tracefs.lock \
			unshare -m --propagation private sh "$0" "$@"
	fi
	echo "FAIL $what: $why"
	echo "[${PH_SUITE:-e2e}] 0 passed, 1 failed"
	exit 1
}

# block_io_usable TRACEFS DIR: tracefs mounted (mounting it in this
# namespace if need be), block tracepoints present, and DIR on a real block
# device (files written there cause block requests); says why not.
block_io_usable() {
	[ -e "$1/trace_pipe" ] || mount -t tracefs nodev "$1" ||
		{ echo "cannot mount tracefs at $1"; return 1; }
	[ -e "$1/events/block/block_rq_issue/enable" ] ||
		{ echo "no block tracepoints in $1/events/block"; return 1; }
	src=$(findmnt -n -o SOURCE --target "$2")
	case $src in
	/dev/*) ;;
	*) echo "$2 is on '$src', not a real block device: the sample's" \
		"database would cause no block I/O"; return 1 ;;
	esac
}
