#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# bench/heap/make-dump.sh OUT.hprof: compiles LeakBench, runs it, dumps
# its heap with jcmd (openjdk-17-jdk-headless) and stops it.  The dump is
# a build artefact (build/), never committed.
set -eu
out=$1
here=$(cd "$(dirname "$0")" && pwd)
work=$(dirname "$out")/classes
mkdir -p "$work"
javac -d "$work" "$here/LeakBench.java" "$here/android/app/Activity.java"
fifo=$(mktemp -u)
mkfifo "$fifo"
java -Xmx2g -XX:+UseSerialGC -cp "$work" LeakBench < "$fifo" > "$out.log" &
pid=$!
exec 3> "$fifo"
i=0
until grep -q ready "$out.log" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 600 ] || { echo "LeakBench never got ready" >&2; kill $pid; exit 1; }
	sleep 0.1
done
rm -f "$out"
jcmd $pid GC.heap_dump "$out" > /dev/null
echo >&3
exec 3>&-
wait $pid || true
rm -f "$fifo" "$out.log"
ls -l "$out" >&2
