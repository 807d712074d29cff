#!/bin/sh
# porthole trace: stats, query and analyze on the real fixtures.
. tests/lib/e2e.sh
A12=$(fixture perfetto/perfetto_android12_cpuschedstack.pftrace)
SYS=$(fixture systrace/trace_input_blog_launcher_scroll.html.zip)

check stats-json sh -c "$BIN/porthole trace stats '$A12' --json | grep -q '\"sched\":23536'"
check stats-systrace sh -c "$BIN/porthole trace stats '$SYS' | grep -q '^slice  *4726$'"
check query-csv sh -c "$BIN/porthole trace query '$A12' 'SELECT COUNT(*) AS n FROM sched' --csv | tail -1 | grep -qx 23536"
check query-bad-sql sh -c "! $BIN/porthole trace query '$A12' 'SELEC nope' 2>/dev/null"
check missing-file sh -c "$BIN/porthole trace stats /nonexistent 2>/dev/null; [ \$? -eq 2 ]"
head -c 1000000 "$A12" > "$E2E_TMP/cut.pftrace"
check truncated-exit-1 sh -c "$BIN/porthole trace stats '$E2E_TMP/cut.pftrace' 2>&1 | grep -q 'stopped at byte'; $BIN/porthole trace stats '$E2E_TMP/cut.pftrace' >/dev/null 2>&1; [ \$? -eq 1 ]"
check analyze-frame-jank sh -c "$BIN/porthole trace analyze '$A12' --process com.android.systemui --out '$E2E_TMP/rep' >/dev/null && grep -q '\"id\":\"frame_jank\",[^]]*\"row_count\":[1-9]' '$E2E_TMP/rep/report.json' && grep -q 'Janky frames' '$E2E_TMP/rep/report.md'"
check analyze-twice sh -c "$BIN/porthole trace analyze '$A12' --process com.android.systemui --out '$E2E_TMP/rep2' >/dev/null"
check analyze-bad-set sh -c "$BIN/porthole trace analyze '$A12' --set nope=1 2>/dev/null; [ \$? -eq 2 ]"
check analyze-bad-type sh -c "$BIN/porthole trace analyze '$A12' --set main_thread_block.min_ms=abc 2>/dev/null; [ \$? -eq 2 ]"
finish
