/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Tests of the host's link to a live app (src/host/link.c, live.c): a fake
 * runtime on the real abstract socket, speaking the wire as a runtime
 * may, and the session files the host writes from it.
 */
#include "ph_common.h"
#include "harness.h"
#include "host/live.h"

#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

struct fake_app {
	char name[64]; /* the abstract socket's name */
	int served;    /* processes that ran to the end */
};

static int listen_abstract(const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(name);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memcpy(sa.sun_path + 1, name, n);
	if (fd >= 0 &&
	    (bind(fd, (struct sockaddr *)&sa,
		  (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)) ||
	     listen(fd, 4))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static bool say(int fd, const char *line)
{
	size_t n = strlen(line);

	return send(fd, line, n, MSG_NOSIGNAL) == (ssize_t)n;
}

/* Reads until `want` request lines have come (or the peer went away). */
static bool read_requests(int fd, int want)
{
	char c;

	while (want > 0) {
		if (read(fd, &c, 1) != 1)
			return false;
		want -= c == '\n';
	}
	return true;
}

static bool event(int fd, int seq, int t)
{
	char line[160];

	snprintf(line, sizeof(line),
		 "{\"event\":\"log\",\"t\":%d,\"seq\":%d,\"thread\":\"main\","
		 "\"data\":{\"level\":\"info\",\"tag\":\"t\",\"message\":"
		 "\"m%d\"}}\n",
		 t, seq, seq);
	return say(fd, line);
}

/*
 * One process: streams seqs 0..2 the moment the host connects, before it
 * has read the hello (a runtime pushes events to every connected client),
 * then answers hello and timeline and streams seqs 3..4.  Its events' t
 * run from t0, so each process's are told apart.
 */
static bool serve_process(struct fake_app *f, int started_at, int t0)
{
	char hello[400];
	int lfd = listen_abstract(f->name), fd = -1;
	bool ok = false;

	snprintf(hello, sizeof(hello),
		 "{\"id\":1,\"ok\":true,\"result\":{\"protocol\":1,"
		 "\"packageName\":\"%s\",\"processName\":\"%s\","
		 "\"startedAt\":%d,\"collectors\":[]}}\n",
		 f->name + 9, f->name + 9, started_at);
	/* A host that never connects fails the test, not hangs it. */
	if (lfd >= 0 &&
	    poll(&(struct pollfd){ .fd = lfd, .events = POLLIN }, 1, 60000) ==
		    1 &&
	    (fd = accept(lfd, NULL, NULL)) >= 0)
		ok = event(fd, 0, t0) && event(fd, 1, t0 + 1) &&
		     event(fd, 2, t0 + 2) && read_requests(fd, 2) &&
		     say(fd, hello) &&
		     say(fd, "{\"id\":2,\"ok\":true,\"result\":{\"events\":[],"
			     "\"droppedBefore\":0,\"now\":0}}\n") &&
		     event(fd, 3, t0 + 3) && event(fd, 4, t0 + 4);
	if (fd >= 0)
		close(fd);
	if (lfd >= 0)
		close(lfd);
	return ok;
}

static void *fake_run(void *arg)
{
	struct fake_app *f = arg;

	/* The app restarts: a second process under the same name. */
	f->served += serve_process(f, 5000, 100);
	f->served += serve_process(f, 9000, 900);
	return NULL;
}

/*
 * A session's file: the hello's startedAt, and how many times each seq
 * 0..4 came with a t of that process (t0..t0+4) and with another's.
 */
struct session_seen {
	int started_at;
	int own[5], foreign;
};

static void read_session(const char *path, struct session_seen *s)
{
	char line[512];
	FILE *f = fopen(path, "r");
	int t0;

	memset(s, 0, sizeof(*s));
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "\"startedAt\":");
		int t, seq;

		if (p && !strncmp(line, "{\"id\":1,", 8))
			s->started_at = atoi(p + 12);
		if (sscanf(line, "{\"event\":\"log\",\"t\":%d,\"seq\":%d", &t,
			   &seq) != 2)
			continue;
		t0 = s->started_at == 5000 ? 100 : 900;
		if (s->started_at && t - t0 == seq && seq >= 0 && seq < 5)
			s->own[seq]++;
		else
			s->foreign++;
	}
	fclose(f);
}

/* The session files under dir/.porthole/sessions, up to 4. */
static int sessions(const char *root, struct session_seen *seen)
{
	char dir[900], path[1400];
	struct dirent *d;
	DIR *dp;
	int n = 0;

	snprintf(dir, sizeof(dir), "%s/.porthole/sessions", root);
	if (!(dp = opendir(dir)))
		return 0;
	while ((d = readdir(dp)) && n < 4) {
		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/events.ndjson", dir,
			 d->d_name);
		read_session(path, &seen[n++]);
	}
	closedir(dp);
	return n;
}

/*
 * Events streamed before the hello answer are the new process's: they
 * go to its session, not to the one of the process before it (whose
 * seqs they would repeat).
 */
void test_host_link__events_before_the_hello_answer_are_the_new_process(void)
{
	const char *root = ph_test_tmpdir();
	struct fake_app f = { .served = 0 };
	struct session_seen seen[4];
	struct ph_live lv;
	pthread_t th;
	int n = 0;

	snprintf(f.name, sizeof(f.name), "porthole.ut.link%d", (int)getpid());
	setenv("PORTHOLE_PROJECT_ROOT", root, 1);
	setenv("PORTHOLE_APPLICATION_ID", f.name + 9, 1);
	CHECK_INT(ph_live_init(&lv), 0);
	CHECK_INT(pthread_create(&th, NULL, fake_run, &f), 0);
	CHECK_INT(ph_live_start(&lv), 0);
	pthread_join(th, NULL);
	/* Both processes served; the host writes their lines on its own
	 * threads, so wait (up to a minute) until the second one's last. */
	for (int i = 0; i < 600; i++) {
		n = sessions(root, seen);
		if (n == 2 && seen[0].own[4] && seen[1].own[4])
			break;
		usleep(100000);
	}
	ph_live_stop(&lv);
	ph_live_release(&lv);
	unsetenv("PORTHOLE_PROJECT_ROOT");
	unsetenv("PORTHOLE_APPLICATION_ID");
	CHECK_INT(f.served, 2);
	n = sessions(root, seen);
	CHECK_INT(n, 2);
	CHECK(seen[0].started_at != seen[1].started_at);
	for (int i = 0; i < 2; i++) {
		CHECK(seen[i].started_at == 5000 || seen[i].started_at == 9000);
		CHECK_INT(seen[i].foreign, 0);
		for (int seq = 0; seq < 5; seq++)
			CHECK_INT(seen[i].own[seq], 1);
	}
}
