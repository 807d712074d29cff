/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_exit_record: an earlier process's exit record and its state file
 * (src/agent/collectors/exits.c writes them; a process killed mid-write,
 * or anyone who can write the data dir, leaves any bytes) through the
 * agent's reader at start, exit_report.c: why it died, a crash's stack
 * symbolized from its module list, the merge into exit-<pid>.seen, and
 * the `exits` and `exit_trace` answers over what it wrote.
 *
 * The input is the record, then a form feed (0x0c), then the state file;
 * without a form feed there is no state file (a process killed before
 * its first).  Both go into a fresh data dir as exit-4242.rec and
 * exit-4242.state.  The kernel log is not read (ph_exits_report_dir):
 * its lines change under the fuzzer and a run must replay.
 *
 * Checks, beyond "no crash, no leak, no undefined behaviour": the exit
 * event is one that encodes to valid JSON (the project's reader); the
 * record ends as exit-4242.seen with no .rec or .state left, or, past the
 * reader's cap, stays where it was; `exits` before and after the report
 * is valid JSON listing the one record; `exit_trace` for that record's
 * timestamp is valid JSON and finds it.
 */
#include "ph_common.h"
#include "ph_json.h"
#include "ph_log.h"
#include "agent/collectors/collectors.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#define REC_MAX (256 * 1024) /* exit_report.c's cap on a record */

static char dir[64];

static void empty_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[400];

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
}

static void remove_dir(void)
{
	empty_dir();
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "/tmp/ph-fuzz-exit.XXXXXX");
	if (!mkdtemp(dir))
		abort();
	atexit(remove_dir);
	/* What `exits` and `exit_trace` read: the agent's data dir. */
	snprintf(ph_agent.data_dir, sizeof(ph_agent.data_dir), "%s", dir);
	ph_agent.pid = 0; /* no process's: every record is an earlier one's */
	ph_log_set_level(PH_LOG_ERROR); /* the refusals' warnings */
	return 0;
}

static void put_file(const char *name, const uint8_t *data, size_t n)
{
	char path[400];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (n && write(fd, data, n) != (ssize_t)n))
		abort();
	close(fd);
}

static bool exists(const char *name)
{
	char path[400];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

/* Parses out whole, or traps: what a method or the encoder wrote. */
static const struct ph_json *valid(struct ph_arena *a, const struct ph_buf *out)
{
	struct ph_json *v = NULL;

	if (ph_json_parse(a, out->buf, out->len, &v, NULL))
		__builtin_trap(); /* not JSON */
	return v;
}

/* The exit event, as the writer would send it. */
static void check_event(const struct ph_rec *r, void *ctx)
{
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_arena a;
	int *events = ctx;

	ph_arena_init(&a, 0, (size_t)16 << 20);
	if (ph_encode_event(r, 1, &out))
		__builtin_trap(); /* a record its own encoder refuses */
	if (!ph_json_get(valid(&a, &out), "data"))
		__builtin_trap();
	(*events)++;
	ph_arena_release(&a);
	ph_buf_release(&out);
}

/* `exits`: valid JSON listing one record; its timestamp, or -1. */
static int64_t check_exits(struct ph_arena *a, bool reported)
{
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	const struct ph_json *list, *one;
	struct ph_jw w;
	int64_t ts = -1;

	ph_jw_init(&w, &out);
	if (ph_collectors_exits(&w) || ph_jw_finish(&w))
		__builtin_trap();
	list = ph_json_get(valid(a, &out), "exits");
	one = ph_json_at(list, 0);
	if (!one || ph_json_at(list, 1) ||
	    ph_json_is(ph_json_get(one, "reported"), PH_JSON_TRUE) != reported)
		__builtin_trap(); /* not the one record, as it stands */
	if (!ph_json_as_int(ph_json_get(one, "timestamp"), &ts))
		__builtin_trap();
	ph_buf_release(&out);
	return ts;
}

/* `exit_trace` for the listed timestamp: valid JSON, and found. */
static void check_trace(struct ph_arena *a, int64_t ts)
{
	struct ph_buf out = PH_BUF_INIT(PH_BUF_NO_CAP);
	struct ph_json *params = NULL;
	const struct ph_json *found;
	char req[64];
	struct ph_jw w;

	snprintf(req, sizeof(req), "{\"timestamp\":%lld}", (long long)ts);
	if (ph_json_parse(a, req, strlen(req), &params, NULL))
		__builtin_trap();
	ph_jw_init(&w, &out);
	if (ph_collectors_exit_trace(params, &w) || ph_jw_finish(&w))
		__builtin_trap();
	found = ph_json_get(valid(a, &out), "found");
	/* a negative timestamp is refused; any other is the record's */
	if (ph_json_is(found, PH_JSON_TRUE) != (ts >= 0))
		__builtin_trap();
	ph_buf_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *ff = memchr(data, '\f', size);
	size_t rec_len = ff ? (size_t)(ff - data) : size;
	struct ph_arena a;
	int events = 0;
	int64_t ts;

	empty_dir();
	put_file("exit-4242.rec", data, rec_len);
	if (ff)
		put_file("exit-4242.state", ff + 1, size - rec_len - 1);
	ph_arena_init(&a, 0, (size_t)64 << 20);
	if (rec_len <= REC_MAX)
		(void)check_exits(&a, false);
	ph_exits_report_dir(dir, 0, false, check_event, &events);
	if (rec_len > REC_MAX) {
		/* refused, and left for the next start */
		if (events || !exists("exit-4242.rec") ||
		    exists("exit-4242.seen"))
			__builtin_trap();
		goto out;
	}
	if (!exists("exit-4242.seen") || exists("exit-4242.rec") ||
	    exists("exit-4242.state") || events > 1)
		__builtin_trap(); /* not made whole, or reported twice */
	ts = check_exits(&a, true);
	check_trace(&a, ts);
out:
	ph_arena_release(&a);
	return 0;
}
