/* SPDX-License-Identifier: Apache-2.0 */
/*
 * symbolize.h: return addresses into function(file:line), off the thread
 * that captured them (a signal handler only records addresses).
 *
 * Safe from any thread (one lock serializes the debug-info cache).
 *
 * Names come from the full symbol table (static functions included) and
 * file:line from DWARF, through elfutils' libdwfl, when the module has
 * debug info; otherwise from dladdr(); otherwise module+offset.  Where
 * the platform has no libdw (platform.h: musl, the NDK), dladdr() alone.
 */
#ifndef PH_AGENT_SYMBOLIZE_H
#define PH_AGENT_SYMBOLIZE_H

#include "ph_common.h"
#include "ph_buf.h"
#include "ph_json.h"

#define PH_MAX_FRAMES  32 /* captured; 12 are sent (protocol section 8) */
#define PH_SENT_FRAMES 12

struct ph_frame_info {
	char fn[128];	  /* function name, or "" */
	char file[160];	  /* source file (basename), or "" */
	int line;	  /* source line, or -1 when unknown */
	char module[96];  /* module basename */
	uintptr_t offset; /* pc - module load address */
	uintptr_t pc;
	bool app; /* the app's own code: not a system library, not the agent */
};

/*
 * Resolves one address.  Every address but the first of a stack is a
 * return address, so pc - 1 is looked up (the call site); the first is
 * where the thread was interrupted and is looked up as it is.
 */
void ph_symbolize(uintptr_t pc, bool exact, struct ph_frame_info *out);
/*
 * The frames of one captured stack that are sent, as indexes into fr
 * (into order, PH_MAX_FRAMES long; returns how many): app frames first,
 * then the others (system libraries, the agent's own code), each in stack
 * order, at most PH_SENT_FRAMES.  Left out: the capture machinery at the
 * top (signal handler, unwinder, sigreturn), vdso frames, addresses in no
 * module, an address in none of the functions of a module whose other
 * frames are named (a PLT entry), and everything past the thread's entry: the
 * stack ends after main, or after a thread's start routine (never _start,
 * __libc_start_main, start_thread or clone).  So order[0], when there is
 * one, is the first app frame whenever the stack has one: the frame to
 * blame.
 */
size_t ph_frames_pick(const struct ph_frame_info *fr, size_t n, size_t *order);
/*
 * Writes "top", "stack" and "frames" (protocol: blocked, exit) for the
 * captured addresses, the frames ph_frames_pick() keeps; "top" is the
 * first of them.
 */
void ph_symbolize_json(struct ph_jw *w, const uintptr_t *pcs, size_t n);
/* The same stack as "stack" above: frames one per line, into out. */
void ph_symbolize_text(const uintptr_t *pcs, size_t n, struct ph_buf *out);
/*
 * One frame into buf: "fn(file:line)", or what is known of it, "fn(file)",
 * "fn", "module+0x1a2b"; an unknown part is left out, never "?" or -1.
 */
void ph_frame_format(const struct ph_frame_info *f, char *buf, size_t size);
/*
 * Whether a module at this path is the app's own code, not a system
 * library or the agent (what puts a frame first in a stack).
 */
bool ph_symbolize_is_app_path(const char *path);
/* The name of the function holding addr in mod, or NULL: never an ELF
 * mapping symbol ("$x") nor the function before a PLT entry.  With libdw
 * only (PH_PLATFORM_LIBDW). */
struct Dwfl_Module;
const char *ph_symbolize_fn_name(struct Dwfl_Module *mod, uintptr_t addr);
/* Frees the debug-info cache (at stop). */
void ph_symbolize_reset(void);

#endif
