#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# How the files beside this script were made (once, as root, on kernel
# 6.18 with a virtio disk): block events into a private tracefs instance,
# then the same events twice, as the kernel prints them (`trace`, which
# does not consume) and as its ring buffer holds them (trace_pipe_raw,
# which does).  tests/unit/test_iotrace_raw.c decodes the pages and checks
# every record against the text.  Usage: capture.sh FILE_ON_A_REAL_DISK
set -eu
out=$(cd "$(dirname "$0")" && pwd)
t=/sys/kernel/tracing
mounted=
[ -e $t/trace_pipe ] || { mount -t tracefs nodev $t; mounted=1; }
i=$t/instances/porthole-capture
mkdir $i
trap 'echo 0 > $i/tracing_on; for e in issue insert complete; do echo 0 > $i/events/block/block_rq_$e/enable; done; rmdir $i; [ -z "$mounted" ] || umount $t' EXIT
echo mono > $i/trace_clock
for e in issue insert complete; do echo 1 > $i/events/block/block_rq_$e/enable; done
dd if=/dev/zero of="$1" bs=4k count=64 oflag=direct 2>/dev/null
dd if="$1" of=/dev/null bs=64k iflag=direct 2>/dev/null
sync
echo 0 > $i/tracing_on
cp $t/events/header_page "$out/header_page"
for e in issue insert complete; do
	cp $t/events/block/block_rq_$e/format "$out/block_rq_$e.format"
done
cat $i/trace > "$out/trace.txt"
for c in 0 1; do
	: > "$out/cpu$c.raw"
	dd if=$i/per_cpu/cpu$c/trace_pipe_raw of="$out/cpu$c.raw" bs=4096 \
		iflag=nonblock 2>/dev/null || true
done
rm -f "$1"
