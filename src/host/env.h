/* SPDX-License-Identifier: Apache-2.0 */
/*
 * env.h: the host's environment variables, read in one place
 * (docs/cli.md, "Environment").
 *
 *   PORTHOLE_APPLICATION_ID        the app id (socket porthole.<id>)
 *   PORTHOLE_HOST, PORTHOLE_PORT   TCP instead of the abstract socket
 *                                  (port default 8677)
 *   PORTHOLE_PROJECT_ROOT          where sessions live and `where` looks;
 *                                  default: the current directory
 *   PORTHOLE_SESSIONS              0 writes no sessions
 *   PORTHOLE_SESSIONS_MAX_BYTES    retention by size (500 MB)
 *   PORTHOLE_SESSIONS_MAX_AGE_DAYS retention by age (7)
 */
#ifndef PH_HOST_ENV_H
#define PH_HOST_ENV_H

#include "ph_common.h"

#define PH_DEFAULT_PORT 8677

const char *ph_env_app_id(void); /* NULL when unset or empty */
const char *ph_env_host(void);	 /* NULL when unset or empty */
int ph_env_port(void);		 /* PORTHOLE_PORT or 8677 */
/* The project root, set explicitly (NULL when PORTHOLE_PROJECT_ROOT is
 * unset: then `where` stays absent). */
const char *ph_env_project_root(void);
/* Where sessions live: <root or cwd>/.porthole/sessions, into buf. */
const char *ph_env_sessions_dir(char *buf, size_t size);
bool ph_env_sessions_enabled(void);
uint64_t ph_env_sessions_max_bytes(void);
int64_t ph_env_sessions_max_age_ms(void);

/* "10m", "90s", "2h", "1500" (ms) -> ms; -1 when malformed. */
int64_t ph_parse_duration_ms(const char *s);

#endif
