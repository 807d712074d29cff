#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `porthole heap dump` runs adb and jcmd through the host's one run helper:
# a helper that never returns is stopped at its timeout, and one that
# prints far more than the reply buffer holds is drained, not waited on
# with a full pipe.  `timeout 300` only turns a hang into a failure.
. tests/lib/e2e.sh
P="$BIN/porthole"
G=tests/golden/heap

# adb that hangs in dumpheap (a device that never answers)
cat > "$E2E_TMP/adb-stuck" <<FAKE
#!/bin/sh
case "\$1 \$2" in
"shell am") exec sleep 100000 ;;
esac
exit 0
FAKE
chmod +x "$E2E_TMP/adb-stuck"
check "a stuck adb is stopped at the helper timeout" sh -c \
	"PORTHOLE_HEAP_TIMEOUT_MS=300 PORTHOLE_ADB='$E2E_TMP/adb-stuck' \
		timeout 300 '$P' heap dump --application-id com.example.stuck \
		--out '$E2E_TMP/stuck.hprof' > '$E2E_TMP/d' 2>&1; \
	 [ \$? -eq 2 ] && grep -q 'am dumpheap com.example.stuck failed' '$E2E_TMP/d'"

# adb whose stat reply is 64 KiB of chatter before the size, and whose
# dumpheap prints 64 KiB too: both are read to their end
cat > "$E2E_TMP/adb-chatty" <<FAKE
#!/bin/sh
case "\$1 \$2" in
"shell am") head -c 65536 /dev/zero | tr '\0' x; exit 0 ;;
"shell stat") wc -c < $G/planted-static.hprof; head -c 65536 /dev/zero | tr '\0' x ;;
"pull "*) cp $G/planted-static.hprof "\$3" ;;
esac
exit 0
FAKE
chmod +x "$E2E_TMP/adb-chatty"
check "a chatty adb is drained, the dump completes" sh -c \
	"PORTHOLE_ADB='$E2E_TMP/adb-chatty' \
		timeout 300 '$P' heap dump --application-id com.example.chatty \
		--out '$E2E_TMP/chatty.hprof' > '$E2E_TMP/d' 2>&1; \
	 [ \$? -eq 1 ] && cmp -s '$E2E_TMP/chatty.hprof' $G/planted-static.hprof"
finish
