/* SPDX-License-Identifier: Apache-2.0 */
/* run.c: a helper program run to its end (see run.h). */
#include "ph_common.h"
#include "run.h"
#include "ph_clock.h"
#include "ph_log.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

int ph_run(char *const argv[], struct ph_buf *out, int timeout_ms)
{
	return ph_run_stoppable(argv, out, timeout_ms, NULL, NULL, NULL);
}

int ph_run_stoppable(char *const argv[], struct ph_buf *out, int timeout_ms,
		     bool (*stop)(void *ctx), void *ctx, bool *stopped)
{
	int p[2], status = -1, devnull;
	pid_t pid;
	int64_t end = ph_clock_uptime_ms() + timeout_ms;
	bool cut = false, cut_short = false;

	if (stopped)
		*stopped = false;
	if (pipe2(p, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		sigset_t intr;

		/* It is stopped with SIGINT: an ignored or blocked SIGINT
		 * this process inherited (started with nohup or `&` in a
		 * script) must not pass to it, and a shell cannot trap a
		 * signal that was ignored when it started. */
		signal(SIGINT, SIG_DFL);
		sigemptyset(&intr);
		sigaddset(&intr, SIGINT);
		sigprocmask(SIG_UNBLOCK, &intr, NULL);
		devnull = open("/dev/null", O_RDONLY);
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(p[1], 1);
		dup2(p[1], 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		struct pollfd pf = { .fd = p[0], .events = POLLIN };
		int left = (int)(end - ph_clock_uptime_ms());
		char tmp[4096];
		ssize_t r;

		if (left <= 0) {
			kill(pid, SIGTERM);
			break;
		}
		if (stop && !cut_short && stop(ctx)) {
			/* Once: then read on until it has finished. */
			kill(pid, SIGINT);
			cut_short = true;
			if (stopped)
				*stopped = true;
		}
		if (poll(&pf, 1, stop && left > 100 ? 100 : left) <= 0)
			continue;
		r = read(p[0], tmp, sizeof(tmp));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		/* Past the cap: read and dropped (the head says why). */
		if (out && !cut && out->len + (size_t)r <= out->cap &&
		    ph_buf_add(out, tmp, (size_t)r)) {
			ph_warn("out of memory: the output of %s was cut",
				argv[0]);
			cut = true;
		}
	}
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
