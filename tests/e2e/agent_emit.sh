# An event call makes no malloc and no system call on the calling thread
# (tests/agent/emit_probe.c counts both, under a seccomp filter), and the
# probe is shown to see one of each when one is made.  The probe is the
# plain build's in every pass: it interposes malloc, which a sanitizer's
# own allocator would not allow.
. tests/lib/e2e.sh

PROBE=build/tests/emit-probe
check "200k event calls: zero mallocs, zero system calls" sh -c \
	'"$0" | tee /dev/stderr | grep -qx "mallocs=0 syscalls=0 calls=[0-9]*"' "$PROBE"
check "the probe sees one malloc and one system call when made" sh -c \
	'PROBE_SELF_TEST=1 "$0" | grep -qx "mallocs=1 syscalls=1 calls=[0-9]*"' "$PROBE"
finish
