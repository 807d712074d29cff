/*
 * bench_ui.c: the live timeline's redraw cost (issue 6): the real server
 * serves the embedded page, headless Chromium loads 100,000 events into
 * it, pans and zooms, and the page times each redraw with performance.now()
 * (bench/ui_draw.mjs).  Budget: 16 ms, one frame at 60 Hz.
 */
#include "ph_common.h"
#include "host/live.h"
#include "ui/ui.h"

int main(void)
{
	struct ph_live lv;
	struct ph_ui_options o = { .port = 0, .root = "." };
	struct ph_ui *ui;
	char why[300], cmd[256], line[512];
	double median = -1, p95 = -1;
	FILE *p;
	int status;

	if (ph_live_init(&lv))
		return 1;
	o.live = &lv; /* not started: the page is fed synthetic events */
	ui = ph_ui_start(&o, why, sizeof(why));
	if (!ui) {
		fprintf(stderr, "bench-ui: %s\n", why);
		return 1;
	}
	snprintf(cmd, sizeof(cmd),
		 "node bench/ui_draw.mjs http://127.0.0.1:%d/", ph_ui_port(ui));
	p = popen(cmd, "r");
	while (p && fgets(line, sizeof(line), p)) {
		char *m = strstr(line, "\"median\":"),
		     *q = strstr(line, "\"p95\":");

		if (m && q) {
			median = strtod(m + 9, NULL);
			p95 = strtod(q + 6, NULL);
		}
	}
	status = p ? pclose(p) : -1;
	ph_ui_stop(ui);
	ph_live_release(&lv);
	if (status || median < 0) {
		fprintf(stderr,
			"bench-ui: %s failed (is chromium installed?)\n", cmd);
		return 1;
	}
	printf("{\"name\":\"ui_draw_ms_median_100k\",\"value\":%.3f,"
	       "\"unit\":\"ms\",\"budget\":16}\n",
	       median);
	printf("{\"name\":\"ui_draw_ms_p95_100k\",\"value\":%.3f,\"unit\":"
	       "\"ms\",\"budget\":16}\n",
	       p95);
	return median <= 16 && p95 <= 16 ? 0 : 1;
}
