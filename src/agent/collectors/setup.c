/* SPDX-License-Identifier: Apache-2.0 */
/*
 * setup.c: the integrations check (the `setup` method, and one stderr line
 * per integration that is present but not wired).
 *
 * "Present" means the integration's library is loaded in this process at
 * all (its entry point resolves with dlsym); "wired" means the app called
 * its attach function.  An app that links libcurl but never calls
 * porthole_curl_attach() would otherwise show an empty HTTP lane that
 * reads like an app that made no requests.  The agent itself links
 * neither library, so presence is the app's own doing.
 */
#include "ph_common.h"
#include "collectors.h"
#include "ph_log.h"

#include <dlfcn.h>
#include <unistd.h>

struct integration {
	const char *name;   /* as in setup's result */
	const char *symbol; /* present when this resolves */
	const char *fix;    /* the exact call to add */
	_Atomic bool wired;
};

static struct integration integrations[] = {
	{ "sqlite", "sqlite3_open_v2",
	  "porthole_sqlite_attach(db) after each sqlite3_open_v2()" },
	{ "curl", "curl_easy_perform",
	  "porthole_curl_attach(curl, false) after each curl_easy_init()" },
};

static bool present(const struct integration *in)
{
	/*
	 * libporthole defines curl_easy_perform itself (to observe attached
	 * handles), so ask for libcurl's own other entry point as well.
	 */
	if (!strcmp(in->name, "curl"))
		return dlsym(RTLD_DEFAULT, "curl_easy_init") != NULL;
	return dlsym(RTLD_DEFAULT, in->symbol) != NULL;
}

void ph_integration_wired(const char *name)
{
	for (size_t i = 0; i < PH_ARRAY_SIZE(integrations); i++)
		if (!strcmp(integrations[i].name, name))
			atomic_store(&integrations[i].wired, true);
}

void ph_collectors_setup(struct ph_jw *w)
{
	ph_jw_arr_begin(w);
	for (size_t i = 0; i < PH_ARRAY_SIZE(integrations); i++) {
		const struct integration *in = &integrations[i];
		bool on = present(in), wired = atomic_load(&in->wired);

		ph_jw_obj_begin(w);
		ph_jw_kv_str(w, "name", in->name);
		ph_jw_kv_bool(w, "onClasspath", on);
		ph_jw_kv_bool(w, "instrumented", wired);
		if (on && !wired)
			ph_jw_kv_str(w, "hint", in->fix);
		else if (!on)
			ph_jw_kv_str(w, "hint",
				     "library not loaded in this "
				     "process");
		ph_jw_obj_end(w);
	}
	ph_jw_arr_end(w);
}

static void *check_main(void *arg)
{
	(void)arg;
	ph_platform_name_self("porthole-setup");
	ph_exits_thread_altstack(); /* a crash here writes its record */
	/* Apps attach right after start; give them a few seconds. */
	for (int i = 0; i < 30 && ph_agent_live(); i++)
		usleep(100 * 1000);
	if (!ph_agent_live())
		return NULL;
	for (size_t i = 0; i < PH_ARRAY_SIZE(integrations); i++) {
		const struct integration *in = &integrations[i];

		if (present(in) && !atomic_load(&in->wired))
			ph_warn("%s is loaded but not instrumented: its lane "
				"will be empty; add %s",
				in->name, in->fix);
	}
	return NULL;
}

void ph_integrations_check_later(struct ph_agent *a)
{
	pthread_t t;
	pthread_attr_t attr;

	if (a->cfg.flags & PORTHOLE_NO_INTEGRATION_CHECK)
		return;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, check_main, NULL))
		ph_debug("integrations check not started");
	pthread_attr_destroy(&attr);
}
