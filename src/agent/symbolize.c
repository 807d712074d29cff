/*
 * symbolize.c: see symbolize.h.  The dwfl handle is cached here and is not
 * thread-safe: `mu` serializes its users, the writer thread (stalls) and,
 * rarely, the watchdog (a main thread unresponsive long enough to be an
 * ANR if killed).
 */
#include "ph_common.h"
#include "symbolize.h"

#include <dlfcn.h>
#include <pthread.h>
#include <elfutils/libdwfl.h>
#include <unistd.h>

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static Dwfl *dwfl;
static bool dwfl_failed;

static char *debuginfo_path; /* libdwfl's default search */
static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

static Dwfl *get_dwfl(void)
{
	if (dwfl || dwfl_failed)
		return dwfl;
	dwfl = dwfl_begin(&callbacks);
	if (dwfl && (dwfl_linux_proc_report(dwfl, getpid()) ||
		     dwfl_report_end(dwfl, NULL, NULL))) {
		dwfl_end(dwfl);
		dwfl = NULL;
	}
	dwfl_failed = !dwfl;
	return dwfl;
}

void ph_symbolize_reset(void)
{
	pthread_mutex_lock(&mu);
	if (dwfl)
		dwfl_end(dwfl);
	dwfl = NULL;
	dwfl_failed = false;
	pthread_mutex_unlock(&mu);
}

static const char *base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path ? path : "";
}

/* System code: the C library, the loader, the agent itself, vdso. */
static bool is_system_module(const char *path)
{
	const char *b = base(path);

	return !strncmp(path, "/lib", 4) || !strncmp(path, "/usr/lib", 8) ||
	       !strncmp(b, "libporthole", 11) ||
	       !strncmp(b, "linux-vdso", 10) || !strncmp(b, "[vdso", 5);
}

bool ph_symbolize_is_app_path(const char *path)
{
	return path && !is_system_module(path);
}

/* Callers hold mu. */
static void symbolize_locked(uintptr_t pc, bool exact,
			     struct ph_frame_info *out)
{
	uintptr_t addr = pc && !exact ? pc - 1 : pc;
	Dwfl *d = get_dwfl();
	Dwfl_Module *mod = d ? dwfl_addrmodule(d, addr) : NULL;
	Dl_info info;

	memset(out, 0, sizeof(*out));
	out->pc = pc;
	out->line = -1;
	if (mod) {
		Dwarf_Addr start = 0;
		const char *mname = dwfl_module_info(mod, NULL, &start, NULL,
						     NULL, NULL, NULL, NULL);
		const char *fn = dwfl_module_addrname(mod, addr);
		Dwfl_Line *line = dwfl_module_getsrc(mod, addr);

		snprintf(out->module, sizeof(out->module), "%s", base(mname));
		out->offset = pc - (uintptr_t)start;
		out->app = mname && !is_system_module(mname);
		if (fn)
			snprintf(out->fn, sizeof(out->fn), "%s", fn);
		if (line) {
			int lineno = 0;
			const char *file = dwfl_lineinfo(line, NULL, &lineno,
							 NULL, NULL, NULL);

			if (file) {
				snprintf(out->file, sizeof(out->file), "%s",
					 base(file));
				out->line = lineno;
			}
		}
		if (out->fn[0])
			return;
	}
	if (dladdr((void *)addr, &info)) {
		if (!out->module[0]) {
			snprintf(out->module, sizeof(out->module), "%s",
				 base(info.dli_fname));
			out->offset = pc - (uintptr_t)info.dli_fbase;
			out->app = info.dli_fname &&
				   !is_system_module(info.dli_fname);
		}
		if (info.dli_sname)
			snprintf(out->fn, sizeof(out->fn), "%s",
				 info.dli_sname);
	}
}

void ph_symbolize(uintptr_t pc, bool exact, struct ph_frame_info *out)
{
	pthread_mutex_lock(&mu);
	symbolize_locked(pc, exact, out);
	pthread_mutex_unlock(&mu);
}

void ph_frame_format(const struct ph_frame_info *f, char *buf, size_t size)
{
	if (f->fn[0])
		snprintf(buf, size, "%s(%s:%d)", f->fn,
			 f->file[0] ? f->file : "?", f->line);
	else
		snprintf(buf, size, "%s+0x%" PRIxPTR "(?:-1)",
			 f->module[0] ? f->module : "?", f->offset);
}

/* The capture's own frames: the signal handler, the unwinder, sigreturn. */
static bool is_capture_frame(const struct ph_frame_info *f)
{
	return !strncmp(f->module, "libporthole", 11) ||
	       !strcmp(f->fn, "__restore_rt") || !strncmp(f->fn, "ph_", 3) ||
	       !strcmp(f->fn, "backtrace") || !strncmp(f->fn, "_Unwind", 7);
}

/*
 * The frames sent, as indexes into fr (symbolized here): app frames first,
 * then library frames, each in stack order, at most PH_SENT_FRAMES, with
 * the capture machinery at the top of the stack left out.
 */
static size_t pick_frames(const uintptr_t *pcs, size_t n,
			  struct ph_frame_info *fr, size_t *order)
{
	size_t k = 0, first = 0;

	n = n < PH_MAX_FRAMES ? n : PH_MAX_FRAMES;
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < n; i++)
		symbolize_locked(pcs[i], i == 0, &fr[i]);
	pthread_mutex_unlock(&mu);
	while (first < n && is_capture_frame(&fr[first]))
		first++;
	for (size_t i = first; i < n && k < PH_SENT_FRAMES; i++)
		if (fr[i].app)
			order[k++] = i;
	for (size_t i = first; i < n && k < PH_SENT_FRAMES; i++)
		if (!fr[i].app)
			order[k++] = i;
	return k;
}

static void stack_lines(const struct ph_frame_info *fr, const size_t *order,
			size_t k, struct ph_buf *out)
{
	char line[512];

	for (size_t i = 0; i < k; i++) {
		ph_frame_format(&fr[order[i]], line, sizeof(line));
		if ((i && ph_buf_addch(out, '\n')) || ph_buf_addstr(out, line))
			break; /* 4096 B cap (protocol section 8) */
	}
}

void ph_symbolize_text(const uintptr_t *pcs, size_t n, struct ph_buf *out)
{
	struct ph_frame_info fr[PH_MAX_FRAMES];
	size_t order[PH_MAX_FRAMES];

	stack_lines(fr, order, pick_frames(pcs, n, fr, order), out);
}

void ph_symbolize_json(struct ph_jw *w, const uintptr_t *pcs, size_t n)
{
	struct ph_frame_info fr[PH_MAX_FRAMES];
	size_t order[PH_MAX_FRAMES], k = pick_frames(pcs, n, fr, order);
	char line[512];
	struct ph_buf stack = PH_BUF_INIT(4096);

	stack_lines(fr, order, k, &stack);
	if (k)
		ph_frame_format(&fr[order[0]], line, sizeof(line));
	else
		snprintf(line, sizeof(line), "?");
	ph_jw_kv_str(w, "top", line);
	ph_jw_key(w, "stack");
	ph_jw_strn(w, stack.buf, stack.len);
	ph_jw_key(w, "frames");
	ph_jw_arr_begin(w);
	for (size_t i = 0; i < k; i++) {
		const struct ph_frame_info *f = &fr[order[i]];
		char pc[24];

		ph_jw_obj_begin(w);
		ph_jw_kv_str(w, "fn", f->fn[0] ? f->fn : "?");
		if (f->file[0]) {
			ph_jw_kv_str(w, "file", f->file);
			ph_jw_kv_int(w, "line", f->line);
		}
		ph_jw_kv_str(w, "module", f->module);
		ph_jw_kv_int(w, "offset", (int64_t)f->offset);
		snprintf(pc, sizeof(pc), "0x%" PRIxPTR, f->pc);
		ph_jw_kv_str(w, "pc", pc);
		ph_jw_kv_bool(w, "app", f->app);
		ph_jw_obj_end(w);
	}
	ph_jw_arr_end(w);
	ph_buf_release(&stack);
}
