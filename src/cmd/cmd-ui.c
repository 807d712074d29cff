/* SPDX-License-Identifier: Apache-2.0 */
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

struct ui_args {
	int64_t port;
	bool no_open;
	const char *app_id;
};

#define OFF(f) offsetof(struct ui_args, f)
static const struct ph_opt ui_opts[] = {
	{ .name = "port",
	  .kind = PH_OPT_INT,
	  .offset = OFF(port),
	  .metavar = "8678",
	  .help = "the loopback port to serve on" },
	{ .name = "no-open",
	  .kind = PH_OPT_BOOL,
	  .offset = OFF(no_open),
	  .help = "do not open a browser" },
	{ .name = "application-id",
	  .kind = PH_OPT_STR,
	  .offset = OFF(app_id),
	  .metavar = "ID",
	  .help = "the app to show (default $PORTHOLE_APPLICATION_ID)" },
	{ .kind = PH_OPT_END },
};

static int ui_exec(int argc, char **argv)
{
	struct ui_run *r;
	struct ph_ui_options o = { .port = 8678 };
	struct ui_args args = { .port = 8678 };
	struct ph_opt_args pa;
	const char *app_id;
	bool open;
	char why[300], url[80];
	int status;
	char announce_dir[] = "/tmp/porthole-ui-XXXXXX";
	char announce[200] = "";

	status = ph_cmd_parse(&ph_cmd_ui, &args, argc, argv, &pa);
	if (status != PH_CMD_GO_ON)
		return status;
	status = 0;
	if (pa.npos)
		return ph_cmd_usage_error(&ph_cmd_ui, "unexpected argument %s",
					  pa.pos[0]);
	if (args.port < 0 || args.port > 65535)
		return ph_cmd_usage_error(&ph_cmd_ui, "bad port '%" PRId64 "'",
					  args.port);
	o.port = (int)args.port;
	open = !args.no_open;
	app_id = args.app_id;
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

	if (pa.nrest) {
		r->cmd = pa.rest;
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
	.args = "[-- CMD...]",
	.opts = ui_opts,
	.about = "serves http://127.0.0.1:PORT/ (loopback only); with CMD, "
		 "starts the app\nitself so the page can restart it; runs "
		 "until Ctrl-C",
	.flags = PH_CMD_TAKES_COMMAND,
	.exec = ui_exec,
};
