/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_agent_config.c: struct porthole_config across versions of the
 * header.  An app built against an older header passes a shorter struct
 * and runs with its missing fields at their defaults; one built against a
 * newer header runs unless it set a field this library does not know.
 * The library reads no byte past the size the app passed: the tests put
 * the struct against a page the process may not read.
 */
#include "ph_common.h"
#include "harness.h"
#include "ph_client.h"
#include "ph_clock.h"
#include "ph_json.h"
#include "porthole.h"

#include <sys/mman.h>
#include <unistd.h>

/* The first layout (0.1's) ends at stall_ms (include/porthole.h). */
#define CONFIG_FIRST_END \
	(offsetof(struct porthole_config, stall_ms) + sizeof(unsigned))

static char sock[108];

/* A readable page followed by one that is not: the struct's room. */
struct guarded {
	unsigned char *page;
	size_t page_size;
};

/* A config whose last byte (end - 1) is the last readable one. */
static struct porthole_config *guarded_config(struct guarded *g, size_t end)
{
	struct porthole_config *cfg;

	g->page_size = (size_t)sysconf(_SC_PAGESIZE);
	g->page = mmap(NULL, 2 * g->page_size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (g->page == MAP_FAILED)
		return NULL;
	if (mprotect(g->page + g->page_size, g->page_size, PROT_NONE))
		return NULL;
	/* 8-aligned, as the struct needs: end is a multiple of 4 only. */
	cfg = (struct porthole_config *)(g->page + g->page_size -
					 ((end + 7) & ~(size_t)7));
	memset(cfg, 0, end);
	snprintf(sock, sizeof(sock), "porthole.unit-config-%d-%lld",
		 (int)getpid(), (long long)ph_clock_mono_ns());
	cfg->app_id = "com.example.config";
	cfg->socket_name = sock;
	cfg->data_dir = ph_test_tmpdir();
	cfg->version_name = "1.0-config";
	cfg->flags = PORTHOLE_NO_WATCHDOG | PORTHOLE_NO_DEVICE |
		     PORTHOLE_NO_MEMORY | PORTHOLE_NO_INTEGRATION_CHECK;
	return cfg;
}

/* The agent just started says hello with these versions. */
static bool hello_says(const char *version_name, const char *runtime_version)
{
	struct ph_client_conn c;
	struct ph_buf line = PH_BUF_INIT(1 << 20);
	struct ph_arena a;
	struct ph_json *v = NULL;
	const struct ph_json *r;
	bool ok = false;

	ph_arena_init(&a, 0, SIZE_MAX);
	if (ph_client_connect(&c, sock, 5000))
		goto out;
	if (ph_client_call(&c, 1, "hello", NULL, &line, NULL, 5000) == 1 &&
	    !ph_json_parse(&a, line.buf, line.len, &v, NULL)) {
		r = ph_json_get(v, "result");
		ok = ph_json_streq(ph_json_get(r, "versionName"),
				   version_name) &&
		     ph_json_streq(ph_json_get(r, "runtimeVersion"),
				   runtime_version);
	}
	ph_client_close(&c);
out:
	ph_buf_release(&line);
	ph_arena_release(&a);
	return ok;
}

void test_agent_config__version_is_the_headers(void)
{
	char num[32];

	CHECK_STR(porthole_version(), PORTHOLE_VERSION);
	snprintf(num, sizeof(num), "%d.%d.%d", PORTHOLE_VERSION_MAJOR,
		 PORTHOLE_VERSION_MINOR, PORTHOLE_VERSION_PATCH);
	CHECK_STR(num, PORTHOLE_VERSION);
	CHECK_INT(PORTHOLE_VERSION_NUM, (PORTHOLE_VERSION_MAJOR << 16) |
						(PORTHOLE_VERSION_MINOR << 8) |
						PORTHOLE_VERSION_PATCH);
}

/* What porthole_start() of 0.1's header passed: read to stall_ms only. */
void test_agent_config__start_build_reads_only_the_first_layout(void)
{
	struct guarded g;
	struct porthole_config *cfg = guarded_config(&g, CONFIG_FIRST_END);

	porthole_stop();
	CHECK(cfg != NULL);
	if (!cfg)
		return;
	CHECK_INT(porthole_start_build(cfg, 1), PORTHOLE_OK);
	CHECK(hello_says("1.0-config", PORTHOLE_VERSION));
	porthole_stop();
	munmap(g.page, 2 * g.page_size);
}

/* The same through porthole_start_sized with the first layout's size. */
void test_agent_config__an_older_headers_struct_starts(void)
{
	struct guarded g;
	struct porthole_config *cfg = guarded_config(&g, CONFIG_FIRST_END);

	porthole_stop();
	CHECK(cfg != NULL);
	if (!cfg)
		return;
	CHECK_INT(porthole_start_sized(cfg, CONFIG_FIRST_END, 1), PORTHOLE_OK);
	CHECK(hello_says("1.0-config", PORTHOLE_VERSION));
	porthole_stop();
	munmap(g.page, 2 * g.page_size);
}

void test_agent_config__a_struct_shorter_than_the_first_is_refused(void)
{
	struct guarded g;
	size_t end = offsetof(struct porthole_config, stall_ms);
	struct porthole_config *cfg = guarded_config(&g, end);

	porthole_stop();
	CHECK(cfg != NULL);
	if (!cfg)
		return;
	CHECK_INT(porthole_start_sized(cfg, end, 1), PORTHOLE_ERR_INVALID);
	CHECK(porthole_socket_name() == NULL);
	munmap(g.page, 2 * g.page_size);
}

/* A newer header: its fields set refuse; left zero, they start. */
void test_agent_config__a_newer_headers_unknown_field_refuses_when_set(void)
{
	struct newer {
		struct porthole_config known;
		uint64_t future; /* a field this library does not have */
	} cfg = { { 0 }, 0 };

	porthole_stop();
	snprintf(sock, sizeof(sock), "porthole.unit-config-%d-%lld",
		 (int)getpid(), (long long)ph_clock_mono_ns());
	cfg.known.app_id = "com.example.config";
	cfg.known.socket_name = sock;
	cfg.known.data_dir = ph_test_tmpdir();
	cfg.known.version_name = "2.0-config";
	cfg.known.flags = PORTHOLE_NO_WATCHDOG | PORTHOLE_NO_DEVICE |
			  PORTHOLE_NO_MEMORY | PORTHOLE_NO_INTEGRATION_CHECK;
	cfg.future = 1;
	CHECK_INT(porthole_start_sized(&cfg.known, sizeof(cfg), 1),
		  PORTHOLE_ERR_INVALID);
	CHECK(porthole_socket_name() == NULL);
	cfg.future = 0;
	CHECK_INT(porthole_start_sized(&cfg.known, sizeof(cfg), 1),
		  PORTHOLE_OK);
	CHECK(hello_says("2.0-config", PORTHOLE_VERSION));
	porthole_stop();
}
