/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ph_wire.h: the names of Porthole protocol v1, shared by agent and host.
 *
 * docs/protocol.md is the contract; this file is its vocabulary in C: the
 * event kinds (v1's and ours) and the data keys our agent writes, each as
 * a small integer so a record can name a field in one byte.  The host
 * reads events as JSON and uses ph_wire_kind() to classify them.
 */
#ifndef PH_WIRE_H
#define PH_WIRE_H

#include "ph_common.h"

#define PH_PROTOCOL_VERSION 1

/* Event kinds; the order is the wire's, the names are the protocol's. */
#define PH_KINDS(X)                             \
	X(RECOMPOSE, "recompose")               \
	X(STATE_WRITE, "state_write")           \
	X(FRAME, "frame")                       \
	X(NAV, "nav")                           \
	X(HTTP_START, "http_start")             \
	X(HTTP_END, "http_end")                 \
	X(DB_START, "db_start")                 \
	X(DB_END, "db_end")                     \
	X(LOG, "log")                           \
	X(LOG_APPEND, "log_append")             \
	X(MARK, "mark")                         \
	X(DEVICE, "device")                     \
	X(EXIT, "exit")                         \
	X(WORK_START, "work_start")             \
	X(WORK_END, "work_end")                 \
	X(BLOCKED, "blocked")                   \
	X(GC, "gc")                             \
	X(MEMORY, "memory")                     \
	X(STRICT_VIOLATION, "strict_violation") \
	X(STARTUP, "startup")                   \
	X(INPUT, "input")                       \
	X(LEAK, "leak")                         \
	X(IO, "io")                             \
	X(DROPPED, "dropped")                   \
	X(SPAN, "span")                         \
	X(IO_RECORDING, "io_recording")         \
	X(FULLY_DRAWN, "fully_drawn")

enum ph_kind {
	PH_KIND_UNKNOWN = 0,
#define X(id, name) PH_KIND_##id,
	PH_KINDS(X)
#undef X
		PH_KIND_COUNT
};

/* "db_end" for PH_KIND_DB_END; "unknown" for anything else. */
const char *ph_wire_kind_name(enum ph_kind kind);
/* The kind named by name[0..n), or PH_KIND_UNKNOWN. */
enum ph_kind ph_wire_kind(const char *name, size_t n);

/*
 * Data keys the agent writes.  One table, so a record names a field in a
 * byte and the encoder spells it once.
 */
#define PH_KEYS(X)                                     \
	X(ID, "id")                                    \
	X(NAME, "name")                                \
	X(SCREEN, "screen")                            \
	X(PASS, "pass")                                \
	X(TRIGGERED_BY, "triggeredBy")                 \
	X(ATTRIBUTION, "attribution")                  \
	X(SOURCE, "source")                            \
	X(KEYS, "keys")                                \
	X(NAMED, "named")                              \
	X(UNNAMED, "unnamed")                          \
	X(TOTAL_MS, "totalMs")                         \
	X(MISSED_FRAMES, "missedFrames")               \
	X(WORST_PHASE, "worstPhase")                   \
	X(FIRST_DRAW, "firstDraw")                     \
	X(PHASES, "phases")                            \
	X(BUDGET_MS, "budgetMs")                       \
	X(ROUTE, "route")                              \
	X(LABEL, "label")                              \
	X(ARGS, "args")                                \
	X(DEPTH, "depth")                              \
	X(DIRECTION, "direction")                      \
	X(DEEP_LINK, "deepLink")                       \
	X(METHOD, "method")                            \
	X(URL, "url")                                  \
	X(THREAD, "thread")                            \
	X(MAIN_THREAD, "mainThread")                   \
	X(ON_MAIN_THREAD, "onMainThread")              \
	X(PHASE, "phase")                              \
	X(ELAPSED_MS, "elapsedMs")                     \
	X(STATUS, "status")                            \
	X(REQUEST_BODY, "requestBody")                 \
	X(RESPONSE_BODY, "responseBody")               \
	X(DETAIL, "detail")                            \
	X(REUSED, "reused")                            \
	X(PROTOCOL, "protocol")                        \
	X(REQUEST_BYTES, "requestBytes")               \
	X(RESPONSE_BYTES, "responseBytes")             \
	X(CONNECT_ATTEMPTS, "connectAttempts")         \
	X(SQL, "sql")                                  \
	X(KIND, "kind")                                \
	X(RESULT, "result")                            \
	X(ERROR, "error")                              \
	X(ROWS, "rows")                                \
	X(INSERT_ID, "insertId")                       \
	X(CHANGES, "changes")                          \
	X(ERROR_CODE, "errorCode")                     \
	X(LEVEL, "level")                              \
	X(TAG, "tag")                                  \
	X(TID, "tid")                                  \
	X(PID, "pid")                                  \
	X(WALL_TIME, "wallTime")                       \
	X(MESSAGE, "message")                          \
	X(SEQ, "seq")                                  \
	X(TEXT, "text")                                \
	X(WORK_ID, "workId")                           \
	X(ATTEMPT, "attempt")                          \
	X(STATE, "state")                              \
	X(TAGS, "tags")                                \
	X(NEXT_ATTEMPT, "nextAttempt")                 \
	X(RETRYING, "retrying")                        \
	X(DURATION_MS, "durationMs")                   \
	X(TOP, "top")                                  \
	X(STACK, "stack")                              \
	X(ONGOING, "ongoing")                          \
	X(FRAMES, "frames")                            \
	X(COUNT, "count")                              \
	X(FIRST_SEQ, "firstSeq")                       \
	X(LAST_SEQ, "lastSeq")                         \
	X(SCOPE, "scope")                              \
	X(ACTION, "action")                            \
	X(X, "x")                                      \
	X(Y, "y")                                      \
	X(DOWN_T, "downT")                             \
	X(TARGET, "target")                            \
	X(HANDLED_AT, "handledAt")                     \
	X(START_T, "startT")                           \
	X(ROTATION_DEG, "rotation")                    \
	X(ORIENTATION, "orientation")                  \
	X(DARK_MODE, "darkMode")                       \
	X(FONT_SCALE, "fontScale")                     \
	X(MODEL, "model")                              \
	X(SDK_INT, "sdkInt")                           \
	X(ABI, "abi")                                  \
	X(CORES, "cores")                              \
	X(DEVICE_RAM_MB, "deviceRamMb")                \
	X(LOW_RAM_DEVICE, "lowRamDevice")              \
	X(REFRESH_HZ, "refreshHz")                     \
	X(LOCALE, "locale")                            \
	X(OS, "os")                                    \
	X(KERNEL, "kernel")                            \
	X(UPTIME_MS, "uptimeMs")                       \
	X(BOOT_MS, "bootMs")                           \
	X(WALL_MS, "wallMs")                           \
	X(SLEEP_MS, "sleepMs")                         \
	X(ACTIVITY, "activity")                        \
	X(RAW, "raw")                                  \
	X(CHANGE, "change")                            \
	X(BATTERY_PERCENT, "batteryPercent")           \
	X(TRANSPORT, "transport")                      \
	X(METERED, "metered")                          \
	X(ZONE, "zone")                                \
	X(TEMPERATURE_C, "temperatureC")               \
	X(STATUS_CODE, "statusCode")                   \
	X(HEAP_USED_MB, "heapUsedMb")                  \
	X(HEAP_MAX_MB, "heapMaxMb")                    \
	X(HEAP_PERCENT, "heapPercent")                 \
	X(NATIVE_MB, "nativeMb")                       \
	X(THREADS, "threads")                          \
	X(RSS_MB, "rssMb")                             \
	X(FDS, "fds")                                  \
	X(TOTAL_RAM_MB, "totalRamMb")                  \
	X(TRIGGER, "trigger")                          \
	X(NATIVE_RAM_MB, "nativeRamMb")                \
	X(MAJOR_FAULTS, "majorFaults")                 \
	X(MINOR_FAULTS, "minorFaults")                 \
	X(CLASSIFICATION, "classification")            \
	X(ORIGIN_MS, "originMs")                       \
	X(ORIGIN_ASSUMED, "originAssumed")             \
	X(ORIGIN_KIND, "originKind")                   \
	X(ON_CREATE_ENTRY_MS, "onCreateEntryMs")       \
	X(ON_CREATE_EXIT_MS, "onCreateExitMs")         \
	X(ACTIVITY_ON_CREATE_MS, "activityOnCreateMs") \
	X(ACTIVITY_ON_START_MS, "activityOnStartMs")   \
	X(ACTIVITY_ON_RESUME_MS, "activityOnResumeMs") \
	X(FIRST_FRAME_MS, "firstFrameMs")              \
	X(REPORT_FULLY_DRAWN_MS, "reportFullyDrawnMs") \
	X(DOMINANT_PHASE, "dominantPhase")             \
	X(RESTORED_STATE, "restoredState")             \
	X(FIRST_POST_MS, "firstPostMs")                \
	X(LAUNCH_INDEX, "launchIndex")                 \
	X(REASON, "reason")                            \
	X(IMPORTANCE, "importance")                    \
	X(TIMESTAMP, "timestamp")                      \
	X(PSS, "pss")                                  \
	X(RSS, "rss")                                  \
	X(DESCRIPTION, "description")                  \
	X(VERSION_NAME, "versionName")                 \
	X(VERSION_ASSUMED, "versionAssumed")           \
	X(MAIN_STACK, "mainStack")                     \
	X(OTHER_THREAD_COUNT, "otherThreadCount")      \
	X(OTHER_THREAD_STATES, "otherThreadStates")    \
	X(ELAPSED_NS, "elapsedNs")                     \
	X(REQUEST_HEADERS, "requestHeaders")           \
	X(RESPONSE_HEADERS, "responseHeaders")         \
	X(SIGNAL, "signal")                            \
	X(EXIT_STATUS, "exitStatus")                   \
	X(FAULT_ADDR, "faultAddr")                     \
	X(TAP_MS, "tapMs")                             \
	X(FRAME_T, "frameT")                           \
	X(PAUSED_MS, "pausedMs")

enum ph_key {
#define X(id, name) PH_KEY_##id,
	PH_KEYS(X)
#undef X
		PH_KEY_END
};

const char *ph_wire_key_name(enum ph_key key);
/*
 * The key as written in a JSON line, "name": with quotes and colon, and
 * its length: the agent's writer appends it as is (key names are plain
 * identifiers, so they never need escaping).
 */
const char *ph_wire_key_json(enum ph_key key, size_t *len);

#endif
