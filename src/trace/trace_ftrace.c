/* SPDX-License-Identifier: Apache-2.0 */
/*
 * trace_ftrace.c: ftrace text (tracefs `trace` / `trace_pipe`, the Linux
 * kernel's Documentation/trace/ftrace.rst "Output format"), Android systrace
 * HTML, and the file-level loader (zip, gzip, format sniffing).
 *
 * One event per line:
 *
 *   FIELD        EXAMPLE              DESCRIPTION
 *   TASK-PID     `  surfaceflinger-598` comm (may hold spaces and '-'),
 *                                     '-', the tid; `<...>` = comm unknown
 *   (TGID)       `(  598)` `(-----)`  optional (options/record-tgid)
 *   [CPU]        `[004]`              CPU number, decimal
 *   FLAGS        `d..2` `d.s4.`       optional (options/irq-info)
 *   TIMESTAMP    `10852.771242:`      seconds '.' fraction (usually us)
 *   EVENT        `sched_switch:`      the event name
 *   ARGS         `prev_comm=...`      the event's printk format
 *
 * binder (the kernel's include/trace/events/binder.h):
 *   binder_transaction: transaction=N dest_node=N dest_proc=N dest_thread=N
 *     reply=0|1 flags=0xN code=0xN     a call (reply=0) or a reply sent
 *   binder_transaction_received: transaction=N   the same N taken by the
 *                                                 receiving thread
 *
 * Lines starting with '#' are comments; `# trace_clock: mono` (written by
 * porthole trace record) names the clock.  trace_pipe's `CPU:N [LOST M
 * EVENTS]` adds M to ftrace_text_lost_events.  Lines that do not parse are
 * counted (ftrace_text_unparsed_lines), never fatal: a print can hold
 * newlines, which tracefs writes as they are.
 *
 * Systrace HTML: the ftrace text and the process dump sit in
 * `<script class="trace-data" type="application/text">` blocks.
 * Zip (APPNOTE.TXT 4.3): the end-of-central-directory record (0x06054b50)
 * gives the central directory; its first entry (0x02014b50: method at +10,
 * compressed size +20, local header offset +42) points to a local header
 * (0x04034b50, 30 bytes + name + extra) followed by the deflated data.
 */
#include "ph_common.h"
#include "ph_inflate.h"
#include "trace/trace.h"
#include "trace/trace_int.h"

#include <ctype.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *find(const char *p, const char *end, const char *needle,
			size_t n)
{
	if (p >= end)
		return NULL;
	return memmem(p, (size_t)(end - p), needle, n);
}
#define FIND(p, end, lit) find((p), (end), lit, sizeof(lit) - 1)

static bool num(const char *p, const char *end, int64_t *out)
{
	int64_t v = 0;
	bool neg = false, any = false;

	while (p < end && *p == ' ')
		p++;
	if (p < end && *p == '-') {
		neg = true;
		p++;
	}
	while (p < end && *p >= '0' && *p <= '9' && v < INT64_MAX / 10 - 10) {
		v = v * 10 + (*p++ - '0');
		any = true;
	}
	*out = neg ? -v : v;
	return any;
}

/* The value of `key=` (key given with its '='), up to the next space. */
static bool kv_num(const char *a, const char *end, const char *key,
		   int64_t *out)
{
	const char *p = find(a, end, key, strlen(key));

	return p && num(p + strlen(key), end, out);
}

/* A prev_state such as "S", "R+", "D|K" as the state string we store. */
static uint32_t text_state(struct ph_trace *t, const char *p, size_t n)
{
	char s[16];
	size_t k = 0;

	for (size_t i = 0; i < n && k < sizeof(s) - 1; i++)
		if (p[i] != '|')
			s[k++] = p[i];
	if (!k)
		s[k++] = 'R';
	return ph_trace_intern(t, s, k);
}

static void ev_switch(struct ph_trace *t, struct ph_tev *e, const char *a,
		      const char *end)
{
	const char *pc = FIND(a, end, "prev_comm="), *pp, *ps, *arrow, *nc, *np;
	int64_t v;

	e->kind = PH_EV_SWITCH;
	if (!pc || !(pp = FIND(pc, end, " prev_pid=")) ||
	    !(ps = FIND(pp, end, " prev_state=")) ||
	    !(arrow = FIND(ps, end, " ==> ")) ||
	    !(nc = FIND(arrow, end, "next_comm=")) ||
	    !(np = FIND(nc, end, " next_pid="))) {
		e->kind = 0xff;
		return;
	}
	e->s1 = ph_trace_intern(t, pc + 10, (size_t)(pp - pc - 10));
	num(pp + 10, end, &v);
	e->a = (int32_t)v;
	e->v.d =
		-1 - (int64_t)text_state(t, ps + 12, (size_t)(arrow - ps - 12));
	e->s2 = ph_trace_intern(t, nc + 10, (size_t)(np - nc - 10));
	num(np + 10, end, &v);
	e->b = (int32_t)v;
	if (kv_num(np, end, "next_prio=", &v))
		e->c = (int32_t)v;
}

static void ev_wake(struct ph_trace *t, struct ph_tev *e, const char *a,
		    const char *end)
{
	const char *c = FIND(a, end, "comm="), *p;
	int64_t v;

	if (!c || !(p = FIND(c, end, " pid="))) {
		e->kind = 0xff;
		return;
	}
	e->s1 = ph_trace_intern(t, c + 5, (size_t)(p - c - 5));
	num(p + 5, end, &v);
	e->a = (int32_t)v;
	if (kv_num(p, end, "target_cpu=", &v))
		e->b = (int32_t)v;
}

static void line(struct ph_trace *t, const char *s, const char *end)
{
	const char *p = s, *br, *q, *ev, *evend, *args;
	int64_t tid = -1, tgid = -1, cpu, sec = 0, frac = 0;
	int digits = 0;
	struct ph_tev *e;
	size_t evn;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p >= end)
		return;
	if (*p == '#') {
		const char *c = FIND(p, end, "trace_clock:");

		if (c) {
			c += 12;
			while (c < end && *c == ' ')
				c++;
			ph_trace_meta(t, "trace_clock", NULL, 0);
			t->clock_stated = true;
			t->clock_name = ph_trace_str(
				t, ph_trace_intern(t, c, (size_t)(end - c)));
			if ((size_t)(end - c) == 4 && !memcmp(c, "mono", 4))
				t->trace_clock = PH_CLK_MONOTONIC;
			else if ((size_t)(end - c) == 4 &&
				 !memcmp(c, "boot", 4))
				t->trace_clock = PH_CLK_BOOTTIME;
		}
		return;
	}
	/* trace_pipe's "CPU:N [LOST M EVENTS]": the ring buffer overran
	 * before the reader took M events of CPU N */
	if (end - p > 4 && !memcmp(p, "CPU:", 4) &&
	    (q = FIND(p, end, " [LOST ")) != NULL) {
		int64_t m = 0;

		for (q += 7;
		     q < end && *q >= '0' && *q <= '9' && m < INT64_MAX / 10;
		     q++)
			m = m * 10 + (*q - '0');
		if (end - q >= 8 && !memcmp(q, " EVENTS]", 8)) {
			ph_trace_stat(t, "ftrace_text_lost_events", m);
			return;
		}
	}
	/* the CPU: the first "[ddd]" preceded by a space */
	for (br = p; (br = memchr(br, '[', (size_t)(end - br))); br++) {
		if (br > p && br[-1] == ' ' && br + 1 < end && br[1] >= '0' &&
		    br[1] <= '9')
			break;
	}
	if (!br)
		goto bad;
	/* TASK-PID [(TGID)] before it */
	q = br - 1;
	while (q > p && *q == ' ')
		q--;
	if (*q == ')') {
		const char *o = q;

		while (o > p && *o != '(')
			o--;
		if (*o == '(')
			num(o + 1, q, &tgid);
		if (o <= p)
			goto bad;
		if (o[1] == '-')
			tgid = -1;
		q = o - 1;
		while (q > p && *q == ' ')
			q--;
	}
	{
		const char *d = q;

		while (d > p && *d >= '0' && *d <= '9')
			d--;
		if (*d != '-' || !num(d + 1, q + 1, &tid))
			goto bad;
	}
	if (!num(br + 1, end, &cpu) || cpu < 0 || cpu >= 4096)
		goto bad;
	q = memchr(br, ']', (size_t)(end - br));
	if (!q)
		goto bad;
	q++;
	/* [FLAGS] TIMESTAMP: */
	for (int tok = 0; tok < 2; tok++) {
		const char *c;

		while (q < end && *q == ' ')
			q++;
		c = q;
		while (c < end && *c != ' ')
			c++;
		if (c > q && c[-1] == ':' && *q >= '0' && *q <= '9')
			break;
		q = c;
	}
	while (q < end && *q >= '0' && *q <= '9' && sec < 1000000000000)
		sec = sec * 10 + (*q++ - '0');
	if (q < end && *q == '.')
		for (q++; q < end && *q >= '0' && *q <= '9'; q++)
			if (digits < 9) {
				frac = frac * 10 + (*q - '0');
				digits++;
			}
	if (q >= end || *q != ':' || sec > INT64_MAX / 1000000000 - 1)
		goto bad;
	for (int d = digits; d < 9; d++)
		frac *= 10;
	ev = q + 1;
	while (ev < end && *ev == ' ')
		ev++;
	evend = memchr(ev, ':', (size_t)(end - ev));
	if (!evend)
		goto bad;
	evn = (size_t)(evend - ev);
	args = evend + 1;
	if (args < end && *args == ' ')
		args++;
	if (tgid > 0 && tid > 0)
		ph_trace_thread_set_pid(t, ph_trace_utid(t, tid), tgid);

#define IS(lit) (evn == sizeof(lit) - 1 && !memcmp(ev, lit, evn))
	{
		/* stat names are literals: ph_trace_stat caches by pointer */
		static const char *const known[][2] = {
			{ "sched_switch", "ftrace.sched_switch" },
			{ "sched_waking", "ftrace.sched_waking" },
			{ "sched_wakeup", "ftrace.sched_wakeup" },
			{ "sched_wakeup_new", "ftrace.sched_wakeup_new" },
			{ "sched_blocked_reason",
			  "ftrace.sched_blocked_reason" },
			{ "tracing_mark_write", "ftrace.print" },
			{ "print", "ftrace.print" },
			{ "cpu_frequency", "ftrace.cpu_frequency" },
			{ "cpu_idle", "ftrace.cpu_idle" },
			{ "sched_process_exit", "ftrace.sched_process_exit" },
			{ "sched_process_free", "ftrace.sched_process_free" },
			{ "task_newtask", "ftrace.task_newtask" },
			{ "task_rename", "ftrace.task_rename" },
			{ "block_rq_issue", "ftrace.block_rq_issue" },
			{ "block_rq_complete", "ftrace.block_rq_complete" },
			{ "thermal_temperature", "ftrace.thermal_temperature" },
			{ "cdev_update", "ftrace.cdev_update" },
			{ "binder_transaction", "ftrace.binder_transaction" },
			{ "binder_transaction_received",
			  "ftrace.binder_transaction_received" },
		};
		const char *stat = "ftrace.other";

		for (size_t i = 0; i < PH_ARRAY_SIZE(known); i++)
			if (strlen(known[i][0]) == evn &&
			    !memcmp(ev, known[i][0], evn)) {
				stat = known[i][1];
				break;
			}
		ph_trace_stat(t, stat, 1);
		if (!strcmp(stat, "ftrace.other") || IS("block_rq_issue") ||
		    IS("block_rq_complete"))
			return;
	}
	if (IS("thermal_temperature") || IS("cdev_update")) {
		/* thermal_zone=NAME id=N temp_prev=N temp=N;
		 * type=NAME target=N */
		bool cdev = IS("cdev_update");
		const char *k = cdev ? FIND(args, end, "type=") :
				       FIND(args, end, "thermal_zone="),
			   *ke;
		int64_t v;

		if (!k || !kv_num(k, end, cdev ? " target=" : " temp=", &v)) {
			ph_trace_stat(t, "ftrace_text_bad_args", 1);
			return;
		}
		k += cdev ? 5 : 13;
		for (ke = k; ke < end && *ke != ' '; ke++)
			;
		ph_trace_thermal(t, sec * 1000000000 + frac, k,
				 (size_t)(ke - k), cdev, (double)v);
		return;
	}
	e = ph_trace_push(t);
	if (!e)
		return;
	e->ts = sec * 1000000000 + frac;
	e->cpu = (uint16_t)cpu;
	if (IS("sched_switch")) {
		ev_switch(t, e, args, end);
	} else if (IS("sched_waking") || IS("sched_wakeup") ||
		   IS("sched_wakeup_new")) {
		e->kind = IS("sched_waking") ? PH_EV_WAKING :
			  IS("sched_wakeup") ? PH_EV_WAKEUP :
					       PH_EV_WAKEUP_NEW;
		ev_wake(t, e, args, end);
		e->c = (int32_t)tid;
	} else if (IS("sched_blocked_reason")) {
		const char *c = FIND(args, end, "caller=");
		int64_t v = 0;

		e->kind = PH_EV_BLOCKED;
		kv_num(args, end, "pid=", &v);
		e->a = (int32_t)v;
		v = 0;
		kv_num(args, end, "iowait=", &v);
		e->b = (int32_t)v;
		if (c) {
			const char *ce = c + 7;

			while (ce < end && *ce != ' ' && *ce != '+')
				ce++;
			e->s1 = ph_trace_intern(t, c + 7, (size_t)(ce - c - 7));
		}
	} else if (IS("tracing_mark_write") || IS("print")) {
		e->kind = PH_EV_PRINT;
		e->a = (int32_t)tid;
		/* the kernel's print adds "<ip>: " before the text sometimes */
		e->s1 = ph_trace_intern(t, args, (size_t)(end - args));
	} else if (IS("cpu_frequency") || IS("cpu_idle")) {
		int64_t st = 0, c = 0;

		e->kind = IS("cpu_frequency") ? PH_EV_CPUFREQ : PH_EV_CPUIDLE;
		kv_num(args, end, "state=", &st);
		kv_num(args, end, "cpu_id=", &c);
		e->v.d = st;
		e->cpu = (uint16_t)(c >= 0 && c < 4096 ? c : 0);
	} else if (IS("sched_process_exit") || IS("sched_process_free")) {
		int64_t v = 0;

		e->kind = IS("sched_process_exit") ? PH_EV_EXIT : PH_EV_FREE;
		kv_num(args, end, " pid=", &v);
		e->a = (int32_t)v;
		e->b = -1;
	} else if (IS("task_newtask")) {
		const char *c = FIND(args, end, "comm="), *cf;
		int64_t v = 0;

		e->kind = PH_EV_NEWTASK;
		kv_num(args, end, "pid=", &v);
		e->a = (int32_t)v;
		e->b = (int32_t)tid;
		cf = c ? FIND(c, end, " clone_flags=") : NULL;
		if (c && cf) {
			e->s1 = ph_trace_intern(t, c + 5, (size_t)(cf - c - 5));
			e->v.d = (int64_t)strtoull(cf + 13, NULL, 16);
		}
	} else if (IS("binder_transaction")) {
		int64_t id, reply, flags = 0;
		const char *f = FIND(args, end, " flags=0x");

		e->kind = 0xff; /* unless the fields parse */
		if (kv_num(args, end, "transaction=", &id) &&
		    kv_num(args, end, " reply=", &reply)) {
			e->kind = PH_EV_BINDER_TXN;
			e->a = (int32_t)tid;
			e->b = reply != 0;
			/* hex, read within the line (it need not end in
			 * a NUL) */
			for (f = f ? f + 9 : end;
			     f < end && isxdigit((unsigned char)*f); f++)
				flags = (flags << 4 & 0xfffffff) |
					(isdigit((unsigned char)*f) ?
						 *f - '0' :
						 (*f | 0x20) - 'a' + 10);
			e->c = (int32_t)(flags & 0x7fffffff);
			e->v.d = id;
		}
	} else if (IS("binder_transaction_received")) {
		int64_t id;

		e->kind = 0xff;
		if (kv_num(args, end, "transaction=", &id)) {
			e->kind = PH_EV_BINDER_RECV;
			e->a = (int32_t)tid;
			e->v.d = id;
		}
	} else if (IS("task_rename")) {
		const char *c = FIND(args, end, "newcomm="), *ce;
		int64_t v = 0;

		e->kind = PH_EV_RENAME;
		kv_num(args, end, "pid=", &v);
		e->a = (int32_t)v;
		ce = c ? FIND(c, end, " oom_score_adj=") : NULL;
		if (c)
			e->s1 = ph_trace_intern(
				t, c + 8, (size_t)((ce ? ce : end) - c - 8));
	}
#undef IS
	if (e->kind == 0xff) {
		t->nev--;
		ph_trace_stat(t, "ftrace_text_bad_args", 1);
	}
	return;
bad:
	t->text_rejected++;
	ph_trace_stat(t, "ftrace_text_unparsed_lines", 1);
}

int ph_trace_parse_ftrace(struct ph_trace *t, const char *p, size_t n)
{
	const char *start = p, *end = p + n;

	if (!strcmp(t->format, "unknown"))
		t->format = "ftrace";
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		uint64_t rejected = t->text_rejected;

		if (le > p && le[-1] == '\r')
			line(t, p, le - 1);
		else
			line(t, p, le);
		if (le > p)
			t->text_lines++;
		if (t->text_rejected != rejected && t->text_rejected_at < 0)
			t->text_rejected_at = p - start;
		p = nl ? nl + 1 : end;
	}
	return 0;
}

/*
 * ftrace text that is a whole file: a last line without its newline was
 * cut mid-line (a copy or a recording stopped short), and bytes with no
 * line in them (no header, no event: a few bytes of something else that
 * happen to look like text) are not a trace.  Either is a partial read,
 * with the byte offset of where the reading stopped.
 */
static int text_file_read(struct ph_trace *t, const char *p, size_t n,
			  size_t nev_before)
{
	const char *last_nl = n ? memrchr(p, '\n', n) : NULL;
	bool header = n && (p[0] == '#' || memmem(p, n, "\n#", 2));

	size_t tail = last_nl ? (size_t)(last_nl - p) + 1 : 0;

	/* Blanks after the last newline (the indent before a systrace
	 * HTML's </script>) are no line at all. */
	while (tail < n &&
	       (p[tail] == ' ' || p[tail] == '\t' || p[tail] == '\r'))
		tail++;
	if (tail < n) {
		size_t at = last_nl ? (size_t)(last_nl - p) + 1 : 0;

		ph_trace_stat(t, "ftrace_text_torn_lines", 1);
		return PH_CORRUPT(&t->err, at,
				  "the last line (bytes %zu..%zu) ends without "
				  "a newline: cut mid-line",
				  at, n);
	}
	if (t->nev == nev_before && !header)
		return PH_CORRUPT(
			&t->err, 0,
			"no ftrace line in the %zu bytes read (%" PRIu64
			" lines, %" PRIu64 " not parsed)",
			n, t->text_lines, t->text_rejected);
	return 0;
}

/* `ps` output: a header naming PID, PPID and NAME, then one process a line */
static void process_dump(struct ph_trace *t, const char *p, const char *end)
{
	int ipid = -1, ippid = -1, iname = -1;
	bool header = true;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		const char *tok[16];
		size_t tl[16];
		int nt = 0;

		for (const char *q = p; q < le && nt < 16;) {
			while (q < le && (*q == ' ' || *q == '\t'))
				q++;
			if (q >= le)
				break;
			tok[nt] = q;
			while (q < le && *q != ' ' && *q != '\t')
				q++;
			tl[nt] = (size_t)(q - tok[nt]);
			nt++;
		}
		p = nl ? nl + 1 : end;
		if (header) {
			for (int i = 0; i < nt; i++) {
				if (tl[i] == 3 && !memcmp(tok[i], "PID", 3))
					ipid = i;
				else if (tl[i] == 4 &&
					 !memcmp(tok[i], "PPID", 4))
					ippid = i;
				else if (tl[i] == 4 &&
					 !memcmp(tok[i], "NAME", 4))
					iname = i;
			}
			if (ipid >= 0 && iname >= 0)
				header = false;
			continue;
		}
		if (nt <= iname || nt <= ipid) {
			continue;
		} else {
			int64_t pid = 0, ppid = -1, upid;

			if (!num(tok[ipid], tok[ipid] + tl[ipid], &pid) ||
			    pid <= 0)
				continue;
			if (ippid >= 0 && ippid < nt)
				num(tok[ippid], tok[ippid] + tl[ippid], &ppid);
			upid = ph_trace_upid(t, pid);
			ph_trace_process_set_name(t, upid,
						  ph_trace_intern(t, tok[iname],
								  tl[iname]),
						  true);
			if (ppid > 0 && ppid != pid)
				ph_col_i64(&t->tables[PH_T_PROCESS],
					   P_PARENT)[upid] =
					ph_trace_upid(t, ppid);
			ph_trace_thread_set_pid(t, ph_trace_utid(t, pid), pid);
			ph_trace_stat(t, "systrace.process_dump", 1);
		}
	}
}

int ph_trace_parse_systrace_html(struct ph_trace *t, const char *p, size_t n)
{
	static const char open[] = "<script class=\"trace-data\" "
				   "type=\"application/text\">";
	const char *end = p + n, *q = p;
	bool found = false;

	t->format = "systrace";
	while ((q = find(q, end, open, sizeof(open) - 1))) {
		const char *b = q + sizeof(open) - 1, *e;

		e = FIND(b, end, "</script>");
		if (!e)
			e = end;
		while (b < e && (*b == '\n' || *b == '\r' || *b == ' '))
			b++;
		if (e - b > 9 && !memcmp(b, "# tracer:", 9)) {
			ph_trace_parse_ftrace(t, b, (size_t)(e - b));
			found = true;
		} else if (e - b > 12 && !memcmp(b, "PROCESS DUMP", 12)) {
			process_dump(t, b, e);
		}
		q = e;
	}
	if (!found)
		return PH_CORRUPT(&t->err, 0,
				  "no ftrace data block in the HTML");
	return 0;
}

/* --- loading ------------------------------------------------------------- */

static uint32_t rd16(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

static uint32_t rd32(const uint8_t *p)
{
	return rd16(p) | rd16(p + 2) << 16;
}

/* The first file of a zip archive, inflated into out. */
static int unzip_first(struct ph_trace *t, const uint8_t *p, size_t n,
		       struct ph_buf *out)
{
	size_t eocd, cd, lh, data, csize;
	uint32_t method;
	int rc;

	if (n < 22)
		return PH_CORRUPT(&t->err, 0, "zip too short");
	for (eocd = n - 22;; eocd--) {
		if (rd32(p + eocd) == 0x06054b50)
			break;
		if (eocd == 0 || n - eocd > 22 + 65535)
			return PH_CORRUPT(&t->err, n,
					  "zip end record not found");
	}
	cd = rd32(p + eocd + 16);
	if (cd > n - 46 || rd32(p + cd) != 0x02014b50)
		return PH_CORRUPT(&t->err, cd, "bad zip central directory");
	method = rd16(p + cd + 10);
	csize = rd32(p + cd + 20);
	lh = rd32(p + cd + 42);
	if (lh > n - 30 || rd32(p + lh) != 0x04034b50)
		return PH_CORRUPT(&t->err, lh, "bad zip local header");
	data = lh + 30 + rd16(p + lh + 26) + rd16(p + lh + 28);
	if (data > n || csize > n - data)
		return PH_CORRUPT(&t->err, lh, "zip entry past the end");
	if (method == 0)
		return ph_buf_add(out, p + data, csize);
	if (method != 8)
		return PH_CORRUPT(&t->err, cd + 10, "zip method %u unsupported",
				  method);
	rc = ph_inflate(p + data, csize, PH_INFLATE_RAW, NULL, out, NULL,
			&t->err);
	if (rc == PH_ECORRUPT || rc == PH_ETOOBIG)
		t->err.offset += data; /* from the entry's to the file's */
	return rc;
}

static bool looks_text(const uint8_t *p, size_t n)
{
	size_t k = n < 512 ? n : 512;

	if (!n)
		return false;
	for (size_t i = 0; i < k; i++)
		if (p[i] == 0 || (p[i] < 0x20 && p[i] != '\n' && p[i] != '\r' &&
				  p[i] != '\t'))
			return false;
	return true;
}

/*
 * The status of a load whose input inflated only in part (zrc, from
 * ph_inflate, nonzero): the trace is marked truncated and the load says
 * PH_ECORRUPT, as for any input read up to a bad byte.
 */
static int read_in_part(struct ph_trace *t, int rc, int zrc)
{
	if (!zrc)
		return rc;
	t->truncated = true;
	return rc && rc != PH_ECORRUPT ? rc : PH_ECORRUPT;
}

static int load_any(struct ph_trace *t, const uint8_t *p, size_t n, int depth)
{
	if (n >= 4 && rd32(p) == 0x04034b50 && depth < 2) {
		struct ph_buf b = PH_BUF_INIT(PH_INFLATE_MAX_OUT);
		int rc = unzip_first(t, p, n, &b);

		/* an entry refused by a cap is read as far as it inflated */
		if (!rc || rc == PH_ETOOBIG) {
			struct ph_err zerr = t->err;
			int zrc = rc;

			rc = load_any(t, (const uint8_t *)b.buf, b.len,
				      depth + 1);
			if (zrc)
				t->err = zerr; /* why the entry ends early */
			rc = read_in_part(t, rc, zrc);
		}
		ph_buf_release(&b);
		return rc;
	}
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b && depth < 2) {
		static const struct ph_inflate_caps head_caps = { 512, 1, 512 };
		struct ph_buf head = PH_BUF_INIT(512);
		bool text;
		int rc;

		/* gzip of text or of protobuf: look at the first bytes */
		rc = ph_inflate(p, n, PH_INFLATE_GZIP, &head_caps, &head, NULL,
				NULL);
		text = looks_text((const uint8_t *)head.buf, head.len);
		ph_buf_release(&head);
		if (rc == PH_ENOMEM)
			return rc;
		if (text) {
			struct ph_buf b = PH_BUF_INIT(PH_INFLATE_MAX_OUT);
			struct ph_err zerr = { 0 };

			rc = ph_inflate(p, n, PH_INFLATE_GZIP, NULL, &b, NULL,
					&zerr);
			if (rc == PH_ENOMEM) {
				ph_buf_release(&b);
				return rc;
			}
			rc = load_any(t, (const uint8_t *)b.buf, b.len,
				      depth + 1);
			ph_buf_release(&b);
			if (zerr.code)
				t->err = zerr; /* why the text ends early */
			return read_in_part(t, rc, zerr.code);
		}
		/* ~36 bytes of protobuf per event in real traces */
		(void)ph_trace_reserve(t, n / 40);
		return ph_trace_parse_proto(t, p, n);
	}
	if (looks_text(p, n)) {
		size_t k = n < 4096 ? n : 4096;

		if (memmem(p, k, "<html", 5) || memmem(p, k, "<!DOCTYPE", 9) ||
		    memmem(p, k, "<!doctype", 9))
			return ph_trace_parse_systrace_html(t, (const char *)p,
							    n);
		{
			size_t nev = t->nev;
			int rc = ph_trace_parse_ftrace(t, (const char *)p, n);

			return rc ? rc :
				    text_file_read(t, (const char *)p, n, nev);
		}
	}
	(void)ph_trace_reserve(t, n / 40);
	return ph_trace_parse_proto(t, p, n);
}

/*
 * Decodes data, then orders the events and builds the tables.  mapped:
 * data is a private mapping of a file that nothing writes, and its pages
 * leave the resident set between the two (MADV_DONTNEED on such a mapping
 * drops them to the page cache, and a later read faults them back in
 * unchanged): the decoded events and the tables being built are then the
 * peak, not those plus the whole file.
 */
static int load(struct ph_trace *t, const void *data, size_t n, bool mapped)
{
	int rc, frc;

	t->input_bytes = n;
	/* Nothing read is not an empty trace: say so, as a partial read. */
	rc = n ? load_any(t, data, n, 0) :
		 PH_CORRUPT(&t->err, 0, "the input is empty (0 bytes)");
	if (mapped)
		(void)madvise((void *)data, n, MADV_DONTNEED);
	frc = ph_trace_finish(t);
	if (!strcmp(t->format, "perfetto")) {
		static const char *const names[] = {
			"unknown",   "REALTIME",	 "REALTIME_COARSE",
			"MONOTONIC", "MONOTONIC_COARSE", "MONOTONIC_RAW",
			"BOOTTIME"
		};

		/* BOOTTIME is Perfetto's default, not something the trace
		 * said: named only when a snapshot or the config names it */
		t->clock_name =
			t->clock_stated ?
				names[t->trace_clock < PH_NCLK ? t->trace_clock :
								 0] :
				"unknown";
	}
	if (rc == PH_ECORRUPT || t->err.code)
		t->truncated = true;
	return rc ? rc : frc;
}

int ph_trace_load_mem(struct ph_trace *t, const void *data, size_t n)
{
	return load(t, data, n, false);
}

int ph_trace_load_file(struct ph_trace *t, const char *path)
{
	struct stat st;
	void *map;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ph_error(errno == ENOENT ? PH_ENOENT : PH_EIO,
				"open %s: %s", path, strerror(errno));
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return ph_error(PH_EIO, "%s: not a regular file", path);
	}
	if (st.st_size == 0) {
		close(fd);
		return ph_trace_load_mem(t, "", 0);
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return ph_error(PH_EIO, "mmap %s: %s", path, strerror(errno));
	madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
	rc = load(t, map, (size_t)st.st_size, true);
	munmap(map, (size_t)st.st_size);
	return rc;
}
