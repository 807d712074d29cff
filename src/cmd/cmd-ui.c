/*
 * porthole ui [--port 8678] [--no-open] [--application-id ID] [-- CMD...]
 *
 * The live timeline in the browser: connects to the app as every long-
 * running face does (ph_live), serves the page on 127.0.0.1 only and
 * streams the app's lines to it.  With CMD, ui starts the app itself and
 * the page's restart button can start it again; without, the app is
 * whatever is already listening.  Runs until SIGINT/SIGTERM.  Exit 0 on a
 * signal, 2 on bad arguments or when it cannot listen.
 */
#include "ph_common.h"
#include "cmd.h"
#include "ph_log.h"
#include "host/env.h"
#include "host/live.h"
#include "ui/ui.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern const struct ph_cmd ph_cmd_ui;
extern const struct ph_cmd ph_cmd_save;
extern char **environ;

static volatile sig_atomic_t stopped;

static void on_signal(int sig)
{
	(void)sig;
	stopped = 1;
}

struct ui_run {
	struct ph_live lv;
	struct ph_ui *ui;
	/* the live wiring this command sits in front of */
	void (*on_line)(void *ctx, const char *line, size_t len);
	void (*on_hello)(void *ctx, const struct ph_ident *id);
	void *ctx;
	/* the app ui started, when it was given a command */
	char **cmd;
	pid_t child;
	pthread_mutex_t child_mu;
};

/* Each line goes to the store and session first, then to the pages. */
static void run_on_line(void *ctx, const char *line, size_t len)
{
	struct ui_run *r = ctx;

	r->on_line(r->ctx, line, len);
	ph_ui_line(r->ui, line, len);
}

static void run_on_hello(void *ctx, const struct ph_ident *id)
{
	struct ui_run *r = ctx;

	if (r->on_hello)
		r->on_hello(r->ctx, id);
}

static int spawn_app(struct ui_run *r)
{
	posix_spawnattr_t attr;
	int rc;

	posix_spawnattr_init(&attr);
	/* Its own process group: Ctrl-C in this terminal is ui's to handle,
	 * and ui stops the app itself. */
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
	posix_spawnattr_setpgroup(&attr, 0);
	rc = posix_spawnp(&r->child, r->cmd[0], NULL, &attr, r->cmd, environ);
	posix_spawnattr_destroy(&attr);
	if (rc) {
		r->child = 0;
		return rc;
	}
	return 0;
}

/* SIGTERM, then SIGKILL after 3 s. */
static void stop_app(struct ui_run *r)
{
	if (r->child <= 0)
		return;
	kill(r->child, SIGTERM);
	for (int i = 0; i < 300; i++) {
		if (waitpid(r->child, NULL, WNOHANG) == r->child) {
			r->child = 0;
			return;
		}
		usleep(10000);
	}
	kill(r->child, SIGKILL);
	waitpid(r->child, NULL, 0);
	r->child = 0;
}

static int restart_app(void *ctx, char *why, size_t size)
{
	struct ui_run *r = ctx;
	int rc;

	pthread_mutex_lock(&r->child_mu);
	stop_app(r);
	rc = spawn_app(r);
	pthread_mutex_unlock(&r->child_mu);
	if (rc)
		snprintf(why, size, "cannot start %s: %s", r->cmd[0],
			 strerror(rc));
	return rc ? -1 : 0;
}

static void open_browser(const char *url)
{
	char *argv[] = { "xdg-open", (char *)url, NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ))
		fprintf(stderr,
			"porthole ui: could not open a browser; open %s\n",
			url);
	posix_spawn_file_actions_destroy(&fa);
}

static int ui_exec(int argc, char **argv)
{
	struct ui_run *r;
	struct ph_ui_options o = { .port = 8678 };
	const char *app_id = NULL;
	bool open = true;
	char why[300], url[80];
	int status = 0, i;
	char announce_dir[] = "/tmp/porthole-ui-XXXXXX";
	char announce[200] = "";

	for (i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end;

		if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else if (!strcmp(argv[i], "--no-open")) {
			open = false;
		} else if (!strcmp(argv[i], "--port") && v) {
			long p = strtol(argv[++i], &end, 10);

			if (*end || p < 0 || p > 65535)
				return ph_cmd_usage_error(&ph_cmd_ui,
							  "bad port '%s'", v);
			o.port = (int)p;
		} else if (!strcmp(argv[i], "--application-id") && v) {
			app_id = argv[++i];
		} else {
			return ph_cmd_usage_error(&ph_cmd_ui, "bad option %s",
						  argv[i]);
		}
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return 2;
	pthread_mutex_init(&r->child_mu, NULL);
	if (ph_live_init(&r->lv)) {
		free(r);
		return 2;
	}
	if (app_id)
		r->lv.link.app_id = app_id;
	r->on_line = r->lv.link.on_line;
	r->on_hello = r->lv.link.on_hello;
	r->ctx = r->lv.link.ctx;
	r->lv.link.on_line = run_on_line;
	r->lv.link.on_hello = run_on_hello;
	r->lv.link.ctx = r;

	if (i < argc) {
		r->cmd = argv + i;
		/* The app CMD starts (and each restart) announces its socket
		 * name, so the link watches that app and no other one on
		 * this machine (as capture does). */
		if (!app_id && !mkdtemp(announce_dir)) {
			fprintf(stderr, "porthole ui: %s\n", strerror(errno));
			status = 2;
			goto out;
		}
		if (!app_id) {
			snprintf(announce, sizeof(announce), "%s/socket",
				 announce_dir);
			setenv("PORTHOLE_ANNOUNCE", announce, 1);
			r->lv.link.announce = announce;
		}
		if (spawn_app(r)) {
			fprintf(stderr, "porthole ui: cannot start %s: %s\n",
				r->cmd[0], strerror(errno));
			status = 2;
			goto out;
		}
		o.restart = restart_app;
		o.restart_ctx = r;
	}
	o.root = ph_env_project_root();
	if (!o.root)
		o.root = ".";
	o.live = &r->lv;
	o.save = ph_cmd_save.exec;
	r->ui = ph_ui_start(&o, why, sizeof(why));
	if (!r->ui) {
		fprintf(stderr, "porthole ui: %s\n", why);
		status = 2;
		goto out;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (ph_live_start(&r->lv)) {
		status = 2;
		goto out;
	}
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", ph_ui_port(r->ui));
	printf("porthole ui: %s (Ctrl-C stops)\n", url);
	fflush(stdout);
	if (open)
		open_browser(url);
	while (!stopped) {
		usleep(50000);
		pthread_mutex_lock(&r->child_mu);
		/* Reap an app that exited by itself; the link waits for the
		 * next one, and restart can start it again. */
		if (r->child > 0 &&
		    waitpid(r->child, NULL, WNOHANG) == r->child)
			r->child = 0;
		pthread_mutex_unlock(&r->child_mu);
	}
out:
	/* The link's reader feeds the server: stop it first. */
	ph_live_stop(&r->lv);
	ph_ui_stop(r->ui);
	ph_live_release(&r->lv);
	pthread_mutex_lock(&r->child_mu);
	stop_app(r);
	pthread_mutex_unlock(&r->child_mu);
	pthread_mutex_destroy(&r->child_mu);
	free(r);
	if (announce[0]) {
		unlink(announce);
		rmdir(announce_dir);
	}
	return status;
}

const struct ph_cmd ph_cmd_ui = {
	.name = "ui",
	.summary = "the live timeline in the browser",
	.usage = "porthole ui [--port 8678] [--no-open] [--application-id ID] "
		 "[-- CMD...]\n"
		 "  serves http://127.0.0.1:PORT/ (loopback only); with CMD, "
		 "starts the app\n"
		 "  itself so the page can restart it; runs until Ctrl-C",
	.exec = ui_exec,
};
