/* SPDX-License-Identifier: Apache-2.0 */
/*
 * leak_render.c: a leak trace as the LeakCanary text Android developers
 * read (shark's LeakTrace.toString), and the byte sizes in it.
 */
#include "ph_common.h"
#include "heap.h"

/* ---- rendering ------------------------------------------------------------
 */

void ph_heap_human_bytes(uint64_t bytes, char *buf, size_t size)
{
	static const char pre[] = "kMGTPE";
	double v = (double)bytes;
	int exp = 0;

	if (bytes < 1000) {
		snprintf(buf, size, "%" PRIu64 " B", bytes);
		return;
	}
	while (v >= 1000 && exp < 6) {
		v /= 1000;
		exp++;
	}
	/* Java's %.1f rounds half up; nudge so printf agrees */
	snprintf(buf, size, "%.1f %cB", v + 1e-9, pre[exp - 1]);
}

static const char *gc_root_desc(unsigned kind)
{
	switch (kind) {
	case PH_ROOT_JNI_GLOBAL: return "Global variable in native code";
	case PH_ROOT_JNI_LOCAL: return "Local variable in native code";
	case PH_ROOT_JAVA_FRAME: return "Java local variable";
	case PH_ROOT_NATIVE_STACK:
		return "Input or output parameters in native code";
	case PH_ROOT_STICKY_CLASS: return "System class";
	case PH_ROOT_THREAD_BLOCK: return "Thread block";
	case PH_ROOT_MONITOR_USED:
		return "Monitor (anything that called the wait() or notify() "
		       "methods, or that is synchronized.)";
	case PH_ROOT_THREAD_OBJECT: return "Thread object";
	case PH_ROOT_JNI_MONITOR: return "Root JNI monitor";
	case PH_ROOT_INTERNED_STRING: return "Interned string";
	case PH_ROOT_FINALIZING: return "Object awaiting finalization";
	case PH_ROOT_DEBUGGER: return "Debugger reference";
	case PH_ROOT_REFERENCE_CLEANUP: return "Reference cleanup";
	case PH_ROOT_VM_INTERNAL: return "VM internal reference";
	case PH_ROOT_UNREACHABLE: return "Unreachable object";
	}
	return "Unknown GC root type";
}

/* Characters (code points) in UTF-8 text, as Kotlin counts them. */
static size_t u8len(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

static int render_node(struct ph_heap *h, const struct ph_leak_node *n,
		       const char *first, const char *more, bool show_status,
		       bool show_retained, uint64_t retained, uint32_t count,
		       struct ph_buf *out)
{
	const char *cname = ph_heap_class_name(h, h->cls[n->obj]);
	int rc;

	rc = ph_buf_addf(out, "%s%s %s", first, cname,
			 ph_heap_kind_name(ph_heap_kind_of(h, n->obj)));
	if (!rc && show_status) {
		if (n->status == PH_LEAK_UNKNOWN)
			rc = ph_buf_addf(out, "\n%sLeaking: UNKNOWN", more);
		else
			rc = ph_buf_addf(out, "\n%sLeaking: %s (%s)", more,
					 n->status == PH_LEAK_YES ? "YES" :
								    "NO",
					 n->reason);
	}
	if (!rc && show_retained) {
		char b[32];

		ph_heap_human_bytes(retained, b, sizeof(b));
		rc = ph_buf_addf(out, "\n%sRetaining %s in %u objects", more, b,
				 count);
	}
	for (size_t i = 0; !rc && i < n->nlabels; i++)
		rc = ph_buf_addf(out, "\n%s%s", more, n->labels[i]);
	return rc;
}

int ph_leak_trace_render(struct ph_heap *h, const struct ph_leak_trace *t,
			 bool show_status, struct ph_buf *out)
{
	int rc;

	rc = ph_buf_addf(out,
			 "\xe2\x94\xac\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\n"
			 "\xe2\x94\x82 GC Root: %s\n\xe2\x94\x82",
			 gc_root_desc(t->root_kind));
	for (size_t i = 0; !rc && i + 1 < t->nnodes; i++) {
		const struct ph_leak_node *n = &t->nodes[i];
		char prefix[512];
		int pl;

		rc = ph_buf_addch(out, '\n');
		if (!rc)
			rc = render_node(h, n, "\xe2\x94\x9c\xe2\x94\x80 ",
					 "\xe2\x94\x82    ", show_status, false,
					 0, 0, out);
		if (rc)
			break;
		/* "    ↓ static Foo." then the name; arrays drop their []
		 * and the dot, locals the dot */
		const char *owner = n->ref_owner;
		size_t ol = strlen(owner);

		if (n->ref_kind == 2 && ol >= 2 &&
		    !strcmp(owner + ol - 2, "[]"))
			ol -= 2;
		pl = snprintf(prefix, sizeof(prefix),
			      "    \xe2\x86\x93%s %.*s%s",
			      n->ref_kind == 0 ? " static" : "", (int)ol, owner,
			      n->ref_kind <= 1 ? "." : "");
		if (pl < 0 || (size_t)pl >= sizeof(prefix))
			pl = (int)strlen(prefix);
		rc = ph_buf_addf(out, "\n\xe2\x94\x82%s%s", prefix,
				 n->ref_name);
		if (!rc && show_status && n->suspect) {
			size_t sp = u8len(prefix), ul = u8len(n->ref_name);

			rc = ph_buf_addstr(out, "\n\xe2\x94\x82");
			for (size_t k = 0; !rc && k < sp; k++)
				rc = ph_buf_addch(out, ' ');
			for (size_t k = 0; !rc && k < ul; k++)
				rc = ph_buf_addch(out, '~');
		}
		/* the middle of a long path: how much is left out, between
		 * the reference into it and the node after it */
		if (!rc && t->elided && i + 1 == t->elided_at)
			rc = ph_buf_addf(out,
					 "\n\xe2\x94\x82    \xe2\x8b\xae %zu "
					 "references elided (the path holds "
					 "%zu; shown: the %zu nearest the GC "
					 "root, the %zu nearest the leak)",
					 t->elided, t->length - 1, t->elided_at,
					 t->nnodes - t->elided_at);
	}
	if (!rc && t->nnodes) {
		rc = ph_buf_addch(out, '\n');
		if (!rc)
			rc = render_node(h, &t->nodes[t->nnodes - 1],
					 "\xe2\x95\xb0\xe2\x86\x92 ", "     ",
					 show_status, h->retained != NULL,
					 t->retained, t->retained_count, out);
	}
	return rc;
}
