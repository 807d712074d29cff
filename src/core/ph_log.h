/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ph_log.h: the one logger, for diagnostics only.
 *
 * Lines go to stderr (or the fd set with ph_log_set_fd) as one write(2)
 * each, prefixed "porthole: <level>: ", so lines from several threads never
 * interleave.  Nothing here ever writes to stdout: stdout belongs to a
 * command's output and to the MCP protocol.
 *
 * The agent points the logger at a dup of the original stderr before it
 * starts capturing the app's stderr, so its own lines never loop back into
 * the capture.  PORTHOLE_LOG=debug|info|warn|error sets the threshold
 * (default info).
 */
#ifndef PH_LOG_H
#define PH_LOG_H

#include "ph_common.h"

enum ph_log_level {
	PH_LOG_DEBUG,
	PH_LOG_INFO,
	PH_LOG_WARN,
	PH_LOG_ERROR,
};

void ph_log(enum ph_log_level level, const char *fmt, ...) PH_PRINTF(2, 3);
void ph_logv(enum ph_log_level level, const char *fmt, va_list ap)
	PH_PRINTF(2, 0);
void ph_log_set_fd(int fd);
int ph_log_fd(void);
void ph_log_set_level(enum ph_log_level level);
/* Replaces "porthole" in the prefix (e.g. "porthole-sample"); kept, not copied.
 */
void ph_log_set_name(const char *name);

#define ph_warn(...)  ph_log(PH_LOG_WARN, __VA_ARGS__)
#define ph_info(...)  ph_log(PH_LOG_INFO, __VA_ARGS__)
#define ph_debug(...) ph_log(PH_LOG_DEBUG, __VA_ARGS__)

#endif
