/* SPDX-License-Identifier: Apache-2.0 */
/*
 * leaks.c: which objects are leaking, the path that keeps each one, what
 * every object on that path is known to be, and the LeakCanary rendering
 * Android developers read.
 *
 * The rules follow LeakCanary's shark (square/leakcanary, shark and
 * shark-android: LeakTrace, LeakTraceObject, AndroidObjectInspectors),
 * re-stated in docs/heap.md:
 *
 *  - leaking objects: referents of retained KeyedWeakReference watches,
 *    and objects whose own state says they are done (destroyed
 *    Activities, detached Fragments, detached root Views, destroyed
 *    Windows, ViewRootImpl without a view, quitting MessageQueues,
 *    disposed compositions), plus every instance of --class;
 *  - each object on a path gets YES / NO / UNKNOWN from the inspectors;
 *    everything before the last NO becomes NO ("X↓ is not leaking"),
 *    everything after the first YES becomes YES ("X↑ is leaking");
 *  - the references between the last NO and the first YES are the
 *    suspects: underlined, and hashed (SHA-1) into the signature that
 *    groups traces of the same bug.
 */
#include "ph_common.h"
#include "heap.h"

#define EDGE_LIB  (1u << 31)
#define EDGE_MASK (~EDGE_LIB)

static const char *afmt(struct ph_heap *h, const char *fmt, ...)
	PH_PRINTF(2, 3);

static const char *afmt(struct ph_heap *h, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return "";
	if ((size_t)n >= sizeof(tmp))
		n = sizeof(tmp) - 1;
	const char *s = ph_arena_strndup(&h->arena, tmp, (size_t)n);
	return s ? s : "";
}

static const char *simple_name(const char *name)
{
	const char *dot = strrchr(name, '.');

	return dot ? dot + 1 : name;
}

/* ---- class traits, computed once per class ----------------------------- */

enum {
	T_ACTIVITY = 1 << 0,
	T_VIEW = 1 << 1,
	T_FRAGMENT = 1 << 2, /* android.app.Fragment */
	T_SUPPORT_FRAGMENT = 1 << 3,
	T_ANDROIDX_FRAGMENT = 1 << 4,
	T_WINDOW = 1 << 5,
	T_VIEW_ROOT = 1 << 6,
	T_MESSAGE_QUEUE = 1 << 7,
	T_COMPOSITION = 1 << 8,
	T_APPLICATION = 1 << 9,
	T_ACTIVITY_THREAD = 1 << 10,
	T_IMM = 1 << 11,
	T_THREAD = 1 << 12,
	T_KWR = 1 << 13,
	T_CONTEXT_WRAPPER = 1 << 14,
	T_DECOR_VIEW = 1 << 15,
};

static const struct {
	const char *name;
	uint32_t trait;
} trait_names[] = {
	{ "android.app.Activity", T_ACTIVITY },
	{ "android.view.View", T_VIEW },
	{ "android.app.Fragment", T_FRAGMENT },
	{ "android.support.v4.app.Fragment", T_SUPPORT_FRAGMENT },
	{ "androidx.fragment.app.Fragment", T_ANDROIDX_FRAGMENT },
	{ "android.view.Window", T_WINDOW },
	{ "android.view.ViewRootImpl", T_VIEW_ROOT },
	{ "android.os.MessageQueue", T_MESSAGE_QUEUE },
	{ "androidx.compose.runtime.CompositionImpl", T_COMPOSITION },
	{ "android.app.Application", T_APPLICATION },
	{ "android.app.ActivityThread", T_ACTIVITY_THREAD },
	{ "android.view.inputmethod.InputMethodManager", T_IMM },
	{ "java.lang.Thread", T_THREAD },
	{ "leakcanary.KeyedWeakReference", T_KWR },
	{ "com.squareup.leakcanary.KeyedWeakReference", T_KWR },
	{ "android.content.ContextWrapper", T_CONTEXT_WRAPPER },
	{ "com.android.internal.policy.DecorView", T_DECOR_VIEW },
	{ "com.android.internal.policy.PhoneWindow$DecorView", T_DECOR_VIEW },
};

struct ctx {
	struct ph_heap *h;
	uint32_t *traits; /* per class */
	uint32_t watch;	  /* --class, or NONE */
};

static int traits_build(struct ctx *x)
{
	struct ph_heap *h = x->h;

	x->traits = calloc(h->nclasses + 1, 4);
	if (!x->traits)
		return PH_ENOMEM;
	for (uint32_t c = 0; c < h->nclasses; c++)
		for (size_t t = 0; t < PH_ARRAY_SIZE(trait_names); t++)
			if (ph_heap_class_is_named(h, c, trait_names[t].name))
				x->traits[c] |= trait_names[t].trait;
	return 0;
}

static uint32_t traits_of(const struct ctx *x, uint32_t obj)
{
	if (ph_heap_kind_of(x->h, obj) != PH_HEAP_INSTANCE)
		return 0;
	return x->traits[x->h->cls[obj]];
}

/* ---- field helpers ------------------------------------------------------ */

static uint32_t ref_field(struct ph_heap *h, uint32_t obj, const char *decl,
			  const char *name, bool *present)
{
	struct ph_heap_value v = ph_heap_get_field(h, obj, decl, name);

	if (present)
		*present = v.type == PH_HT_OBJECT;
	if (v.type != PH_HT_OBJECT || !v.u)
		return PH_HEAP_NONE;
	return ph_heap_find(h, v.u);
}

/* -1 absent, else 0/1 */
static int bool_field(struct ph_heap *h, uint32_t obj, const char *decl,
		      const char *name)
{
	struct ph_heap_value v = ph_heap_get_field(h, obj, decl, name);

	return v.type == PH_HT_BOOLEAN ? (int)(v.u != 0) : -1;
}

static const char *string_field(struct ph_heap *h, uint32_t obj,
				const char *decl, const char *name)
{
	uint32_t s = ref_field(h, obj, decl, name, NULL);
	struct ph_buf b = PH_BUF_INIT(4096);
	const char *out = NULL;

	if (s != PH_HEAP_NONE && !ph_heap_read_string(h, s, &b))
		out = ph_arena_strndup(&h->arena, b.buf, b.len);
	ph_buf_release(&b);
	return out;
}

/* The Activity a context is or wraps (ContextWrapper.mBase), or NONE. */
static uint32_t unwrap_activity(struct ctx *x, uint32_t ctxobj)
{
	for (int i = 0; i < 16 && ctxobj != PH_HEAP_NONE; i++) {
		uint32_t t = traits_of(x, ctxobj);

		if (t & T_ACTIVITY)
			return ctxobj;
		if (!(t & T_CONTEXT_WRAPPER))
			return PH_HEAP_NONE;
		ctxobj = ref_field(x->h, ctxobj,
				   "android.content.ContextWrapper", "mBase",
				   NULL);
	}
	return PH_HEAP_NONE;
}

static bool destroyed_activity(struct ctx *x, uint32_t ctxobj)
{
	uint32_t a = unwrap_activity(x, ctxobj);

	return a != PH_HEAP_NONE &&
	       bool_field(x->h, a, "android.app.Activity", "mDestroyed") == 1;
}

/* ---- inspection --------------------------------------------------------- */

struct verdict {
	const char *yes[8];
	size_t nyes;
	const char *no[8];
	size_t nno;
	const char *labels[16];
	size_t nlabels;
};

static void add(const char **arr, size_t *n, size_t cap, const char *s)
{
	if (*n < cap && s)
		arr[(*n)++] = s;
}
#define YES(v, s)   add((v)->yes, &(v)->nyes, 8, (s))
#define NO(v, s)    add((v)->no, &(v)->nno, 8, (s))
#define LABEL(v, s) add((v)->labels, &(v)->nlabels, 16, (s))

static const char *fragment_decl(uint32_t t)
{
	if (t & T_ANDROIDX_FRAGMENT)
		return "androidx.fragment.app.Fragment";
	if (t & T_SUPPORT_FRAGMENT)
		return "android.support.v4.app.Fragment";
	return "android.app.Fragment";
}

/* androidx: Fragment.mLifecycleRegistry.mState's enum name, or NULL. */
static const char *androidx_state(struct ctx *x, uint32_t obj)
{
	uint32_t reg = ref_field(x->h, obj, "androidx.fragment.app.Fragment",
				 "mLifecycleRegistry", NULL);
	uint32_t st;

	if (reg == PH_HEAP_NONE)
		return NULL;
	st = ref_field(x->h, reg, NULL, "mState", NULL);
	if (st == PH_HEAP_NONE)
		st = ref_field(x->h, reg, NULL, "state", NULL);
	if (st == PH_HEAP_NONE)
		return NULL;
	return string_field(x->h, st, "java.lang.Enum", "name");
}

struct view_facts {
	bool destroyed_ctx, detached, part_of_window, root_view;
	int attach_count;
};

static struct view_facts view_facts(struct ctx *x, uint32_t obj)
{
	struct ph_heap *h = x->h;
	struct view_facts f = { 0 };
	uint32_t parent, root = PH_HEAP_NONE;
	bool present;
	struct ph_heap_value wac;
	int i;

	uint32_t c = ref_field(h, obj, "android.view.View", "mContext", NULL);
	f.destroyed_ctx = c != PH_HEAP_NONE && destroyed_activity(x, c);
	ref_field(h, obj, "android.view.View", "mAttachInfo", &present);
	f.detached = present && ref_field(h, obj, "android.view.View",
					  "mAttachInfo", NULL) == PH_HEAP_NONE;
	wac = ph_heap_get_field(h, obj, "android.view.View",
				"mWindowAttachCount");
	f.attach_count = wac.type == PH_HT_INT ? (int)(int32_t)wac.u : 0;
	parent = ref_field(h, obj, "android.view.View", "mParent", NULL);
	f.root_view = parent == PH_HEAP_NONE ||
		      !(traits_of(x, parent) & T_VIEW);
	for (i = 0; i < 4096 && parent != PH_HEAP_NONE &&
		    (traits_of(x, parent) & T_VIEW);
	     i++) {
		root = parent;
		parent = ref_field(h, parent, "android.view.View", "mParent",
				   NULL);
	}
	f.part_of_window =
		parent != PH_HEAP_NONE ||
		(root != PH_HEAP_NONE && (traits_of(x, root) & T_DECOR_VIEW));
	return f;
}

/* "Outer$1": javac's and kotlinc's name for an anonymous class. */
static bool anonymous_name(const char *name)
{
	const char *d = strrchr(name, '$'), *p;

	if (!d || d == name || !d[1])
		return false;
	for (p = d + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/* The interfaces ART lists in a class's $class$ifTable (an Object[] of
 * interface, method array pairs): the array's object index, or NONE. */
static uint32_t iftable(struct ph_heap *h, uint32_t c)
{
	struct ph_heap_value v = ph_heap_get_static(h, c, "$class$ifTable");
	uint32_t a;

	if (v.type != PH_HT_OBJECT || !v.u)
		return PH_HEAP_NONE;
	a = ph_heap_find(h, v.u);
	return a != PH_HEAP_NONE && ph_heap_kind_of(h, a) == PH_HEAP_OBJ_ARRAY ?
		       a :
		       PH_HEAP_NONE;
}

static bool iftable_has(struct ph_heap *h, uint32_t table, uint64_t id)
{
	uint32_t n = ph_heap_array_length(h, table);

	for (uint32_t i = 0; i < n; i++)
		if (ph_heap_array_ref(h, table, i) == id)
			return true;
	return false;
}

/*
 * LeakCanary's ObjectInspectors.ANONYMOUS_CLASS: an anonymous class says
 * what it extends, or, extending Object, the interface it implements.
 * LeakCanary asks Class.getInterfaces() on the device; a dump has no
 * interface list, but ART writes each class's ifTable as the static
 * "$class$ifTable": the interfaces with their super-interfaces listed
 * before them.  The one named is the first that is no other entry's
 * super-interface, i.e. the first the class declares.  Without an ifTable
 * (a JVM dump) the interface is not known and nothing is said.
 */
static void anonymous_label(struct ph_heap *h, uint32_t obj, struct verdict *v)
{
	uint32_t c = h->cls[obj], sup, table, n;

	if (!anonymous_name(ph_heap_class_name(h, c)))
		return;
	sup = h->classes[c].super;
	if (sup == PH_HEAP_NONE)
		return;
	if (strcmp(h->classes[sup].raw_name, "java.lang.Object")) {
		LABEL(v, afmt(h, "Anonymous subclass of %s",
			      ph_heap_class_name(h, sup)));
		return;
	}
	if ((table = iftable(h, c)) == PH_HEAP_NONE)
		return;
	n = ph_heap_array_length(h, table);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t id = ph_heap_array_ref(h, table, i);
		uint32_t ic = id ? ph_heap_class_by_id(h, id) : PH_HEAP_NONE;
		bool inherited = false;

		if (ic == PH_HEAP_NONE)
			continue; /* a method array */
		for (uint32_t j = 0; j < n && !inherited; j++) {
			uint64_t jd = ph_heap_array_ref(h, table, j);
			uint32_t jc = jd && jd != id ?
					      ph_heap_class_by_id(h, jd) :
					      PH_HEAP_NONE;
			uint32_t jt = jc != PH_HEAP_NONE ? iftable(h, jc) :
							   PH_HEAP_NONE;

			inherited = jt != PH_HEAP_NONE &&
				    iftable_has(h, jt, id);
		}
		if (!inherited) {
			LABEL(v, afmt(h, "Anonymous class implementing %s",
				      ph_heap_class_name(h, ic)));
			return;
		}
	}
	LABEL(v, "Anonymous subclass of java.lang.Object");
}

static void inspect(struct ctx *x, uint32_t obj, struct verdict *v)
{
	struct ph_heap *h = x->h;
	uint32_t t;
	int b;

	memset(v, 0, sizeof(*v));
	if (ph_heap_kind_of(h, obj) == PH_HEAP_CLASS) {
		NO(v, "a class is never leaking");
		return;
	}
	t = traits_of(x, obj);
	if (!t)
		goto fields;
	if (t & T_THREAD) {
		const char *name =
			string_field(h, obj, "java.lang.Thread", "name");

		if (name) {
			LABEL(v, afmt(h, "Thread name: '%s'", name));
			if (!strcmp(name, "main"))
				NO(v, "the main thread always runs");
		}
	}
	if (t & T_ACTIVITY) {
		b = bool_field(h, obj, "android.app.Activity", "mDestroyed");
		if (b == 1)
			YES(v, "Activity#mDestroyed is true");
		else if (b == 0)
			NO(v, "Activity#mDestroyed is false");
	}
	if (t & T_APPLICATION)
		NO(v, "Application is a singleton");
	if (t & T_ACTIVITY_THREAD)
		NO(v, "ActivityThread is a singleton");
	if (t & T_IMM)
		NO(v, "InputMethodManager is a singleton");
	if (t & (T_FRAGMENT | T_SUPPORT_FRAGMENT | T_ANDROIDX_FRAGMENT)) {
		const char *decl = fragment_decl(t);
		const char *st = (t & T_ANDROIDX_FRAGMENT) ?
					 androidx_state(x, obj) :
					 NULL;
		bool present;
		uint32_t fm =
			ref_field(h, obj, decl, "mFragmentManager", &present);
		const char *tag = string_field(h, obj, decl, "mTag");

		if (st && !strcmp(st, "DESTROYED"))
			YES(v,
			    "Fragment.mLifecycleRegistry.state is DESTROYED");
		else if (st)
			NO(v, afmt(h, "Fragment.mLifecycleRegistry.state is %s",
				   st));
		else if (present && fm == PH_HEAP_NONE)
			YES(v, "Fragment#mFragmentManager is null");
		else if (present)
			NO(v, "Fragment#mFragmentManager is not null");
		if (tag && *tag)
			LABEL(v, afmt(h, "Fragment.mTag=%s", tag));
	}
	if (t & T_VIEW) {
		struct view_facts f = view_facts(x, obj);

		if (f.destroyed_ctx)
			YES(v, "View.mContext references a destroyed activity");
		else if (f.part_of_window && f.attach_count > 0) {
			if (f.detached)
				YES(v, "View detached yet still part of window "
				       "view hierarchy");
			else
				NO(v, "View attached");
		}
		LABEL(v, f.part_of_window ?
				 "View is part of a window view hierarchy" :
				 "View not part of a window view hierarchy");
		LABEL(v,
		      f.detached ?
			      "View.mAttachInfo is null (view detached)" :
			      "View.mAttachInfo is not null (view attached)");
		LABEL(v,
		      afmt(h, "View.mWindowAttachCount = %d", f.attach_count));
	}
	if (t & T_WINDOW) {
		b = bool_field(h, obj, "android.view.Window", "mDestroyed");
		if (b == 1)
			YES(v, "Window#mDestroyed is true");
		else if (b == 0)
			LABEL(v, "Window#mDestroyed is false");
	}
	if (t & T_VIEW_ROOT) {
		bool present;
		uint32_t view = ref_field(h, obj, "android.view.ViewRootImpl",
					  "mView", &present);

		if (present && view == PH_HEAP_NONE)
			YES(v, "ViewRootImpl#mView is null");
		else if (present)
			LABEL(v, "ViewRootImpl#mView is not null");
	}
	if (t & T_MESSAGE_QUEUE) {
		b = bool_field(h, obj, "android.os.MessageQueue", "mQuitting");
		if (b < 0)
			b = bool_field(h, obj, "android.os.MessageQueue",
				       "mQuiting");
		if (b == 1)
			YES(v, "MessageQueue#mQuitting is true");
		else if (b == 0)
			NO(v, "MessageQueue#mQuitting is false");
	}
	if (t & T_COMPOSITION) {
		const char *decl = "androidx.compose.runtime.CompositionImpl";
		struct ph_heap_value st;

		b = bool_field(h, obj, decl, "disposed");
		st = ph_heap_get_field(h, obj, decl, "state");
		if (b == 1 || (b < 0 && st.type == PH_HT_INT && st.u == 3))
			YES(v, "Composition disposed");
		else if (b == 0 || (b < 0 && st.type == PH_HT_INT))
			NO(v, "Composition not disposed");
	}
fields:
	/* context fields: say which activity a field holds, and its state */
	if (ph_heap_kind_of(h, obj) == PH_HEAP_INSTANCE) {
		const struct ph_heap_class *k = &h->classes[h->cls[obj]];

		anonymous_label(h, obj, v);

		for (uint32_t i = 0; i < k->nfields && v->nlabels < 12; i++) {
			const struct ph_heap_field *f =
				&h->fields[k->fields + i];
			struct ph_heap_value fv;
			uint32_t o, a;
			int d;

			if (f->type != PH_HT_OBJECT)
				continue;
			fv.u = ph_heap_instance_ref(h, obj, f->offset);
			o = fv.u ? ph_heap_find(h, fv.u) : PH_HEAP_NONE;
			if (o == PH_HEAP_NONE)
				continue;
			a = unwrap_activity(x, o);
			if (a == PH_HEAP_NONE)
				continue;
			d = bool_field(h, a, "android.app.Activity",
				       "mDestroyed");
			if (a == o)
				LABEL(v, afmt(h,
					      "%s instance of %s with "
					      "mDestroyed = %s",
					      ph_heap_field_name(h, h->cls[obj],
								 f),
					      ph_heap_class_name(h, h->cls[o]),
					      d < 0 ? "UNKNOWN" :
					      d	    ? "true" :
						      "false"));
			else
				LABEL(v, afmt(h,
					      "%s instance of %s, wrapping "
					      "activity %s with mDestroyed "
					      "= %s",
					      ph_heap_field_name(h, h->cls[obj],
								 f),
					      ph_heap_class_name(h, h->cls[o]),
					      ph_heap_class_name(h, h->cls[a]),
					      d < 0 ? "UNKNOWN" :
					      d	    ? "true" :
						      "false"));
		}
	}
}

static const char *join(struct ph_heap *h, const char *const *arr, size_t n)
{
	struct ph_buf b = PH_BUF_INIT(65536);
	const char *out;
	int rc = 0;

	for (size_t i = 0; !rc && i < n; i++) {
		if (i)
			rc = ph_buf_addstr(&b, " and ");
		if (!rc)
			rc = ph_buf_addstr(&b, arr[i]);
	}
	out = ph_arena_strndup(&h->arena, b.buf, b.len);
	ph_buf_release(&b);
	return out ? out : "";
}

/*
 * Resolves a verdict into status and reason.  On the leaking object
 * itself, a YES wins a conflict; elsewhere a NO does (shark's rule).
 */
static void resolve(struct ph_heap *h, const struct verdict *v,
		    bool leaking_wins, struct ph_leak_node *n)
{
	const char *no = v->nno ? join(h, v->no, v->nno) : NULL;
	const char *yes = v->nyes ? join(h, v->yes, v->nyes) : NULL;

	n->status = PH_LEAK_UNKNOWN;
	n->reason = "";
	if (no) {
		n->status = PH_LEAK_NO;
		n->reason = no;
	}
	if (yes) {
		if (n->status == PH_LEAK_NO) {
			if (leaking_wins) {
				n->status = PH_LEAK_YES;
				n->reason = afmt(h, "%s. Conflicts with %s",
						 yes, no);
			} else {
				n->reason = afmt(h, "%s. Conflicts with %s", no,
						 yes);
			}
		} else {
			n->status = PH_LEAK_YES;
			n->reason = yes;
		}
	}
	n->nlabels = v->nlabels;
	n->labels = NULL;
	if (v->nlabels) {
		n->labels = ph_arena_alloc(&h->arena,
					   v->nlabels * sizeof(*n->labels));
		if (n->labels)
			memcpy(n->labels, v->labels,
			       v->nlabels * sizeof(*n->labels));
		else
			n->nlabels = 0;
	}
}

/* ---- references between path nodes ------------------------------------- */

/* want_name false: an array element's index is not needed (an elided
 * node), so no string is made for it. */
static void describe_ref(struct ctx *x, const struct ph_heap_paths *p,
			 uint32_t from, uint32_t to, struct ph_leak_node *n,
			 bool want_name)
{
	struct ph_heap *h = x->h;
	uint64_t id = ph_heap_id(h, to);

	n->ref_kind = 1;
	n->ref_owner = simple_name(ph_heap_class_name(h, h->cls[from]));
	n->ref_name = "?";
	n->ref_generic = "?";
	if (p && (p->state[to] & PH_PATH_LOCAL)) {
		n->ref_kind = 3;
		n->ref_name = n->ref_generic = "<Java Local>";
		return;
	}
	switch (ph_heap_kind_of(h, from)) {
	case PH_HEAP_CLASS: {
		const struct ph_heap_class *k = &h->classes[h->cls[from]];
		uint64_t q = k->statics_off;

		n->ref_kind = 0;
		n->ref_owner = simple_name(k->name);
		for (uint32_t i = 0; i < k->nstatics; i++) {
			const uint8_t *d = h->data + q;
			unsigned t = d[h->idsz];
			size_t ts = ph_heap_type_size(h, t);
			uint64_t v = 0;

			if (t == PH_HT_OBJECT) {
				for (uint32_t j = 0; j < h->idsz; j++)
					v = v << 8 | d[h->idsz + 1 + j];
				if (v == id) {
					struct ph_heap_field f = { 0 };
					uint64_t sid = 0;

					for (uint32_t j = 0; j < h->idsz; j++)
						sid = sid << 8 | d[j];
					f.name_sid = sid;
					n->ref_name = n->ref_generic =
						ph_heap_field_name(
							h, h->cls[from], &f);
					return;
				}
			}
			q += h->idsz + 1 + ts;
		}
		return;
	}
	case PH_HEAP_INSTANCE: {
		const struct ph_heap_class *k = &h->classes[h->cls[from]];
		uint64_t rec = ph_heap_rec(h, from);
		const uint8_t *d = h->data + rec + 1 + 2 * h->idsz + 8;
		uint32_t len = 0;

		for (int j = 0; j < 4; j++)
			len = len << 8 | d[-4 + j];
		for (uint32_t i = 0; i < k->nfields; i++) {
			const struct ph_heap_field *f =
				&h->fields[k->fields + i];
			uint64_t v = 0;

			if (f->type != PH_HT_OBJECT ||
			    f->offset + h->idsz > len)
				continue;
			for (uint32_t j = 0; j < h->idsz; j++)
				v = v << 8 | d[f->offset + j];
			if (v != id || (uint32_t)f->offset == k->referent_off)
				continue;
			uint32_t decl = h->cls[from];
			for (uint16_t j = 0;
			     j < f->decl && decl != PH_HEAP_NONE; j++)
				decl = h->classes[decl].super;
			if (decl != PH_HEAP_NONE)
				n->ref_owner =
					simple_name(h->classes[decl].name);
			n->ref_name = n->ref_generic =
				ph_heap_field_name(h, h->cls[from], f);
			return;
		}
		return;
	}
	case PH_HEAP_OBJ_ARRAY: {
		uint32_t len = ph_heap_array_length(h, from);

		n->ref_kind = 2;
		n->ref_generic = "[x]";
		if (!want_name)
			return;
		for (uint32_t i = 0; i < len; i++)
			if (ph_heap_array_ref(h, from, i) == id) {
				n->ref_name = afmt(h, "[%u]", i);
				return;
			}
		return;
	}
	default: return;
	}
}

/* The library-leak pattern a path reference matches, or NULL. */
static const char *library_desc(struct ctx *x, const struct ph_leak_node *n)
{
	for (size_t l = 0; l < ph_heap_nlibrefs; l++) {
		const struct ph_heap_libref *lr = &ph_heap_librefs[l];

		if ((n->ref_kind == 0) == lr->is_static && n->ref_kind <= 1 &&
		    !strcmp(simple_name(lr->cls), n->ref_owner) &&
		    !strcmp(lr->field, n->ref_name))
			return afmt(x->h, "%s %s#%s: %s",
				    lr->is_static ? "static field" :
						    "instance field",
				    lr->cls, lr->field, lr->desc);
	}
	return NULL;
}

static uint8_t root_kind_of(const struct ph_heap *h, uint32_t obj)
{
	static const uint8_t pref[] = {
		PH_ROOT_STICKY_CLASS,
		PH_ROOT_THREAD_OBJECT,
		PH_ROOT_JNI_GLOBAL,
		PH_ROOT_MONITOR_USED,
	};
	uint8_t best = 0;
	int best_rank = 99;

	for (size_t i = 0; i < h->nroots; i++) {
		int rank = 4;

		if (h->roots[i].obj != obj ||
		    h->roots[i].kind == PH_ROOT_UNREACHABLE)
			continue;
		for (int k = 0; k < 4; k++)
			if (pref[k] == h->roots[i].kind)
				rank = k;
		if (rank < best_rank) {
			best_rank = rank;
			best = h->roots[i].kind;
		}
	}
	return best ? best : PH_ROOT_UNKNOWN;
}

/*
 * The whole path while a trace is built: what the kept nodes do not hold.
 * Lives only until finish_trace() is done (a few bytes per reference).
 */
struct path_work {
	uint32_t *chain;      /* object at each position, root first */
	uint8_t *status;      /* enum ph_leak_status at each position */
	const char **generic; /* the reference's generic name (signature) */
	size_t n;
};

static void path_work_release(struct path_work *w)
{
	free(w->chain);
	free(w->status);
	free(w->generic);
	memset(w, 0, sizeof(*w));
}

/* The kept node at path position i, or NULL when it was elided. */
static struct ph_leak_node *kept(const struct ph_leak_trace *t, size_t i)
{
	if (!t->elided || i < t->elided_at)
		return &t->nodes[i];
	if (i >= t->elided_at + t->elided)
		return &t->nodes[i - t->elided];
	return NULL;
}

/*
 * Builds the trace to obj from the path search.  leak_reason (may be NULL)
 * makes the last node YES with that reason added.  Every position is
 * inspected, but only the kept ones (struct ph_leak_trace) become nodes;
 * w gets the rest, for finish_trace().
 */
static int build_trace(struct ctx *x, const struct ph_heap_paths *p,
		       uint32_t obj, const char *leak_reason,
		       const char **leak_labels, size_t nleak_labels,
		       struct ph_leak_trace *t, struct path_work *w)
{
	struct ph_heap *h = x->h;
	size_t n = 0, cap = 0;
	uint32_t *chain = NULL;
	struct verdict v;

	memset(t, 0, sizeof(*t));
	memset(w, 0, sizeof(*w));
	t->first_suspect = PH_HEAP_NONE;
	for (uint32_t y = obj; y != PH_HEAP_NONE; y = p->parent[y]) {
		if (n == cap) {
			cap = cap ? cap * 2 : 32;
			uint32_t *nc = realloc(chain, cap * 4);
			if (!nc) {
				free(chain);
				return PH_ENOMEM;
			}
			chain = nc;
		}
		chain[n++] = y;
		if (n > h->nobj) {
			free(chain);
			return PH_EINVAL; /* a cycle: cannot happen */
		}
	}
	for (size_t i = 0; i < n / 2; i++) {
		uint32_t tmp = chain[i];

		chain[i] = chain[n - 1 - i];
		chain[n - 1 - i] = tmp;
	}
	w->chain = chain;
	w->n = n;
	w->status = calloc(n ? n : 1, 1);
	w->generic = calloc(n ? n : 1, sizeof(*w->generic));
	t->length = n;
	if (n > PH_LEAK_KEEP_ROOT + PH_LEAK_KEEP_LEAK) {
		t->elided_at = PH_LEAK_KEEP_ROOT;
		t->elided = n - PH_LEAK_KEEP_ROOT - PH_LEAK_KEEP_LEAK;
	}
	t->nnodes = n - t->elided;
	t->nodes = ph_arena_alloc(&h->arena, t->nnodes * sizeof(*t->nodes));
	if (!t->nodes || !w->status || !w->generic) {
		path_work_release(w);
		return PH_ENOMEM;
	}
	memset(t->nodes, 0, t->nnodes * sizeof(*t->nodes));
	for (size_t i = 0; i < n; i++)
		if (kept(t, i))
			kept(t, i)->obj = chain[i];
	t->root_kind = root_kind_of(h, chain[0]);
	if (n > 1 && (p->state[chain[1]] & PH_PATH_LOCAL)) {
		for (size_t i = 0; i < h->nroots; i++)
			if (h->roots[i].obj == chain[1] && h->roots[i].thread) {
				t->root_kind = h->roots[i].kind;
				break;
			}
	}
	for (size_t i = 0; i < n; i++) {
		struct ph_leak_node tmp = { .obj = chain[i] };
		struct ph_leak_node *nd = kept(t, i);
		bool last = i + 1 == n;

		if (!nd)
			nd = &tmp;
		if (!last) {
			describe_ref(x, p, chain[i], chain[i + 1], nd,
				     nd != &tmp);
			w->generic[i] = nd->ref_generic;
			if (!t->library &&
			    (p->state[chain[i + 1]] & PH_PATH_LIBRARY)) {
				const char *d = library_desc(x, nd);

				if (d) {
					t->library = true;
					t->library_desc = d;
				}
			}
		}
		inspect(x, chain[i], &v);
		if (last && leak_reason)
			YES(&v, leak_reason);
		for (size_t k = 0; last && k < nleak_labels; k++)
			LABEL(&v, leak_labels[k]);
		resolve(h, &v, last && leak_reason, nd);
		w->status[i] = nd->status;
	}
	if (h->retained) {
		t->retained = h->retained[obj];
		t->retained_count = h->retained_count[obj];
	}
	return 0;
}

static const char *obj_simple(struct ph_heap *h, uint32_t obj)
{
	return simple_name(ph_heap_class_name(h, h->cls[obj]));
}

/*
 * shark's propagation, then suspects and the signature, over the whole
 * path in w; reasons are written only on the kept nodes.
 */
static void finish_trace(struct ph_heap *h, struct ph_leak_trace *t,
			 bool force_last, struct path_work *w)
{
	size_t n = w->n, last_no = 0, first_yes;
	bool any_no = false;
	uint8_t *st = w->status;
	struct ph_heap_sha1 sig;

	if (!n)
		return;
	if (force_last && st[n - 1] != PH_LEAK_YES)
		st[n - 1] = kept(t, n - 1)->status = PH_LEAK_YES;
	for (size_t i = 0; i + 1 < n; i++)
		if (st[i] == PH_LEAK_NO) {
			last_no = i;
			any_no = true;
		}
	first_yes = n - 1;
	for (size_t i = 0; i + 1 < n; i++)
		if (st[i] == PH_LEAK_YES) {
			first_yes = i;
			break;
		}
	if (any_no && first_yes < last_no)
		first_yes = n - 1; /* a YES before a NO does not spread */
	for (size_t i = 0, next = 0; any_no && i < last_no; i++) {
		struct ph_leak_node *nd = kept(t, i);

		if (next <= i)
			for (next = i + 1;
			     next < last_no && st[next] != PH_LEAK_NO; next++)
				;
		if (nd) {
			const char *nn = obj_simple(h, w->chain[next]);

			if (nd->status == PH_LEAK_UNKNOWN)
				nd->reason = afmt(
					h, "%s\xe2\x86\x93 is not leaking", nn);
			else if (nd->status == PH_LEAK_NO)
				nd->reason = afmt(h,
						  "%s\xe2\x86\x93 is not "
						  "leaking and %s",
						  nn, nd->reason);
			else
				nd->reason = afmt(h,
						  "%s\xe2\x86\x93 is not "
						  "leaking. Conflicts with %s",
						  nn, nd->reason);
			nd->status = PH_LEAK_NO;
		}
		st[i] = PH_LEAK_NO;
	}
	for (size_t i = first_yes + 1; i < n; i++) {
		struct ph_leak_node *nd = kept(t, i);

		/* every node from first_yes on is YES by now: the one
		 * before names the cause */
		if (nd) {
			const char *pn = obj_simple(h, w->chain[i - 1]);

			if (nd->status == PH_LEAK_YES && *nd->reason)
				nd->reason = afmt(h,
						  "%s\xe2\x86\x91 is leaking "
						  "and %s",
						  pn, nd->reason);
			else
				nd->reason = afmt(
					h, "%s\xe2\x86\x91 is leaking", pn);
			nd->status = PH_LEAK_YES;
		}
		st[i] = PH_LEAK_YES;
	}
	/* suspects: from the last NO up to the first YES, all hashed */
	ph_heap_sha1_init(&sig);
	t->first_suspect = PH_HEAP_NONE;
	for (size_t i = 0; i + 1 < n; i++) {
		struct ph_leak_node *nd = kept(t, i);
		bool suspect = false;

		if (st[i] == PH_LEAK_UNKNOWN)
			suspect = true;
		else if (st[i] == PH_LEAK_NO)
			suspect = i + 2 == n || st[i + 1] != PH_LEAK_NO;
		if (nd)
			nd->suspect = suspect;
		if (suspect && t->first_suspect == PH_HEAP_NONE) {
			t->first_suspect = w->chain[i];
			t->first_suspect_ref = w->generic[i];
		}
		if (suspect) {
			const char *cn =
				ph_heap_class_name(h, h->cls[w->chain[i]]);

			ph_heap_sha1_update(&sig, cn, strlen(cn));
			ph_heap_sha1_update(&sig, w->generic[i],
					    strlen(w->generic[i]));
		}
	}
	ph_heap_sha1_final_hex(&sig, t->signature);
}

/* ---- finding leaking objects -------------------------------------------- */

struct cand {
	uint32_t obj;
	const char *reason;
	const char *labels[4];
	size_t nlabels;
};

struct cands {
	struct cand *p;
	size_t n, cap;
};

static struct cand *cand_add(struct cands *cs, uint32_t obj, const char *reason)
{
	for (size_t i = 0; i < cs->n; i++)
		if (cs->p[i].obj == obj)
			return NULL; /* first reason wins */
	if (cs->n == cs->cap && PH_GROW(cs->p, cs->cap, cs->n + 1, 64))
		return NULL;
	memset(&cs->p[cs->n], 0, sizeof(cs->p[0]));
	cs->p[cs->n].obj = obj;
	cs->p[cs->n].reason = reason;
	return &cs->p[cs->n++];
}

static void find_watched(struct ctx *x, struct cands *cs)
{
	struct ph_heap *h = x->h;
	int64_t dump_uptime = -1;

	for (uint32_t c = 0; c < h->nclasses_real; c++)
		if ((x->traits[c] & T_KWR) &&
		    ph_heap_class_is_named(h, c,
					   "leakcanary.KeyedWeakReference")) {
			uint32_t k = ph_heap_class_by_name(
				h, "leakcanary.KeyedWeakReference");
			struct ph_heap_value v = ph_heap_get_static(
				h, k, "heapDumpUptimeMillis");

			if (v.type == PH_HT_LONG)
				dump_uptime = (int64_t)v.u;
			break;
		}
	for (uint32_t i = 0; i < h->nobj; i++) {
		struct ph_heap_value ret, watch;
		int64_t d;
		const char *desc, *key;
		uint32_t ref;
		struct cand *cd;

		if (!(traits_of(x, i) & T_KWR))
			continue;
		ret = ph_heap_get_field(h, i, NULL, "retainedUptimeMillis");
		if (ret.type == PH_HT_LONG && (int64_t)ret.u == -1)
			continue; /* watched, not (yet) retained */
		ref = ref_field(h, i, "java.lang.ref.Reference", "referent",
				NULL);
		if (ref == PH_HEAP_NONE)
			continue;
		desc = string_field(h, i, NULL, "description");
		if (!desc)
			desc = string_field(h, i, NULL, "name");
		key = string_field(h, i, NULL, "key");
		cd = cand_add(cs, ref,
			      afmt(h,
				   "ObjectWatcher was watching this because %s",
				   desc ? desc : "it was asked to"));
		if (!cd)
			continue;
		if (key)
			cd->labels[cd->nlabels++] = afmt(h, "key = %s", key);
		/*
		 * The fields come from the dump: a hostile one can make the
		 * difference overflow (found by fuzz_heap); then say nothing.
		 */
		watch = ph_heap_get_field(h, i, NULL, "watchUptimeMillis");
		if (watch.type == PH_HT_LONG && dump_uptime >= 0 &&
		    !__builtin_sub_overflow(dump_uptime, (int64_t)watch.u, &d))
			cd->labels[cd->nlabels++] =
				afmt(h, "watchDurationMillis = %" PRId64, d);
		if (ret.type == PH_HT_LONG && dump_uptime >= 0 &&
		    !__builtin_sub_overflow(dump_uptime, (int64_t)ret.u, &d))
			cd->labels[cd->nlabels++] =
				afmt(h, "retainedDurationMillis = %" PRId64, d);
	}
}

/* Objects whose own state says they are done with. */
static void find_inspected(struct ctx *x, struct cands *cs)
{
	struct ph_heap *h = x->h;

	for (uint32_t i = 0; i < h->nobj; i++) {
		uint32_t t = traits_of(x, i);
		int b;

		if (ph_heap_kind_of(h, i) != PH_HEAP_INSTANCE)
			continue;
		if (x->watch != PH_HEAP_NONE &&
		    ph_heap_class_is(h, h->cls[i], x->watch)) {
			cand_add(cs, i,
				 afmt(h,
				      "an instance of %s, watched with --class",
				      h->classes[x->watch].name));
			continue;
		}
		if (!t)
			continue;
		if ((t & T_ACTIVITY) &&
		    bool_field(h, i, "android.app.Activity", "mDestroyed") == 1)
			cand_add(cs, i, NULL);
		else if (t & (T_FRAGMENT | T_SUPPORT_FRAGMENT |
			      T_ANDROIDX_FRAGMENT)) {
			const char *st = (t & T_ANDROIDX_FRAGMENT) ?
						 androidx_state(x, i) :
						 NULL;
			bool present;
			uint32_t fm = ref_field(h, i, fragment_decl(t),
						"mFragmentManager", &present);

			if ((st && !strcmp(st, "DESTROYED")) ||
			    (!st && present && fm == PH_HEAP_NONE))
				cand_add(cs, i, NULL);
		} else if (t & T_VIEW) {
			struct view_facts f = view_facts(x, i);

			if (f.root_view && (f.destroyed_ctx ||
					    (f.detached && f.attach_count > 0)))
				cand_add(cs, i,
					 f.destroyed_ctx ?
						 NULL :
						 "View.mAttachInfo is null "
						 "after it was attached "
						 "(view detached)");
		} else if ((t & T_WINDOW) &&
			   bool_field(h, i, "android.view.Window",
				      "mDestroyed") == 1) {
			cand_add(cs, i, NULL);
		} else if (t & T_VIEW_ROOT) {
			bool present;
			uint32_t v = ref_field(h, i,
					       "android.view.ViewRootImpl",
					       "mView", &present);

			if (present && v == PH_HEAP_NONE)
				cand_add(cs, i, NULL);
		} else if (t & T_MESSAGE_QUEUE) {
			b = bool_field(h, i, "android.os.MessageQueue",
				       "mQuitting");
			if (b < 0)
				b = bool_field(h, i, "android.os.MessageQueue",
					       "mQuiting");
			if (b == 1)
				cand_add(cs, i, NULL);
		} else if (t & T_COMPOSITION) {
			struct verdict v;

			inspect(x, i, &v);
			if (v.nyes)
				cand_add(cs, i, NULL);
		}
	}
}

static int cmp_trace(const void *a, const void *b)
{
	const struct ph_leak_trace *x = a, *y = b;

	if (x->library != y->library)
		return x->library ? 1 : -1;
	if (x->retained != y->retained)
		return x->retained > y->retained ? -1 : 1;
	return strcmp(x->signature, y->signature);
}

int ph_heap_leaks(struct ph_heap *h, const struct ph_leak_opts *opts,
		  struct ph_leak_result *out)
{
	struct ctx x = { .h = h, .watch = PH_HEAP_NONE };
	struct cands cs = { 0 };
	struct ph_heap_paths p = { 0 };
	uint32_t *targets = NULL;
	struct ph_leak_trace *traces = NULL;
	struct path_work w;
	size_t nt = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = ph_heap_graph(h);
	if (rc)
		return rc;
	rc = traits_build(&x);
	if (rc)
		return rc;
	if (opts && opts->watch_class) {
		x.watch = ph_heap_class_by_name(h, opts->watch_class);
		if (x.watch == PH_HEAP_NONE) {
			rc = PH_ENOENT;
			goto out;
		}
	}
	find_watched(&x, &cs);
	find_inspected(&x, &cs);
	out->nleaking = cs.n;
	if (!cs.n)
		goto out;
	if (!opts || opts->with_retained) {
		rc = ph_heap_dominators(h);
		if (rc)
			goto out;
	}
	targets = malloc(cs.n * 4);
	traces = calloc(cs.n, sizeof(*traces));
	if (!targets || !traces) {
		rc = PH_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < cs.n; i++)
		targets[i] = cs.p[i].obj;
	rc = ph_heap_paths(h, &p, targets, cs.n);
	if (rc)
		goto out;
	/* a leaking object kept by another leaking object is that one's */
	uint8_t *is_cand = calloc((size_t)h->nobj / 8 + 1, 1);
	if (!is_cand) {
		rc = PH_ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < cs.n; i++)
		is_cand[cs.p[i].obj / 8] |= (uint8_t)(1u << (cs.p[i].obj % 8));
	for (size_t i = 0; i < cs.n; i++) {
		uint32_t o = cs.p[i].obj;
		bool covered = false;

		if (!(p.state[o] & 1)) {
			out->unreachable_leaking++;
			continue;
		}
		for (uint32_t y = p.parent[o], k = 0;
		     y != PH_HEAP_NONE && k <= h->nobj; y = p.parent[y], k++)
			if (is_cand[y / 8] & (1u << (y % 8))) {
				covered = true;
				break;
			}
		if (covered)
			continue;
		rc = build_trace(&x, &p, o, cs.p[i].reason, cs.p[i].labels,
				 cs.p[i].nlabels, &traces[nt], &w);
		if (rc) {
			free(is_cand);
			goto out;
		}
		finish_trace(h, &traces[nt], true, &w);
		path_work_release(&w);
		nt++;
	}
	free(is_cand);
	/* group by signature; keep the shortest trace of each group */
	qsort(traces, nt, sizeof(*traces), cmp_trace);
	size_t ng = 0;
	for (size_t i = 0; i < nt; i++) {
		size_t g;

		for (g = 0; g < ng; g++)
			if (!strcmp(traces[g].signature, traces[i].signature))
				break;
		if (g < ng) {
			traces[g].group_count++;
			if (traces[i].length < traces[g].length) {
				uint32_t cnt = traces[g].group_count;

				traces[g] = traces[i];
				traces[g].group_count = cnt;
			}
			continue;
		}
		traces[ng] = traces[i];
		traces[ng].group_count = 1;
		ng++;
	}
	qsort(traces, ng, sizeof(*traces), cmp_trace);
	out->traces = ph_arena_alloc(&h->arena, (ng + 1) * sizeof(*traces));
	if (!out->traces) {
		rc = PH_ENOMEM;
		goto out;
	}
	memcpy(out->traces, traces, ng * sizeof(*traces));
	out->ntraces = ng;
	for (size_t i = 0; i < ng; i++) {
		if (traces[i].library)
			out->nlib++;
		else
			out->napp++;
	}
out:
	ph_heap_paths_release(&p);
	free(targets);
	free(traces);
	free(cs.p);
	free(x.traits);
	return rc;
}

int ph_heap_path_trace(struct ph_heap *h, uint32_t obj,
		       struct ph_leak_trace *out)
{
	struct ctx x = { .h = h, .watch = PH_HEAP_NONE };
	struct ph_heap_paths p;
	struct path_work w = { 0 };
	int rc;

	if (obj >= h->nobj)
		return PH_ENOENT;
	rc = ph_heap_graph(h);
	if (!rc)
		rc = traits_build(&x);
	if (rc)
		return rc;
	rc = ph_heap_paths(h, &p, &obj, 1);
	if (!rc && !(p.state[obj] & 1))
		rc = PH_ENOENT;
	if (!rc)
		rc = build_trace(&x, &p, obj, NULL, NULL, 0, out, &w);
	if (!rc)
		finish_trace(h, out, false, &w);
	path_work_release(&w);
	ph_heap_paths_release(&p);
	free(x.traits);
	return rc;
}

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
