/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c: porthole-sample's main loop and its scenarios.
 *
 *	porthole-sample [--scenario checkout|scroll|startup|clean|all]
 *	                [--seconds N] [--app-id ID] [--data-dir DIR]
 *	                [--refresh HZ] [--crash-at MS] [--hang-at MS]
 *	                [--hog-at MS] [--startup cold|warm|hot|lukewarm]
 *
 * With --scenario it runs a fixed script on the clock (each step at a set
 * time after start) and exits 0 after N seconds; otherwise it runs until
 * SIGINT/SIGTERM, and on a terminal takes keys (see usage()).  --crash-at,
 * --hang-at and --hog-at end it at that time after start: a native crash,
 * a main thread that never answers again, memory that grows until the
 * out-of-memory killer comes (ends.c); the next start reports each.  The script
 * of each scenario is the table at the bottom of this file.  --startup
 * makes the launch the agent classifies as that type (start_screen(), and
 * for hot the return from the background in hot_return[]).
 */
#include "sample.h"
#include "porthole.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

struct sample_state sample = { .cart_total_cents = 7500 };

static volatile sig_atomic_t quit;
static bool interactive;
static struct termios saved_tty;

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void busy_ms(int ms)
{
	int64_t end = now_ms() + ms;

	while (now_ms() < end)
		;
}

/* The planted stall: a click handler that does slow work on main. */
__attribute__((noinline)) void apply_coupon_synchronously(void)
{
	busy_ms(600);
}

/*
 * The planted stall, and how long it really held the main thread, as a
 * mark ("planted-stall", "<µs>"): 600 ms of work, plus whatever the
 * machine added (a page fault on its first call, a preemption), so a test
 * can hold the watchdog's measure against the truth.
 */
static void planted_stall(void)
{
	struct timespec a, b;
	char us[32];

	clock_gettime(CLOCK_MONOTONIC, &a);
	apply_coupon_synchronously();
	clock_gettime(CLOCK_MONOTONIC, &b);
	snprintf(us, sizeof(us), "%lld",
		 (long long)(b.tv_sec - a.tv_sec) * 1000000 +
			 (b.tv_nsec - a.tv_nsec) / 1000);
	porthole_mark("planted-stall", us);
}

static void tap(float x, float y)
{
	int64_t t = now_ms();

	porthole_input(PORTHOLE_INPUT_DOWN, x, y, t, "checkout");
	porthole_input(PORTHOLE_INPUT_UP, x, y, t, "checkout");
	ui_tap(x, y);
}

static void log_everything(void)
{
	porthole_log(PORTHOLE_VERBOSE, "Cart", "rendering %d rows", 4);
	porthole_log(PORTHOLE_DEBUG, "Cart", "total is %d cents",
		     sample.cart_total_cents);
	porthole_log(PORTHOLE_INFO, "Checkout", "checkout started for cart %d",
		     99001);
	porthole_log(PORTHOLE_WARN, "Net", "retrying after %d ms", 400);
	porthole_log(PORTHOLE_ERROR, "Checkout",
		     "payment failed: card declined\n"
		     "    at checkout_submit (sample/main.c)\n"
		     "    at ui_tap (sample/ui.c)");
	/* And a multi-line error the way C code prints one: to stderr. */
	fprintf(stderr, "error: could not apply coupon SPRING25\n"
			"    at apply_coupon (coupon.c:88)\n"
			"    at checkout_submit (checkout.c:41)\n");
	porthole_log(PORTHOLE_FATAL, "Sample", "this one is only a test of F");
}

/* --- scenarios: what happens when, in ms after start ------------------- */

enum action {
	NAV_CART,
	FETCH_CART,
	MAIN_THREAD_QUERY,
	START_JOB,
	LAYOUT_ON,
	LAYOUT_OFF,
	TAP_CHECKOUT,
	LOGS,
	STALL,
	SLOW_CALL,
	ANIMATE_ON,
	SCOPED_ON,
	ANIMATE_OFF,
	DB_ERROR,
	MORE_CALLS,
	NAV_BACK,
	FULLY_DRAWN,
	TO_BACKGROUND,
	TO_FOREGROUND,
	QUIET_LOG,
	BG_QUERY,
	MARKS,
	BURST,
	END,
};

struct step {
	int64_t at;
	enum action what;
};

static const struct step checkout_script[] = {
	{ 300, FULLY_DRAWN },	{ 500, NAV_CART },
	{ 600, FETCH_CART },	{ 1000, MAIN_THREAD_QUERY },
	{ 1500, START_JOB },	{ 2000, LAYOUT_ON },
	{ 2400, TAP_CHECKOUT }, { 3000, LAYOUT_OFF },
	{ 3500, LOGS },		{ 4000, STALL },
	{ 5000, SLOW_CALL },	{ 5500, ANIMATE_ON },
	{ 7000, ANIMATE_OFF },	{ 7200, DB_ERROR },
	{ 7300, MORE_CALLS },	{ 7500, NAV_BACK },
	{ INT64_MAX, END },
};

/*
 * Everything, once: every lane, every event kind the C agent sends.  Fully
 * drawn comes long after the agent's 1.2 s grace, so the startup event goes
 * out without it and the report is a fully_drawn event of its own.
 */
static const struct step all_script[] = {
	{ 400, MARKS },		{ 500, NAV_CART },
	{ 600, FETCH_CART },	{ 1000, MAIN_THREAD_QUERY },
	{ 1500, START_JOB },	{ 2000, LAYOUT_ON },
	{ 2400, TAP_CHECKOUT }, { 3000, LAYOUT_OFF },
	{ 3200, FULLY_DRAWN },	{ 3500, LOGS },
	{ 4000, STALL },	{ 5000, SLOW_CALL },
	{ 5500, ANIMATE_ON },	{ 6500, SCOPED_ON },
	{ 7000, ANIMATE_OFF },	{ 7200, DB_ERROR },
	{ 7300, MORE_CALLS },	{ 7500, NAV_BACK },
	{ 8000, BURST },	{ INT64_MAX, END },
};

static const struct step scroll_script[] = {
	{ 200, FULLY_DRAWN },  { 300, NAV_CART },    { 500, ANIMATE_ON },
	{ 1500, LAYOUT_ON },   { 2500, LAYOUT_OFF }, { 3000, SCOPED_ON },
	{ 4500, ANIMATE_OFF }, { INT64_MAX, END },
};

static const struct step startup_script[] = {
	{ 1500, FULLY_DRAWN },
	{ INT64_MAX, END },
};

/* No planted bug: what a healthy session looks like. */
static const struct step clean_script[] = {
	{ 200, FULLY_DRAWN }, { 500, NAV_CART },   { 600, FETCH_CART },
	{ 1000, BG_QUERY },   { 1500, QUIET_LOG }, { 3000, NAV_BACK },
	{ INT64_MAX, END },
};

/*
 * --startup hot: after the cold launch the screen goes to the background
 * and comes back, the same instance shown again with no create: a hot
 * launch, then fully drawn.
 */
static const struct step hot_return[] = {
	{ 1800, TO_BACKGROUND },
	{ 2000, TO_FOREGROUND },
	{ 2200, FULLY_DRAWN },
	{ INT64_MAX, END },
};

static const struct step *script;

static void *bg_query(void *arg)
{
	(void)arg;
	db_record_event("viewed");
	return NULL;
}

static void run(enum action a)
{
	pthread_t t;

	switch (a) {
	case NAV_CART:
		sample.screen = 1;
		porthole_nav(PORTHOLE_NAV_PUSH, "cart", "Cart", "cartId=99001",
			     "porthole://cart/99001", 2);
		break;
	case FETCH_CART: net_request("cart"); break;
	case MAIN_THREAD_QUERY:
		sample.cart_total_cents = db_cart_total_on_main_thread(99001);
		break;
	case START_JOB: jobs_start(); break;
	case LAYOUT_ON: sample.expensive_layout = true; break;
	case LAYOUT_OFF: sample.expensive_layout = false; break;
	case TAP_CHECKOUT:
		sample.screen = 1;
		tap(180, 588);
		break;
	case LOGS: log_everything(); break;
	case STALL: planted_stall(); break;
	case SLOW_CALL: net_request("recommendations"); break;
	case ANIMATE_ON:
		sample.animate_totals = true;
		sample.scoped_reads = false;
		break;
	case SCOPED_ON: sample.scoped_reads = true; break;
	case ANIMATE_OFF: sample.animate_totals = false; break;
	case DB_ERROR: db_insert_duplicate(); break;
	case MORE_CALLS:
		net_request("upload");
		net_request("image");
		net_request("session");
		break;
	case NAV_BACK:
		sample.screen = 0;
		porthole_nav(PORTHOLE_NAV_POP, "home", "Home", NULL, NULL, 1);
		break;
	case FULLY_DRAWN: porthole_report_fully_drawn(); break;
	case TO_BACKGROUND:
		porthole_lifecycle(PORTHOLE_SCREEN_HIDDEN, "HomeScreen", false);
		break;
	case TO_FOREGROUND:
		porthole_lifecycle(PORTHOLE_SCREEN_SHOWN, "HomeScreen", false);
		porthole_lifecycle(PORTHOLE_SCREEN_RESUMED, "HomeScreen",
				   false);
		break;
	case QUIET_LOG:
		porthole_log(PORTHOLE_INFO, "Cart", "cart has %d items", 4);
		break;
	case BG_QUERY:
		if (!pthread_create(&t, NULL, bg_query, NULL))
			pthread_join(t, NULL);
		break;
	case MARKS: {
		uint64_t span = porthole_span_begin("checkout-flow");

		porthole_mark("scenario", "all lanes");
		porthole_span_end(span);
		break;
	}
	case BURST:
		/*
		 * More events at once than the agent's queue holds: the
		 * overflow is dropped and counted, never waited for.
		 */
		for (int i = 0; i < 50000; i++)
			porthole_mark("burst", NULL);
		break;
	case END: break;
	}
}

/* --- interactive keys --------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f, "keys: l layout  a animate  s scoped reads  c check out  "
		   "b block 600 ms\n      m main-thread query  h http  e error "
		   "log  x crash  z hang  q quit\n");
}

static void restore_tty(void)
{
	if (interactive)
		tcsetattr(0, TCSANOW, &saved_tty);
}

static void key(int c)
{
	switch (c) {
	case 'l': sample.expensive_layout = !sample.expensive_layout; break;
	case 'a': sample.animate_totals = !sample.animate_totals; break;
	case 's': sample.scoped_reads = !sample.scoped_reads; break;
	case 'c': run(TAP_CHECKOUT); break;
	case 'b': run(STALL); break;
	case 'm': run(MAIN_THREAD_QUERY); break;
	case 'h': run(FETCH_CART); break;
	case 'e': run(LOGS); break;
	case 'x':
		/*
		 * The crash on demand: a field read through a NULL struct
		 * pointer, as real code does it (address 8, which also keeps
		 * UBSan's null check from ending the process before the fault).
		 */
		{
			volatile int *volatile field = (volatile int *)8;

			*field = 1;
		}
		break;
	case 'z': wait_for_settings_sync(); break;
	case 'q': quit = 1; break;
	default: usage(stdout); break;
	}
}

static const char *const startup_types[] = { "cold", "warm", "hot",
					     "lukewarm" };

static bool startup_type_known(const char *type)
{
	for (size_t i = 0; i < sizeof(startup_types) / sizeof(*startup_types);
	     i++)
		if (!strcmp(type, startup_types[i]))
			return true;
	return false;
}

/*
 * The first screen, made the way the --startup type needs (docs/protocol.md
 * section 6): before the main loop ran anything for cold and hot (hot's
 * own launch is the later return), from saved state for lukewarm, and for
 * warm only after the loop ran its first message, as in a process started
 * for something else that a screen arrives in later.
 */
static void start_screen(const char *type)
{
	if (!strcmp(type, "warm")) {
		struct timespec tick = { 0, 5 * 1000 * 1000 };

		porthole_main_loop_ping();
		/* The agent's times are in ms: the screen comes a tick after
		 * the first message, never in the same millisecond. */
		nanosleep(&tick, NULL);
	}
	porthole_lifecycle(PORTHOLE_SCREEN_CREATED, "HomeScreen",
			   !strcmp(type, "lukewarm"));
	porthole_lifecycle(PORTHOLE_SCREEN_SHOWN, "HomeScreen", false);
}

static void on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

int main(int argc, char **argv)
{
	const char *scenario = NULL, *app_id = "dev.porthole.sample";
	const char *data_dir = NULL, *startup = "cold";
	char dir[512];
	double hz = 60;
	int seconds = 10;
	int64_t crash_at = -1, hang_at = -1, hog_at = -1, start, next_ns_frame;
	size_t step = 0, hot_step = 0;
	struct porthole_config cfg = { 0 };
	struct timespec next;
	enum porthole_status st;

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "--scenario") && v)
			scenario = argv[++i];
		else if (!strcmp(argv[i], "--seconds") && v)
			seconds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--app-id") && v)
			app_id = argv[++i];
		else if (!strcmp(argv[i], "--data-dir") && v)
			data_dir = argv[++i];
		else if (!strcmp(argv[i], "--refresh") && v)
			hz = atof(argv[++i]);
		else if (!strcmp(argv[i], "--crash-at") && v)
			crash_at = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--hang-at") && v)
			hang_at = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--hog-at") && v)
			hog_at = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--startup") && v)
			startup = argv[++i];
		else {
			fprintf(stderr,
				"usage: porthole-sample [--scenario "
				"checkout|scroll|startup|clean|all] [--seconds "
				"N] [--app-id ID] [--data-dir DIR] [--refresh "
				"HZ] [--crash-at MS] [--hang-at MS] "
				"[--hog-at MS] [--startup "
				"cold|warm|hot|lukewarm]\n");
			return 2;
		}
	}
	if (!startup_type_known(startup)) {
		fprintf(stderr,
			"porthole-sample: no startup type '%s' (cold, warm, "
			"hot or lukewarm)\n",
			startup);
		return 2;
	}
	if (scenario) {
		script = !strcmp(scenario, "checkout") ? checkout_script :
			 !strcmp(scenario, "all")      ? all_script :
			 !strcmp(scenario, "scroll")   ? scroll_script :
			 !strcmp(scenario, "startup")  ? startup_script :
			 !strcmp(scenario, "clean")    ? clean_script :
							 NULL;
		if (!script) {
			fprintf(stderr, "porthole-sample: no scenario '%s'\n",
				scenario);
			return 2;
		}
	}
	if (!data_dir) {
		const char *home = getenv("HOME");

		snprintf(dir, sizeof(dir), "%s/.local/state/porthole/%s",
			 home ? home : "/tmp", app_id);
		data_dir = dir;
	}
	cfg.app_id = app_id;
	cfg.data_dir = data_dir;
	cfg.version_name = "1.0.0-sample";
	cfg.refresh_hz = hz;
	cfg.flags = PORTHOLE_CAPTURE_STDIO | PORTHOLE_CAPTURE_BODIES;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	/*
	 * Startup as a real app does it: the agent first, then the first
	 * screen is created and shown before the main loop runs anything
	 * (a cold start, unless --startup asks otherwise), then the loop.
	 */
	st = porthole_start(&cfg);
	if (st != PORTHOLE_OK)
		fprintf(stderr, "porthole-sample: agent not started: %s\n",
			porthole_strerror(st));
	else
		printf("porthole-sample: serving @%s\n",
		       porthole_socket_name());
	fflush(stdout);
	porthole_main_loop_register();
	mkdir(data_dir, 0700);
	if (api_server_start() || db_open(data_dir)) {
		fprintf(stderr, "porthole-sample: could not start: %s\n",
			strerror(errno));
		return 1;
	}
	net_start();
	ui_init();
	start_screen(startup);
	porthole_nav(PORTHOLE_NAV_START, "home", "Home", NULL, NULL, 1);
	porthole_lifecycle(PORTHOLE_SCREEN_RESUMED, "HomeScreen", false);
	if (!scenario && isatty(0)) {
		struct termios raw;

		interactive = true;
		tcgetattr(0, &saved_tty);
		raw = saved_tty;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0;
		raw.c_cc[VTIME] = 0;
		tcsetattr(0, TCSANOW, &raw);
		atexit(restore_tty);
		usage(stdout);
	}

	start = now_ms();
	clock_gettime(CLOCK_MONOTONIC, &next);
	next_ns_frame = (int64_t)(1e9 / hz);
	while (!quit) {
		int64_t t = now_ms() - start;
		char c;

		porthole_main_loop_ping();
		if (scenario && t >= seconds * 1000LL)
			break;
		if (crash_at >= 0 && t >= crash_at)
			key('x');
		if (hang_at >= 0 && t >= hang_at)
			key('z');
		if (hog_at >= 0 && t >= hog_at)
			cache_decoded_images();
		porthole_frame_begin();
		porthole_frame_phase(PORTHOLE_PHASE_INPUT);
		while (script && script[step].at <= t)
			run(script[step++].what);
		while (!strcmp(startup, "hot") && hot_return[hot_step].at <= t)
			run(hot_return[hot_step++].what);
		if (interactive && read(0, &c, 1) == 1)
			key(c);
		porthole_frame_phase(PORTHOLE_PHASE_ANIMATION);
		ui_frame();
		porthole_frame_phase(PORTHOLE_PHASE_LAYOUT);
		ui_layout();
		porthole_frame_phase(PORTHOLE_PHASE_DRAW);
		ui_draw();
		porthole_frame_end();
		sample.frame++;
		porthole_main_loop_ping();
		/* Sleep to the next vsync; a late frame skips the missed ones.
		 */
		next.tv_nsec += next_ns_frame;
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		{
			struct timespec cur;

			clock_gettime(CLOCK_MONOTONIC, &cur);
			if (cur.tv_sec > next.tv_sec ||
			    (cur.tv_sec == next.tv_sec &&
			     cur.tv_nsec > next.tv_nsec))
				next = cur;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	porthole_lifecycle(PORTHOLE_SCREEN_HIDDEN, "HomeScreen", false);
	net_stop();
	jobs_stop();
	db_close();
	porthole_stop();
	return 0;
}
