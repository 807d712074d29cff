/* SPDX-License-Identifier: Apache-2.0 */
/*
 * leak_inspect.c: what every object on a leak path is known to be, and
 * which objects are leaking.  LeakCanary's AndroidObjectInspectors
 * (square/leakcanary, shark-android), re-stated in docs/heap.md: each
 * object gets YES / NO / UNKNOWN with reasons from its class and its own
 * fields, and the leaking objects are the referents of retained
 * KeyedWeakReference watches plus the objects whose own state says they
 * are done.  leaks.c builds the traces to them.
 */
#include "ph_common.h"
#include "heap.h"
#include "leaks_int.h"

const char *ph_leak_afmt(struct ph_heap *h, const char *fmt, ...)
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

const char *ph_leak_simple_name(const char *name)
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

int ph_leak_traits_build(struct ph_leak_ctx *x)
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

static uint32_t traits_of(const struct ph_leak_ctx *x, uint32_t obj)
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
static uint32_t unwrap_activity(struct ph_leak_ctx *x, uint32_t ctxobj)
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

static bool destroyed_activity(struct ph_leak_ctx *x, uint32_t ctxobj)
{
	uint32_t a = unwrap_activity(x, ctxobj);

	return a != PH_HEAP_NONE &&
	       bool_field(x->h, a, "android.app.Activity", "mDestroyed") == 1;
}

/* ---- inspection --------------------------------------------------------- */

void ph_leak_verdict_add(const char **arr, size_t *n, size_t cap, const char *s)
{
	if (*n < cap && s)
		arr[(*n)++] = s;
}

static const char *fragment_decl(uint32_t t)
{
	if (t & T_ANDROIDX_FRAGMENT)
		return "androidx.fragment.app.Fragment";
	if (t & T_SUPPORT_FRAGMENT)
		return "android.support.v4.app.Fragment";
	return "android.app.Fragment";
}

/* androidx: Fragment.mLifecycleRegistry.mState's enum name, or NULL. */
static const char *androidx_state(struct ph_leak_ctx *x, uint32_t obj)
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

static struct view_facts view_facts(struct ph_leak_ctx *x, uint32_t obj)
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
static void anonymous_label(struct ph_heap *h, uint32_t obj,
			    struct ph_leak_verdict *v)
{
	uint32_t c = h->cls[obj], sup, table, n;

	if (!anonymous_name(ph_heap_class_name(h, c)))
		return;
	sup = h->classes[c].super;
	if (sup == PH_HEAP_NONE)
		return;
	if (strcmp(h->classes[sup].raw_name, "java.lang.Object")) {
		LABEL(v, ph_leak_afmt(h, "Anonymous subclass of %s",
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
			LABEL(v,
			      ph_leak_afmt(h, "Anonymous class implementing %s",
					   ph_heap_class_name(h, ic)));
			return;
		}
	}
	LABEL(v, "Anonymous subclass of java.lang.Object");
}

void ph_leak_inspect(struct ph_leak_ctx *x, uint32_t obj,
		     struct ph_leak_verdict *v)
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
			LABEL(v, ph_leak_afmt(h, "Thread name: '%s'", name));
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
			NO(v,
			   ph_leak_afmt(
				   h, "Fragment.mLifecycleRegistry.state is %s",
				   st));
		else if (present && fm == PH_HEAP_NONE)
			YES(v, "Fragment#mFragmentManager is null");
		else if (present)
			NO(v, "Fragment#mFragmentManager is not null");
		if (tag && *tag)
			LABEL(v, ph_leak_afmt(h, "Fragment.mTag=%s", tag));
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
		LABEL(v, ph_leak_afmt(h, "View.mWindowAttachCount = %d",
				      f.attach_count));
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
				LABEL(v,
				      ph_leak_afmt(
					      h,
					      "%s instance of %s with "
					      "mDestroyed = %s",
					      ph_heap_field_name(h, h->cls[obj],
								 f),
					      ph_heap_class_name(h, h->cls[o]),
					      d < 0 ? "UNKNOWN" :
					      d	    ? "true" :
						      "false"));
			else
				LABEL(v,
				      ph_leak_afmt(
					      h,
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
void ph_leak_resolve(struct ph_heap *h, const struct ph_leak_verdict *v,
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
				n->reason = ph_leak_afmt(
					h, "%s. Conflicts with %s", yes, no);
			} else {
				n->reason = ph_leak_afmt(
					h, "%s. Conflicts with %s", no, yes);
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

/* ---- finding leaking objects -------------------------------------------- */

static struct ph_leak_cand *cand_add(struct ph_leak_cands *cs, uint32_t obj,
				     const char *reason)
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

void ph_leak_find_watched(struct ph_leak_ctx *x, struct ph_leak_cands *cs)
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
		struct ph_leak_cand *cd;

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
		cd = cand_add(
			cs, ref,
			ph_leak_afmt(
				h, "ObjectWatcher was watching this because %s",
				desc ? desc : "it was asked to"));
		if (!cd)
			continue;
		if (key)
			cd->labels[cd->nlabels++] =
				ph_leak_afmt(h, "key = %s", key);
		/*
		 * The fields come from the dump: a hostile one can make the
		 * difference overflow (found by fuzz_heap); then say nothing.
		 */
		watch = ph_heap_get_field(h, i, NULL, "watchUptimeMillis");
		if (watch.type == PH_HT_LONG && dump_uptime >= 0 &&
		    !__builtin_sub_overflow(dump_uptime, (int64_t)watch.u, &d))
			cd->labels[cd->nlabels++] = ph_leak_afmt(
				h, "watchDurationMillis = %" PRId64, d);
		if (ret.type == PH_HT_LONG && dump_uptime >= 0 &&
		    !__builtin_sub_overflow(dump_uptime, (int64_t)ret.u, &d))
			cd->labels[cd->nlabels++] = ph_leak_afmt(
				h, "retainedDurationMillis = %" PRId64, d);
	}
}

/* Objects whose own state says they are done with. */
void ph_leak_find_inspected(struct ph_leak_ctx *x, struct ph_leak_cands *cs)
{
	struct ph_heap *h = x->h;

	for (uint32_t i = 0; i < h->nobj; i++) {
		uint32_t t = traits_of(x, i);
		int b;

		if (ph_heap_kind_of(h, i) != PH_HEAP_INSTANCE)
			continue;
		if (x->watch != PH_HEAP_NONE &&
		    ph_heap_class_is(h, h->cls[i], x->watch)) {
			cand_add(
				cs, i,
				ph_leak_afmt(
					h,
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
			struct ph_leak_verdict v;

			ph_leak_inspect(x, i, &v);
			if (v.nyes)
				cand_add(cs, i, NULL);
		}
	}
}
