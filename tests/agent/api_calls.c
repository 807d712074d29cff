/* SPDX-License-Identifier: Apache-2.0 */
/*
 * api_calls.c: calls every function of porthole.h once.  Compiled twice by
 * tests/e2e/agent_api.sh, against the real declarations and against
 * porthole_noop.h (-DPORTHOLE_DISABLED), so a function missing from either
 * fails to compile, and the release build is shown to compile to nothing.
 */
#include "porthole.h"

static void sem(struct porthole_sem *t, void *ctx)
{
	struct porthole_sem_node n = { .role = "Button" };

	(void)ctx;
	porthole_sem_begin(t, &n);
	porthole_sem_end(t);
}

static int shot(const uint8_t **px, int *w, int *h, bool *secure, void *ctx)
{
	(void)px;
	(void)w;
	(void)h;
	(void)secure;
	(void)ctx;
	return -1;
}

int main(void)
{
	const char *trig[] = { "k" };
	struct porthole_config cfg = { .app_id = "api.calls" };
	enum porthole_status st = porthole_start(&cfg);

	(void)porthole_start_build(&cfg, 0);
	(void)porthole_start_sized(&cfg, sizeof(cfg), 0);
	(void)porthole_strerror(st);
	(void)porthole_version();
	(void)porthole_socket_name();
	porthole_main_loop_register();
	porthole_main_loop_ping();
	porthole_mark("a", "b");
	porthole_span_end(porthole_span_begin("s"));
	porthole_log(PORTHOLE_INFO, "t", "%d", 1);
	porthole_log_str(PORTHOLE_INFO, "t", "m");
	porthole_frame_begin();
	porthole_frame_phase(PORTHOLE_PHASE_DRAW);
	porthole_frame_end();
	porthole_recompose("i", "n", "s", trig, 1);
	porthole_state_write("k");
	porthole_nav(PORTHOLE_NAV_PUSH, "r", "l", "a=1", "x://y", 2);
	porthole_lifecycle(PORTHOLE_SCREEN_CREATED, "S", false);
	porthole_report_fully_drawn();
	porthole_device_rotation(90);
	porthole_device_theme(true);
	porthole_device_font_scale(1.0);
	porthole_work_start("w", "n", 1, "t");
	porthole_work_end("w", 1, PORTHOLE_WORK_SUCCEEDED, NULL);
	porthole_input(PORTHOLE_INPUT_DOWN, 1, 2, 3, "t");
	porthole_http_end(porthole_http_start("GET", "http://x/"), 200, NULL);
	porthole_db_end(porthole_db_start("SELECT 1", NULL, false), 1, NULL);
	(void)porthole_sqlite_attach(NULL);
	(void)porthole_curl_attach(NULL, false);
	porthole_set_semantics_provider(sem, NULL);
	porthole_set_screenshot_provider(shot, NULL);
	porthole_stop();
	return 0;
}
