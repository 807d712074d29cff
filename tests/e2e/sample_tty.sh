# SPDX-License-Identifier: Apache-2.0
# porthole-sample's interactive mode on a real terminal (script(1) gives
# it a pty), recorded by a client: it lists its keys, each key does its
# thing (b blocks the main thread, l toggles the expensive layout, h makes
# an HTTP call), q quits with status 0, and no integration is reported
# unwired (curl is attached when its handle is made, not at first use).
. tests/lib/e2e.sh

T=$E2E_TMP
REC=build/tests/ph-record
(
	sleep 2.5
	printf b
	sleep 1.5
	printf l
	sleep 1
	printf lh
	sleep 1.5
	printf q
	sleep 1
) | PORTHOLE_ANNOUNCE=$T/announce script -qec \
	"$BIN/porthole-sample --app-id e2e.tty.$$ --data-dir $T/data" "$T/typescript" \
	> "$T/tty.out" 2>&1 &
SPID=$!
$REC --announce "$T/announce" --out "$T/rec.ndjson" --seconds 8
wait $SPID
RC=$?
check "q quits with status 0 (status $RC)" test "$RC" = 0
check "the keys are listed on the terminal" grep -q "keys: l layout .* b block 600 ms" "$T/typescript"
check "b: the planted stall, named" \
	grep -q '"event":"blocked",[^}]*"top":"apply_coupon_synchronously(' "$T/rec.ndjson"
check "l: late frames while the expensive layout is on" \
	grep -q '"event":"frame",.*"missedFrames":[1-9]' "$T/rec.ndjson"
check "h: the cart fetched through libcurl" \
	grep -q '"event":"http_end",.*/v1/cart/99001' "$T/rec.ndjson"
check "no integration is reported unwired" sh -c '! grep -q "not instrumented" "$0"' "$T/typescript"
finish
