/* SPDX-License-Identifier: Apache-2.0 */
/* porthole sessions [--json]: what is recorded, newest first. */
#include "ph_common.h"
#include "cmd.h"
#include "ph_json.h"
#include "host/env.h"
#include "host/session.h"

extern const struct ph_cmd ph_cmd_sessions;

struct sessions_args {
	bool json;
};

static const struct ph_opt sessions_opts[] = {
	{ .name = "json",
	  .kind = PH_OPT_BOOL,
	  .offset = offsetof(struct sessions_args, json),
	  .help = "one JSON array of the sessions" },
	{ .kind = PH_OPT_END },
};

static int sessions_exec(int argc, char **argv)
{
	struct ph_session_info *v;
	struct sessions_args args = { 0 };
	struct ph_opt_args pa;
	char dir[4200];
	bool json;
	size_t n;
	int rc = ph_cmd_parse(&ph_cmd_sessions, &args, argc, argv, &pa);

	if (rc != PH_CMD_GO_ON)
		return rc;
	if (pa.npos)
		return ph_cmd_usage_error(&ph_cmd_sessions,
					  "unexpected argument %s", pa.pos[0]);
	json = args.json;
	ph_env_sessions_dir(dir, sizeof(dir));
	if (ph_sessions_list(dir, &v, &n)) {
		fprintf(stderr, "porthole sessions: cannot read %s\n", dir);
		return 2;
	}
	if (json) {
		struct ph_buf b = PH_BUF_INIT(PH_BUF_NO_CAP);
		struct ph_jw jw;

		ph_jw_init(&jw, &b);
		ph_jw_arr_begin(&jw);
		for (size_t i = 0; i < n; i++) {
			ph_jw_obj_begin(&jw);
			ph_jw_kv_str(&jw, "id", v[i].id);
			ph_jw_kv_str(&jw, "path", v[i].path);
			ph_jw_kv_int(&jw, "bytes", (int64_t)v[i].bytes);
			ph_jw_kv_bool(&jw, "mostRecent", i == 0);
			ph_jw_kv_bool(&jw, "recording", v[i].recording);
			if (v[i].meta_ok) {
				ph_jw_kv_int(&jw, "events",
					     (int64_t)v[i].events);
				ph_jw_kv_int(&jw, "firstT", v[i].first_t);
				ph_jw_kv_int(&jw, "lastT", v[i].last_t);
				ph_jw_kv_int(&jw, "malformed",
					     (int64_t)v[i].malformed);
				if (v[i].repaired)
					ph_jw_kv_int(&jw, "repaired",
						     (int64_t)v[i].repaired);
				if (v[i].nissues)
					ph_ingest_write_issues(
						v[i].issues, v[i].nissues, &jw);
			} else {
				ph_jw_kv_str(&jw, "note", v[i].note);
			}
			ph_jw_obj_end(&jw);
		}
		ph_jw_arr_end(&jw);
		if (!ph_jw_finish(&jw))
			printf("%s\n", b.buf);
		ph_buf_release(&b);
		free(v);
		return 0;
	}
	if (!n)
		printf("no sessions in %s\n", dir);
	for (size_t i = 0; i < n; i++) {
		printf("%s %s  %.1f s  %" PRIu64 " events  %.1f KB%s",
		       i ? " " : "*", v[i].id,
		       v[i].meta_ok ?
			       (double)(v[i].last_t - v[i].first_t) / 1000 :
			       0.0,
		       v[i].events, (double)v[i].bytes / 1024,
		       v[i].recording ? "  (recording)" : "");
		if (!v[i].meta_ok)
			printf("  [%s]", v[i].note);
		printf("\n");
	}
	free(v);
	return 0;
}

const struct ph_cmd ph_cmd_sessions = {
	.name = "sessions",
	.summary = "list recorded sessions, newest first",
	.opts = sessions_opts,
	.about = "'*' marks the most recently active session",
	.flags = PH_CMD_QUIET_SIGPIPE,
	.exec = sessions_exec,
};
