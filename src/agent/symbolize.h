/*
 * symbolize.h: return addresses into function(file:line), off the thread
 * that captured them (a signal handler only records addresses).
 *
 * Safe from any thread (one lock serializes the debug-info cache).
 *
 * Names come from the full symbol table (static functions included) and
 * file:line from DWARF, through elfutils' libdwfl, when the module has
 * debug info; otherwise from dladdr(); otherwise module+offset.
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
	int line;	  /* source line, or -1 */
	char module[96];  /* module basename */
	uintptr_t offset; /* pc - module load address */
	uintptr_t pc;
	bool app; /* the app's own code, not a system library */
};

/*
 * Resolves one address.  Every address but the first of a stack is a
 * return address, so pc - 1 is looked up (the call site); the first is
 * where the thread was interrupted and is looked up as it is.
 */
void ph_symbolize(uintptr_t pc, bool exact, struct ph_frame_info *out);
/*
 * Writes "top", "stack" and "frames" (protocol: blocked, exit) for the
 * captured addresses: app frames first, then library frames, at most
 * PH_SENT_FRAMES, with the agent's own frames (the capture itself) left
 * out.
 */
void ph_symbolize_json(struct ph_jw *w, const uintptr_t *pcs, size_t n);
/* The same stack as "stack" above: frames one per line, into out. */
void ph_symbolize_text(const uintptr_t *pcs, size_t n, struct ph_buf *out);
/* One frame as "fn(file:line)" into buf. */
void ph_frame_format(const struct ph_frame_info *f, char *buf, size_t size);
/*
 * Whether a module at this path is the app's own code, not a system
 * library or the agent (what puts a frame first in a stack).
 */
bool ph_symbolize_is_app_path(const char *path);
/* Frees the debug-info cache (at stop). */
void ph_symbolize_reset(void);

#endif
