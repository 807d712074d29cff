/* SPDX-License-Identifier: Apache-2.0 */
/*
 * symbolize.c: see symbolize.h.  The dwfl handle is cached here and is not
 * thread-safe: `mu` serializes its users, the writer thread (stalls) and,
 * rarely, the watchdog (a main thread unresponsive long enough to be an
 * ANR if killed).
 */
#include "ph_common.h"
#include "platform.h"
#include "symbolize.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <unistd.h>
#if PH_PLATFORM_LIBDW
#include <elfutils/libdwfl.h>
#endif

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

#if PH_PLATFORM_LIBDW
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
#else
void ph_symbolize_reset(void)
{
}
#endif

static const char *base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path ? path : "";
}

/* The kernel's vdso, as libdwfl ("[vdso: 5097]") or dladdr names it. */
static bool is_vdso(const char *module)
{
	return !strncmp(module, "linux-vdso", 10) ||
	       !strncmp(module, "[vdso", 5);
}

/* System code: the C library, the loader, the agent itself, vdso. */
static bool is_system_module(const char *path)
{
	const char *b = base(path);

	return !strncmp(path, "/lib", 4) || !strncmp(path, "/usr/lib", 8) ||
	       !strncmp(b, "libporthole", 11) || is_vdso(b);
}

/*
 * Where the agent's own sources were built, from this very file's debug
 * info (".../src/agent/"), so that the agent's code linked statically into
 * an app (its sqlite3_step or curl_easy_perform wrappers, its callbacks
 * inside SQLite) is told apart from the app's: same module, other tree.
 * "" when the agent has no debug info (names decide alone then).
 */
static char agent_dir[PATH_MAX];

#if PH_PLATFORM_LIBDW
static bool agent_dir_known;

/* Callers hold mu; d is the cached handle. */
static void find_agent_dir(Dwfl *d)
{
	uintptr_t self = (uintptr_t)&ph_symbolize;
	Dwfl_Module *mod = dwfl_addrmodule(d, self);
	Dwfl_Line *line = mod ? dwfl_module_getsrc(mod, self) : NULL;
	const char *file =
		line ? dwfl_lineinfo(line, NULL, NULL, NULL, NULL, NULL) : NULL;
	const char *slash = file ? strrchr(file, '/') : NULL;

	agent_dir_known = true;
	if (slash && (size_t)(slash - file) + 1 < sizeof(agent_dir))
		snprintf(agent_dir, sizeof(agent_dir), "%.*s",
			 (int)(slash - file) + 1, file);
}
#endif

/*
 * The agent's own code: its source tree, or its names (ph_*, porthole_*)
 * when there is no line info.  Never the frame to blame.
 */
static bool is_agent_code(const char *fn, const char *file)
{
	if (file && agent_dir[0] &&
	    !strncmp(file, agent_dir, strlen(agent_dir)))
		return true;
	return !strncmp(fn, "ph_", 3) || !strncmp(fn, "porthole_", 9);
}

#if PH_PLATFORM_LIBDW
/*
 * The nearest symbol at or before addr names the function holding it only
 * when it is a function and addr lies inside it.  Past its end is a linker
 * trampoline (the PLT entries a call to another library goes through) or
 * padding; on arm64 the nearest can be an ELF mapping symbol ("$x" code,
 * "$d" data, AAELF64), which marks where code starts and names nothing.
 */
const char *ph_symbolize_fn_name(Dwfl_Module *mod, uintptr_t addr)
{
	GElf_Sym sym;
	GElf_Off off = 0;
	const char *fn =
		dwfl_module_addrinfo(mod, addr, &off, &sym, NULL, NULL, NULL);

	if (!fn || fn[0] == '$' ||
	    (GELF_ST_TYPE(sym.st_info) != STT_FUNC &&
	     GELF_ST_TYPE(sym.st_info) != STT_GNU_IFUNC) ||
	    (sym.st_size && off >= sym.st_size))
		return NULL;
	return fn;
}
#endif

bool ph_symbolize_is_app_path(const char *path)
{
	return path && !is_system_module(path);
}

#if PH_PLATFORM_LIBDW
/*
 * addr through libdw, the symbol tables and DWARF of the module holding
 * it; false when libdw knows no module there.  Callers hold mu.
 */
static bool symbolize_libdw(uintptr_t pc, uintptr_t addr,
			    struct ph_frame_info *out)
{
	Dwfl *d = get_dwfl();
	Dwfl_Module *mod = d ? dwfl_addrmodule(d, addr) : NULL;
	Dwarf_Addr start = 0;
	const char *mname, *fn, *file = NULL;
	Dwfl_Line *line;

	if (d && !agent_dir_known)
		find_agent_dir(d);
	if (!mod)
		return false;
	mname = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL,
				 NULL);
	fn = ph_symbolize_fn_name(mod, addr);
	line = dwfl_module_getsrc(mod, addr);
	snprintf(out->module, sizeof(out->module), "%s", base(mname));
	out->offset = pc - (uintptr_t)start;
	if (fn)
		snprintf(out->fn, sizeof(out->fn), "%s", fn);
	if (line) {
		int lineno = 0;

		file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
		if (file) {
			snprintf(out->file, sizeof(out->file), "%s",
				 base(file));
			out->line = lineno > 0 ? lineno : -1;
		}
	}
	/* A frame of no function (a PLT entry) is never the app's. */
	out->app = mname && !is_system_module(mname) &&
		   !is_agent_code(out->fn, file) && out->fn[0];
	return true;
}
#else
/* No libdw (platform.h): dladdr() alone names the frame. */
static bool symbolize_libdw(uintptr_t pc, uintptr_t addr,
			    struct ph_frame_info *out)
{
	(void)pc;
	(void)addr;
	(void)out;
	return false;
}
#endif

/* Callers hold mu. */
static void symbolize_locked(uintptr_t pc, bool exact,
			     struct ph_frame_info *out)
{
	uintptr_t addr = pc && !exact ? pc - 1 : pc;
	Dl_info info;

	memset(out, 0, sizeof(*out));
	out->pc = pc;
	out->line = -1;
	if (symbolize_libdw(pc, addr, out))
		return;
	if (dladdr((void *)addr, &info)) {
		snprintf(out->module, sizeof(out->module), "%s",
			 base(info.dli_fname));
		out->offset = pc - (uintptr_t)info.dli_fbase;
		out->app = info.dli_fname && !is_system_module(info.dli_fname);
		if (info.dli_sname)
			snprintf(out->fn, sizeof(out->fn), "%s",
				 info.dli_sname);
		if (is_agent_code(out->fn, NULL))
			out->app = false;
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
	if (f->fn[0] && f->file[0] && f->line > 0)
		snprintf(buf, size, "%s(%s:%d)", f->fn, f->file, f->line);
	else if (f->fn[0] && f->file[0])
		snprintf(buf, size, "%s(%s)", f->fn, f->file);
	else if (f->fn[0])
		snprintf(buf, size, "%s", f->fn);
	else
		snprintf(buf, size, "%s+0x%" PRIxPTR, f->module, f->offset);
}

/*
 * A frame worth a line: not the kernel's vdso (a clock read the thread was
 * in, or junk past the stack's end), not an address in no module.
 */
static bool shown(const struct ph_frame_info *f)
{
	return (f->fn[0] || f->module[0]) && !is_vdso(f->module);
}

/* The capture's own frames: the signal handler, the unwinder, sigreturn. */
static bool is_capture_frame(const struct ph_frame_info *f)
{
	return !strncmp(f->module, "libporthole", 11) ||
	       !strcmp(f->fn, "__restore_rt") || !strncmp(f->fn, "ph_", 3) ||
	       !strcmp(f->fn, "backtrace") || !strncmp(f->fn, "_Unwind", 7);
}

/*
 * Where a thread's own code begins: the C library's start-up that called
 * main (_start, __libc_start_main, __libc_start_call_main) or a thread's
 * start routine (start_thread, clone).  Nothing past it is the app's, and
 * the frame-pointer chain past it is often garbage (a vdso "frame").
 */
static bool is_thread_entry(const struct ph_frame_info *f)
{
	static const char *const entry[] = { "_start",
					     "__libc_start_main",
					     "__libc_start_main_impl",
					     "__libc_start_call_main",
					     "start_thread",
					     "clone",
					     "clone3",
					     "__clone",
					     "__clone3",
					     "__clone_internal" };

	for (size_t i = 0; i < PH_ARRAY_SIZE(entry); i++)
		if (!strcmp(f->fn, entry[i]))
			return true;
	return false;
}

/*
 * A frame of no function in a module whose other frames have names: the
 * module has symbols, so the address is in none of its functions (a PLT
 * entry a call to another library went through, padding).  Not worth a
 * line: an unresolvable name that reads like a frame past the stack's end.
 * In a module without symbols (stripped) every frame is kept as
 * module+offset, the only name it has.
 */
static bool no_function(const struct ph_frame_info *fr, size_t n, size_t i)
{
	if (fr[i].fn[0] || !fr[i].module[0])
		return false;
	for (size_t j = 0; j < n; j++)
		if (fr[j].fn[0] && !strcmp(fr[j].module, fr[i].module))
			return true;
	return false;
}

size_t ph_frames_pick(const struct ph_frame_info *fr, size_t n, size_t *order)
{
	size_t k = 0, first = 0, end = 0;

	n = n < PH_MAX_FRAMES ? n : PH_MAX_FRAMES;
	while (first < n && is_capture_frame(&fr[first]))
		first++;
	/* The thread's stack ends at main, or at its start routine. */
	for (end = first; end < n && !is_thread_entry(&fr[end]); end++)
		if (!strcmp(fr[end].fn, "main")) {
			end++;
			break;
		}
	for (size_t i = first; i < end && k < PH_SENT_FRAMES; i++)
		if (fr[i].app && shown(&fr[i]))
			order[k++] = i;
	for (size_t i = first; i < end && k < PH_SENT_FRAMES; i++)
		if (!fr[i].app && shown(&fr[i]) && !no_function(fr, end, i))
			order[k++] = i;
	return k;
}

/* Symbolizes pcs into fr and picks the frames sent (ph_frames_pick). */
static size_t pick_frames(const uintptr_t *pcs, size_t n,
			  struct ph_frame_info *fr, size_t *order)
{
	n = n < PH_MAX_FRAMES ? n : PH_MAX_FRAMES;
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < n; i++)
		symbolize_locked(pcs[i], i == 0, &fr[i]);
	pthread_mutex_unlock(&mu);
	return ph_frames_pick(fr, n, order);
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
		if (f->fn[0])
			ph_jw_kv_str(w, "fn", f->fn);
		if (f->file[0])
			ph_jw_kv_str(w, "file", f->file);
		if (f->file[0] && f->line > 0)
			ph_jw_kv_int(w, "line", f->line);
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
