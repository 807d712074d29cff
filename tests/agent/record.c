/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ph-record: a test client that records what an agent sends.
 *
 *	ph-record (--socket NAME | --announce FILE) --out FILE
 *	          [--seconds N] [--after MS] [--request JSON]...
 *
 * Waits (up to 15 s) for the socket (or for the announce file the agent
 * writes its socket name into), sends hello and a full timeline backfill,
 * the --request lines MS after connecting (default 0: at once; the app
 * may still be setting up), and writes every line it receives to FILE until
 * the agent closes the connection or N seconds pass.  Exit 0 when it
 * connected.
 */
#include "ph_common.h"
#include "ph_client.h"
#include "ph_clock.h"

#include <unistd.h>

int main(int argc, char **argv)
{
	const char *sock = NULL, *announce = NULL, *out = NULL;
	const char *reqs[16];
	int n_reqs = 0, seconds = 30, after_ms = 0;
	bool sent = false;
	char name[256] = "";
	struct ph_client_conn c;
	struct ph_buf line = PH_BUF_INIT(64 << 20);
	int64_t deadline, start, flushed = 0;
	FILE *f;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--socket"))
			sock = argv[i + 1];
		else if (!strcmp(argv[i], "--announce"))
			announce = argv[i + 1];
		else if (!strcmp(argv[i], "--out"))
			out = argv[i + 1];
		else if (!strcmp(argv[i], "--seconds"))
			seconds = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--after"))
			after_ms = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--request") && n_reqs < 16)
			reqs[n_reqs++] = argv[i + 1];
	}
	if ((!sock && !announce) || !out) {
		fprintf(stderr, "usage: ph-record (--socket NAME | --announce "
				"FILE) --out FILE [--seconds N] [--request "
				"JSON]...\n");
		return 2;
	}
	deadline = ph_clock_uptime_ms() + 15000;
	while (announce && !name[0] && ph_clock_uptime_ms() < deadline) {
		FILE *a = fopen(announce, "r");

		if (a) {
			if (fgets(name, sizeof(name), a))
				name[strcspn(name, "\n")] = '\0';
			fclose(a);
		}
		if (!name[0])
			usleep(20 * 1000);
	}
	if (sock)
		snprintf(name, sizeof(name), "%s", sock);
	if (!name[0] || ph_client_connect(&c, name, 15000)) {
		fprintf(stderr, "ph-record: could not connect to @%s\n", name);
		return 1;
	}
	f = fopen(out, "w");
	if (!f)
		return 1;
	ph_client_send(&c, "{\"id\":1,\"method\":\"hello\",\"params\":{}}\n");
	ph_client_send(&c, "{\"id\":2,\"method\":\"timeline\",\"params\":"
			   "{\"sinceSeq\":0,\"limit\":100000}}\n");
	start = ph_clock_uptime_ms();
	deadline = start + seconds * 1000LL;
	while (ph_clock_uptime_ms() < deadline) {
		int rc;

		if (!sent && ph_clock_uptime_ms() - start >= after_ms) {
			for (int i = 0; i < n_reqs; i++) {
				ph_client_send(&c, reqs[i]);
				ph_client_send(&c, "\n");
			}
			sent = true;
		}
		rc = ph_client_line(&c, &line, 100);

		if (rc < 0)
			break;
		if (rc == 1)
			fprintf(f, "%s\n", line.buf);
		/* on disk once the app pauses, or every 250 ms: a test waits on
		 * the file for what the app has reported */
		if (rc == 0 || ph_clock_uptime_ms() - flushed >= 250) {
			fflush(f);
			flushed = ph_clock_uptime_ms();
		}
	}
	fclose(f);
	ph_client_close(&c);
	ph_buf_release(&line);
	return 0;
}
