/* SPDX-License-Identifier: Apache-2.0 */
/* capture.c: the capture file (see capture.h). */
#include "ph_common.h"
#include "capture.h"
#include "ph_error.h"
#include "io/io.h"

#include <fcntl.h>
#include <unistd.h>

static void write_app(const struct ph_analysis *a, struct ph_jw *jw)
{
	const struct ph_ident *id = &a->ident;

	ph_jw_key(jw, "app");
	ph_jw_obj_begin(jw);
	ph_jw_kv_str(jw, "packageName", id->package);
	if (id->process[0])
		ph_jw_kv_str(jw, "processName", id->process);
	if (id->version[0])
		ph_jw_kv_str(jw, "versionName", id->version);
	ph_jw_kv_str(jw, "deviceId", id->device_id);
	ph_jw_kv_str(jw, "device", id->device);
	ph_jw_kv_int(jw, "startedAt", id->started_at);
	ph_jw_obj_end(jw);
	ph_jw_key(jw, "device");
	ph_jw_obj_begin(jw);
	if (a->profile.model[0])
		ph_jw_kv_str(jw, "model", a->profile.model);
	if (a->profile.os[0])
		ph_jw_kv_str(jw, "os", a->profile.os);
	if (a->profile.refresh_hz > 0)
		ph_jw_kv_double(jw, "refreshHz", a->profile.refresh_hz);
	if (a->profile.cores > 0)
		ph_jw_kv_int(jw, "cores", a->profile.cores);
	ph_jw_obj_end(jw);
}

/*
 * "startups": each launch's class and its times from its origin; a time the
 * app did not report is left out.  Nothing when no launch was seen.
 */
static void write_startups(const struct ph_analysis *a, struct ph_jw *jw)
{
	if (!a->nlaunches)
		return;
	ph_jw_key(jw, "startups");
	ph_jw_arr_begin(jw);
	for (size_t i = 0; i < a->nlaunches; i++) {
		const struct ph_launch *l = &a->launches[i];

		ph_jw_obj_begin(jw);
		ph_jw_kv_int(jw, "t", l->t);
		ph_jw_kv_str(jw, "classification", l->cls ? l->cls : "");
		ph_jw_kv_int(jw, "originMs", l->origin);
		if (l->first_frame >= 0 && l->origin >= 0)
			ph_jw_kv_int(jw, "firstFrameMs",
				     l->first_frame - l->origin);
		if (l->fully_drawn >= 0 && l->origin >= 0)
			ph_jw_kv_int(jw, "fullyDrawnMs",
				     l->fully_drawn - l->origin);
		ph_jw_obj_end(jw);
	}
	ph_jw_arr_end(jw);
}

void ph_capture_write(const struct ph_analysis *a,
		      const struct ph_capture_info *info, struct ph_jw *jw)
{
	int64_t from = a->window.from != INT64_MIN ? a->window.from :
						     a->first_t;
	int64_t to = a->window.to != INT64_MAX ? a->window.to : a->last_t;

	ph_jw_obj_begin(jw);
	ph_jw_kv_str(jw, "format", PH_CAPTURE_FORMAT);
	ph_jw_kv_int(jw, "version", PH_CAPTURE_VERSION);
	ph_jw_kv_str(jw, "scenario",
		     info->scenario ? info->scenario : "unnamed");
	ph_jw_kv_str(jw, "driver", info->driver ? info->driver : "unknown");
	write_app(a, jw);
	ph_jw_key(jw, "window");
	ph_jw_obj_begin(jw);
	ph_jw_kv_int(jw, "from", from);
	ph_jw_kv_int(jw, "to", to);
	ph_jw_kv_int(jw, "durationMs", to > from ? to - from : 0);
	ph_jw_obj_end(jw);
	if (a->clipped_ms > 0)
		ph_jw_kv_int(jw, "clippedMs", a->clipped_ms);
	if (info->argv) {
		ph_jw_key(jw, "command");
		ph_jw_obj_begin(jw);
		ph_jw_key(jw, "argv");
		ph_jw_arr_begin(jw);
		for (size_t i = 0; info->argv[i]; i++)
			ph_jw_str(jw, info->argv[i]);
		ph_jw_arr_end(jw);
		ph_jw_kv_int(jw, "exitStatus", info->exit_status);
		ph_jw_obj_end(jw);
	}
	if (info->never_connected)
		ph_jw_kv_bool(jw, "connected", false);
	ph_jw_key(jw, "metrics");
	ph_jw_obj_begin(jw);
	for (int m = 0; m < PH_M_COUNT; m++) {
		if (!a->metric_set[m])
			continue;
		ph_jw_key(jw, ph_metric_name(m));
		if (a->metric[m] == (double)(int64_t)a->metric[m])
			ph_jw_int(jw, (int64_t)a->metric[m]);
		else
			ph_jw_double(jw, a->metric[m]);
	}
	ph_jw_obj_end(jw);
	ph_analysis_write_findings(a, jw);
	ph_jw_key(jw, "marks");
	ph_jw_arr_begin(jw);
	for (size_t i = 0; i < a->nmarks; i++) {
		ph_jw_obj_begin(jw);
		ph_jw_kv_int(jw, "t", a->marks[i].t);
		ph_jw_kv_str(jw, "label",
			     a->marks[i].label ? a->marks[i].label : "");
		if (a->marks[i].detail)
			ph_jw_kv_str(jw, "detail", a->marks[i].detail);
		ph_jw_obj_end(jw);
	}
	ph_jw_arr_end(jw);
	write_startups(a, jw);
	ph_jw_key(jw, "counts");
	ph_jw_obj_begin(jw);
	for (int k = 1; k < PH_KIND_COUNT; k++)
		if (a->counts[k])
			ph_jw_kv_int(jw, ph_wire_kind_name(k),
				     (int64_t)a->counts[k]);
	if (a->counts[PH_KIND_UNKNOWN])
		ph_jw_kv_int(jw, "other", (int64_t)a->counts[PH_KIND_UNKNOWN]);
	ph_jw_obj_end(jw);
	ph_jw_key(jw, "lanes");
	ph_jw_arr_begin(jw);
	for (size_t i = 0; i < a->nlanes; i++) {
		const struct ph_lane_item *l = &a->lanes[i];

		ph_jw_obj_begin(jw);
		ph_jw_kv_str(jw, "lane", ph_lane_name(l->lane));
		ph_jw_kv_int(jw, "from", l->from);
		ph_jw_kv_int(jw, "to", l->to);
		ph_jw_kv_str(jw, "label", l->label);
		ph_jw_kv_int(jw, "level", l->level);
		ph_jw_obj_end(jw);
	}
	ph_jw_arr_end(jw);
	ph_jw_key(jw, "source");
	ph_jw_obj_begin(jw);
	ph_jw_kv_int(jw, "events", (int64_t)a->metric[PH_M_EVENTS]);
	ph_jw_kv_int(jw, "malformed", (int64_t)a->malformed);
	ph_jw_kv_int(jw, "dropped", (int64_t)a->dropped);
	ph_jw_kv_int(jw, "gaps", (int64_t)a->gaps);
	if (a->repaired)
		ph_jw_kv_int(jw, "repaired", (int64_t)a->repaired);
	if (a->nissues) /* the first lines skipped or repaired, where */
		ph_ingest_write_issues(a->issues, a->nissues, jw);
	ph_jw_obj_end(jw);
	if (info->io) {
		ph_jw_key(jw, "io");
		ph_io_write_capture(info->io, PH_CAPTURE_IO_SPANS, jw);
	}
	ph_jw_obj_end(jw);
}

int ph_capture_save(const struct ph_analysis *a,
		    const struct ph_capture_info *info, const char *path)
{
	struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_jw jw;
	char tmp[4200];
	int fd, rc;

	ph_jw_init(&jw, &b);
	ph_capture_write(a, info, &jw);
	rc = ph_jw_finish(&jw);
	if (!rc)
		rc = ph_buf_addch(&b, '\n');
	if (rc)
		goto out;
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = ph_error(PH_EIO, "%s: %s", tmp, strerror(errno));
		goto out;
	}
	for (size_t off = 0; off < b.len;) {
		ssize_t w = write(fd, b.buf + off, b.len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = ph_error(PH_EIO, "%s: %s", tmp, strerror(errno));
			close(fd);
			unlink(tmp);
			goto out;
		}
		off += (size_t)w;
	}
	if (close(fd) || rename(tmp, path)) {
		rc = ph_error(PH_EIO, "%s: %s", path, strerror(errno));
		unlink(tmp);
	}
out:
	ph_buf_release(&b);
	return rc;
}

int ph_capture_parse(const char *name, const char *text, size_t len,
		     struct ph_arena *arena, const struct ph_json **out,
		     char *why, size_t why_size)
{
	struct ph_json *root = NULL;
	struct ph_err err;
	char msg[200];
	int64_t v;

	*out = NULL;
	if (ph_json_parse(arena, text, len, &root, &err)) {
		snprintf(why, why_size,
			 "%s is not a capture file: not JSON at %s", name,
			 ph_err_format(&err, msg, sizeof(msg)));
		return PH_ECORRUPT;
	}
	if (!ph_json_streq(ph_json_get(root, "format"), PH_CAPTURE_FORMAT)) {
		snprintf(why, why_size,
			 "%s is not a capture file: no \"format\":\"%s\"", name,
			 PH_CAPTURE_FORMAT);
		return PH_ECORRUPT;
	}
	if (!ph_json_as_int(ph_json_get(root, "version"), &v) || v < 1 ||
	    v > PH_CAPTURE_VERSION) {
		snprintf(why, why_size,
			 "%s: capture version not supported (this porthole "
			 "reads version %d)",
			 name, PH_CAPTURE_VERSION);
		return PH_ECORRUPT;
	}
	if (!ph_json_is(ph_json_get(root, "findings"), PH_JSON_ARRAY) ||
	    !ph_json_is(ph_json_get(root, "metrics"), PH_JSON_OBJECT)) {
		snprintf(why, why_size,
			 "%s: capture file lacks its findings or metrics",
			 name);
		return PH_ECORRUPT;
	}
	*out = root;
	return 0;
}

int ph_capture_load(const char *path, struct ph_arena *arena,
		    struct ph_buf *buf, const struct ph_json **out, char *why,
		    size_t why_size)
{
	int rc = ph_buf_read_file(buf, path);

	*out = NULL;
	if (rc) {
		snprintf(why, why_size, "%s: %s", path,
			 rc == PH_ENOENT ? "no such file" : strerror(errno));
		return rc;
	}
	return ph_capture_parse(path, buf->buf, buf->len, arena, out, why,
				why_size);
}
