/* SPDX-License-Identifier: Apache-2.0 */
/*
 * porthole_noop.h: the bodies porthole.h uses for release builds.
 *
 * The same functions with the same signatures as porthole.h declares, as
 * empty static inline bodies, so an app keeps its porthole_* calls in the
 * source and a release build compiles them to nothing.  porthole.h includes
 * this file in place of its declarations when PORTHOLE_DISABLED is
 * defined; the types stay in porthole.h.  tests/e2e/api_surface.sh checks
 * that the two declare the same surface.
 */
#ifndef PORTHOLE_NOOP_H
#define PORTHOLE_NOOP_H

#ifndef PORTHOLE_H
#error "include porthole.h (with PORTHOLE_DISABLED defined), not this file"
#endif

static inline const char *porthole_strerror(enum porthole_status status)
{
	(void)status;
	return NULL;
}

static inline const char *porthole_version(void)
{
	return PORTHOLE_VERSION;
}

static inline enum porthole_status
porthole_start_sized(const struct porthole_config *config, size_t config_size,
		     int debug_build)
{
	(void)config;
	(void)config_size;
	(void)debug_build;
	return PORTHOLE_ERR_NOT_DEBUG;
}

static inline enum porthole_status
porthole_start_build(const struct porthole_config *config, int debug_build)
{
	(void)config;
	(void)debug_build;
	return PORTHOLE_ERR_NOT_DEBUG;
}

static inline enum porthole_status
porthole_start(const struct porthole_config *config)
{
	(void)config;
	return PORTHOLE_ERR_NOT_DEBUG;
}

static inline void porthole_stop(void)
{
}

static inline const char *porthole_socket_name(void)
{
	return NULL;
}

static inline void porthole_main_loop_register(void)
{
}

static inline void porthole_main_loop_ping(void)
{
}

static inline void porthole_mark(const char *label, const char *detail)
{
	(void)label;
	(void)detail;
}

static inline uint64_t porthole_span_begin(const char *name)
{
	(void)name;
	return 0;
}

static inline void porthole_span_end(uint64_t span)
{
	(void)span;
}

static inline void porthole_log(enum porthole_level level, const char *tag,
				const char *fmt, ...)
{
	(void)level;
	(void)tag;
	(void)fmt;
}

static inline void porthole_log_str(enum porthole_level level, const char *tag,
				    const char *message)
{
	(void)level;
	(void)tag;
	(void)message;
}

static inline void porthole_frame_begin(void)
{
}

static inline void porthole_frame_phase(enum porthole_frame_phase phase)
{
	(void)phase;
}

static inline void porthole_frame_end(void)
{
}

static inline void porthole_recompose(const char *id, const char *name,
				      const char *screen,
				      const char *const *triggered_by,
				      size_t n_triggered)
{
	(void)id;
	(void)name;
	(void)screen;
	(void)triggered_by;
	(void)n_triggered;
}

static inline void porthole_state_write(const char *key)
{
	(void)key;
}

static inline void porthole_nav(enum porthole_nav_op op, const char *route,
				const char *label, const char *args,
				const char *deep_link, int depth)
{
	(void)op;
	(void)route;
	(void)label;
	(void)args;
	(void)deep_link;
	(void)depth;
}

static inline void porthole_lifecycle(enum porthole_lifecycle event,
				      const char *screen, bool restored)
{
	(void)event;
	(void)screen;
	(void)restored;
}

static inline void porthole_report_fully_drawn(void)
{
}

static inline void porthole_device_rotation(int degrees)
{
	(void)degrees;
}

static inline void porthole_device_theme(bool dark)
{
	(void)dark;
}

static inline void porthole_device_font_scale(double scale)
{
	(void)scale;
}

static inline void porthole_work_start(const char *work_id, const char *name,
				       int attempt, const char *tags)
{
	(void)work_id;
	(void)name;
	(void)attempt;
	(void)tags;
}

static inline void porthole_work_end(const char *work_id, int attempt,
				     enum porthole_work_state state,
				     const char *error)
{
	(void)work_id;
	(void)attempt;
	(void)state;
	(void)error;
}

static inline void porthole_input(enum porthole_input_action action, float x,
				  float y, int64_t event_uptime_ms,
				  const char *target)
{
	(void)action;
	(void)x;
	(void)y;
	(void)event_uptime_ms;
	(void)target;
}

static inline uint64_t porthole_http_start(const char *method, const char *url)
{
	(void)method;
	(void)url;
	return 0;
}

static inline void porthole_http_end(uint64_t call, int status,
				     const char *error)
{
	(void)call;
	(void)status;
	(void)error;
}

static inline uint64_t porthole_db_start(const char *sql, const char *args,
					 bool write)
{
	(void)sql;
	(void)args;
	(void)write;
	return 0;
}

static inline void porthole_db_end(uint64_t query, int64_t rows,
				   const char *error)
{
	(void)query;
	(void)rows;
	(void)error;
}

static inline enum porthole_status porthole_sqlite_attach(struct sqlite3 *db)
{
	(void)db;
	return PORTHOLE_ERR_NOT_DEBUG;
}

static inline enum porthole_status porthole_curl_attach(void *curl,
							bool capture_bodies)
{
	(void)curl;
	(void)capture_bodies;
	return PORTHOLE_ERR_NOT_DEBUG;
}

static inline void porthole_set_semantics_provider(porthole_semantics_fn fn,
						   void *ctx)
{
	(void)fn;
	(void)ctx;
}

static inline void porthole_sem_begin(struct porthole_sem *tree,
				      const struct porthole_sem_node *node)
{
	(void)tree;
	(void)node;
}

static inline void porthole_sem_end(struct porthole_sem *tree)
{
	(void)tree;
}

static inline void porthole_set_screenshot_provider(porthole_screenshot_fn fn,
						    void *ctx)
{
	(void)fn;
	(void)ctx;
}

#endif
