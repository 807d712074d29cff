/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_heap_planted.h: the planted-leak dumps, built with the test writer.
 * Shared by the unit tests (which also keep tests/golden/heap/ in step
 * with them) and by the fuzzer's seed corpus.
 */
#ifndef TEST_HEAP_PLANTED_H
#define TEST_HEAP_PLANTED_H

#include "test_heap_writer.h"

enum { T_OBJ = 2, T_BOOL = 4, T_CHAR = 5, T_BYTE = 8, T_INT = 10, T_LONG = 11 };

struct base_classes {
	uint32_t object, activity, main, objarr;
};

static void put4(struct ph_buf *b, uint32_t v, int *err)
{
	hw_u4(b, v, err);
}

static void base_classes(struct hw *w, struct base_classes *c)
{
	static const struct hw_field act[] = { { "mDestroyed", T_BOOL, 0 } };
	static const struct hw_field main[] = { { "mViews", T_OBJ, 0 } };

	hw_heap(w, 'A', "app");
	c->object = hw_class(w, "java.lang.Object", 0, 8, NULL, 0, NULL, 0);
	c->objarr = hw_class(w, "java.lang.Object[]", c->object, 0, NULL, 0,
			     NULL, 0);
	c->activity = hw_class(w, "android.app.Activity", c->object, 12, act, 1,
			       NULL, 0);
	c->main = hw_class(w, "com.example.MainActivity", c->activity, 16, main,
			   1, NULL, 0);
}

/* A destroyed MainActivity holding 46,300 bytes in 942 objects. */
static uint32_t destroyed_activity(struct hw *w, const struct base_classes *c,
				   bool with_views)
{
	uint32_t act = hw_new_id(w), arr = 0;
	struct ph_buf f = PH_BUF_INIT(PH_BUF_NO_CAP);

	if (with_views) {
		uint32_t views[940];

		for (int i = 0; i < 940; i++)
			views[i] = hw_primarray(w, T_BYTE, NULL,
						i == 939 ? 269 : 45, 1);
		arr = hw_objarray_at(w, hw_new_id(w), c->objarr, views, 940);
	}
	put4(&f, arr, &w->err); /* MainActivity.mViews */
	hw_u1(&f, 1, &w->err);	/* Activity.mDestroyed */
	hw_instance_at(w, act, c->main, &f);
	ph_buf_release(&f);
	return act;
}

/* static Foo.sInstance -> a destroyed MainActivity (the example). */
static const struct ph_buf *planted_static(struct hw *w)
{
	struct base_classes c;
	uint32_t act;

	hw_init(w);
	base_classes(w, &c);
	act = hw_new_id(w);
	{
		struct hw_field st[] = { { "sInstance", T_OBJ, act } };

		hw_class(w, "com.example.Foo", c.object, 8, NULL, 0, st, 1);
	}
	{
		uint32_t views[940], arr;
		struct ph_buf f = PH_BUF_INIT(PH_BUF_NO_CAP);

		for (int i = 0; i < 940; i++)
			views[i] = hw_primarray(w, T_BYTE, NULL,
						i == 939 ? 269 : 45, 1);
		arr = hw_objarray_at(w, hw_new_id(w), c.objarr, views, 940);
		put4(&f, arr, &w->err);
		hw_u1(&f, 1, &w->err);
		hw_instance_at(w, act, c.main, &f);
		ph_buf_release(&f);
	}
	return hw_finish(w);
}

/* EventBus.listeners (an ArrayList) -> MainActivity$1 -> MainActivity. */
static const struct ph_buf *planted_listener(struct hw *w)
{
	static const struct hw_field al[] = { { "elementData", T_OBJ, 0 },
					      { "size", T_INT, 0 } };
	static const struct hw_field anon[] = { { "this$0", T_OBJ, 0 } };
	struct base_classes c;
	uint32_t list = 0x90000, lcls, anoncls, act, l, arr;
	struct ph_buf f = PH_BUF_INIT(PH_BUF_NO_CAP);

	hw_init(w);
	base_classes(w, &c);
	{
		struct hw_field st[] = { { "listeners", T_OBJ, list } };

		hw_class(w, "com.example.EventBus", c.object, 8, NULL, 0, st,
			 1);
	}
	lcls = hw_class(w, "java.util.ArrayList", c.object, 16, al, 2, NULL, 0);
	anoncls = hw_class(w, "com.example.MainActivity$1", c.object, 12, anon,
			   1, NULL, 0);
	act = destroyed_activity(w, &c, false);
	put4(&f, act, &w->err);
	l = hw_instance_at(w, hw_new_id(w), anoncls, &f);
	ph_buf_reset(&f);
	{
		uint32_t elems[3] = { l, 0, 0 };

		arr = hw_objarray_at(w, hw_new_id(w), c.objarr, elems, 3);
	}
	put4(&f, arr, &w->err);
	put4(&f, 1, &w->err);
	hw_instance_at(w, list, lcls, &f);
	ph_buf_release(&f);
	return hw_finish(w);
}

/* A java.lang.String over a char[] (UTF-16, big-endian in the dump). */
static uint32_t hw_jstring(struct hw *w, uint32_t strcls, const char *s)
{
	size_t n = strlen(s);
	uint8_t *chars = malloc(2 * n + 1);
	uint32_t arr, id;
	struct ph_buf f = PH_BUF_INIT(PH_BUF_NO_CAP);

	for (size_t i = 0; i < n; i++) {
		chars[2 * i] = 0;
		chars[2 * i + 1] = (uint8_t)s[i];
	}
	arr = hw_primarray(w, T_CHAR, chars, (uint32_t)n, 2);
	free(chars);
	put4(&f, arr, &w->err);
	put4(&f, (uint32_t)n, &w->err);
	id = hw_instance_at(w, hw_new_id(w), strcls, &f);
	ph_buf_release(&f);
	return id;
}

/* A retained KeyedWeakReference watch on a Presenter held by a static. */
static const struct ph_buf *planted_watched(struct hw *w)
{
	static const struct hw_field str[] = { { "value", T_OBJ, 0 },
					       { "count", T_INT, 0 } };
	static const struct hw_field ref[] = { { "referent", T_OBJ, 0 } };
	static const struct hw_field kwr[] = {
		{ "key", T_OBJ, 0 },
		{ "description", T_OBJ, 0 },
		{ "watchUptimeMillis", T_LONG, 0 },
		{ "retainedUptimeMillis", T_LONG, 0 },
	};
	static const struct hw_field kwrst[] = {
		{ "heapDumpUptimeMillis", T_LONG, 10000 },
	};
	struct base_classes c;
	uint32_t strcls, refcls, weakcls, kwrcls, prescls, pres, key, desc, k;
	struct ph_buf f = PH_BUF_INIT(PH_BUF_NO_CAP);

	hw_init(w);
	base_classes(w, &c);
	strcls = hw_class(w, "java.lang.String", c.object, 16, str, 2, NULL, 0);
	refcls = hw_class(w, "java.lang.ref.Reference", c.object, 12, ref, 1,
			  NULL, 0);
	weakcls = hw_class(w, "java.lang.ref.WeakReference", refcls, 12, NULL,
			   0, NULL, 0);
	kwrcls = hw_class(w, "leakcanary.KeyedWeakReference", weakcls, 36, kwr,
			  4, kwrst, 1);
	prescls = hw_class(w, "com.example.Presenter", c.object, 8, NULL, 0,
			   NULL, 0);
	pres = hw_new_id(w);
	{
		struct hw_field st[] = { { "sPresenter", T_OBJ, pres } };

		hw_class(w, "com.example.App", c.object, 8, NULL, 0, st, 1);
	}
	hw_instance_at(w, pres, prescls, &f);
	key = hw_jstring(w, strcls, "5a1e0bbd-2c4b-4a8e-9b58-4b8c3c1a9e7f");
	desc = hw_jstring(w, strcls,
			  "com.example.Presenter received "
			  "Fragment#onDestroy() callback");
	put4(&f, key, &w->err);
	put4(&f, desc, &w->err);
	hw_u8(&f, 4800, &w->err);
	hw_u8(&f, 9800, &w->err);
	put4(&f, pres, &w->err); /* Reference.referent */
	k = hw_instance_at(w, hw_new_id(w), kwrcls, &f);
	hw_root(w, 0x01, k, 0);
	ph_buf_release(&f);
	return hw_finish(w);
}

/* A main thread whose stack holds a destroyed activity. */
static const struct ph_buf *planted_local(struct hw *w)
{
	static const struct hw_field str[] = { { "value", T_OBJ, 0 },
					       { "count", T_INT, 0 } };
	static const struct hw_field thr[] = { { "name", T_OBJ, 0 } };
	struct base_classes c;
	uint32_t strcls, thrcls, name, t, act;
	struct ph_buf f = PH_BUF_INIT(PH_BUF_NO_CAP);

	hw_init(w);
	base_classes(w, &c);
	strcls = hw_class(w, "java.lang.String", c.object, 16, str, 2, NULL, 0);
	thrcls = hw_class(w, "java.lang.Thread", c.object, 12, thr, 1, NULL, 0);
	name = hw_jstring(w, strcls, "main");
	put4(&f, name, &w->err);
	t = hw_instance_at(w, hw_new_id(w), thrcls, &f);
	act = destroyed_activity(w, &c, false);
	hw_root(w, 0x08, t, 1);
	hw_root(w, 0x03, act, 1);
	ph_buf_release(&f);
	return hw_finish(w);
}

#endif
