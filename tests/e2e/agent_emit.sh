# SPDX-License-Identifier: Apache-2.0
# An event call makes no malloc, no system call and takes no page fault on
# the calling thread (tests/agent/emit_probe.c counts all three, under a
# seccomp filter), and the probe is shown to see one of each when one is
# made.  The probe is the
# plain build's in every pass: it interposes malloc, which a sanitizer's
# own allocator would not allow.
. tests/lib/e2e.sh

PROBE=build/tests/emit-probe
check "200k event calls: zero mallocs, system calls, page faults" sh -c \
	'"$0" | tee /dev/stderr | grep -qx "mallocs=0 syscalls=0 faults=0 calls=[0-9]*"' "$PROBE"
check "the probe sees one malloc, system call and page fault when made" sh -c \
	'PROBE_SELF_TEST=1 "$0" | grep -qx "mallocs=1 syscalls=1 faults=1 calls=[0-9]*"' "$PROBE"
finish
