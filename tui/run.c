/* The terminal's lifecycle: locale, curses set-up, the run loop, and the restore of the
 * terminal on every exit path (return, exit(), SIGINT/SIGTERM/SIGHUP through the normal path,
 * fatal signals from the handler). */
#include "app.h"

#include <errno.h>
#include <locale.h>
#include <poll.h>
#include <langinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "text.h"
#include "util/clock.h"

/* Terminal restore: the run loop sets this while curses owns the terminal, and every exit
 * path (return, exit(), fatal signal) ends curses before the process goes. */
static volatile sig_atomic_t curses_active;

static void restore_terminal(void)
{
	if (curses_active) {
		curses_active = 0;
		endwin();
	}
}

static void fatal_signal(int sig)
{
	/* endwin is not async-signal-safe, but leaving the terminal in raw mode is worse (htop
	 * does the same). SA_RESETHAND made the default action current: re-raise to die by it. */
	restore_terminal();
	raise(sig);
}

/* Signals that ask galatop to stop: the run loop sees the flag within 100 ms and leaves
 * through the normal exit path, so that the caller reaps its command and detaches its probes. */
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	stop_signal = sig;
}

static const int fatal_signals[] = { SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGQUIT };
static const int stop_signals[] = { SIGTERM, SIGINT, SIGHUP };

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fatal_signal;
	sa.sa_flags = SA_RESETHAND | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++)
		sigaction(fatal_signals[i], &sa, NULL);
	/* No SA_RESTART: the wait for a key returns at once. */
	sa.sa_handler = on_stop_signal;
	sa.sa_flags = 0;
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(stop_signals[0]); i++)
		sigaction(stop_signals[i], &sa, NULL);
	stop_signal = 0;
	atexit(restore_terminal);
}

void tui_locale(const struct tui_opts *o)
{
	const char *cs;

	setlocale(LC_ALL, "");
	cs = nl_langinfo(CODESET);
	tui_text_init(o->ascii || !cs || (strcasecmp(cs, "UTF-8") && strcasecmp(cs, "utf8")));
}

#define FIRST_UPDATE_MS 100

/* Whether the terminal hung up (its pty closed without a SIGHUP reaching us): curses then
 * returns ERR at once on every read, and the loop would spin instead of waiting. */
static bool terminal_gone(void)
{
	struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };

	return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR | POLLNVAL));
}

/* The interactive loop on the real terminal. */
static int run_terminal(struct tui_app *a)
{
	long refresh, last;
	struct tui_input in;
	MEVENT me;
	int ch;

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "galatop: view needs a terminal (or use --dump)\n");
		return 1;
	}
	install_signals();
	if (!initscr()) {
		fprintf(stderr, "galatop: cannot initialize the terminal\n");
		return 1;
	}
	curses_active = 1;
	a->w = stdscr;
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	set_escdelay(25);
	curs_set(0);
	mousemask(BUTTON1_CLICKED | BUTTON1_DOUBLE_CLICKED | BUTTON4_PRESSED | BUTTON5_PRESSED,
		  NULL);
	/* A source that drains is woken every 100 ms; the screen still changes once a refresh. */
	refresh = a->opts->refresh_ms > 0 ? a->opts->refresh_ms : 1000;
	wtimeout(stdscr, a->src->ops->drain && refresh > 100 ? 100 : refresh);
	app_colors(a);
	app_draw(a);
	/* The first update comes FIRST_UPDATE_MS after start rather than a whole refresh later,
	 * so a live view shows samples within a second of starting (see make bench). */
	last = clock_mono_ms() - (refresh > FIRST_UPDATE_MS ? refresh - FIRST_UPDATE_MS : 0);
	while (!a->quit && !stop_signal) {
		ch = wgetch(stdscr);
		memset(&in, 0, sizeof(in));
		in.key = ch;
		if (ch == ERR) {
			if (terminal_gone()) {
				stop_signal = SIGHUP;
				break;
			}
			if (a->src->ops->drain && clock_mono_ms() - last < refresh) {
				a->src->ops->drain(a->src->ctx);
				continue;
			}
			last = clock_mono_ms();
			if (!app_tick(a))
				continue;
		} else if (ch == KEY_MOUSE) {
			if (getmouse(&me) != OK)
				continue;
			in.bstate = me.bstate;
			in.x = me.x;
			in.y = me.y;
			app_input(a, &in);
		} else {
			app_input(a, &in);
		}
		if (a->redraw_all) {
			clearok(curscr, TRUE);
			a->redraw_all = false;
		}
		if (!a->quit && !stop_signal)
			app_draw(a);
	}
	restore_terminal();
	return stop_signal ? 128 + stop_signal : 0;
}

int tui_run(struct tui_source *src, const struct tui_opts *o)
{
	struct tui_app a;
	char err[512];
	int r;

	tui_locale(o);
	if (app_init(&a, src, o, err, sizeof(err))) {
		fprintf(stderr, "galatop: %s\n", err);
		app_free(&a);
		return 1;
	}
	r = o->dump || o->bench_frames > 0 ? tui_dump(&a) : run_terminal(&a);
	app_free(&a);
	return r;
}
