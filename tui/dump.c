/* The no-display mode, after tig's: ncurses runs on /dev/null with a fixed size, a key script
 * drives the app, and the screen buffer is printed row by row (optionally with the color role
 * of each cell), so screen tests need no terminal. Also the render benchmark. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "app.h"
#include "util/clock.h"
#include "util/utf8.h"

static void dump_screen(WINDOW *w, FILE *out, bool roles)
{
	int rows, cols;
	bool used[ROLE_MAX] = { false };

	getmaxyx(w, rows, cols);
	char *line = malloc((size_t)cols * 4 * CCHARW_MAX + 2), *rl = malloc((size_t)cols + 2);

	if (!line || !rl) {
		free(line);
		free(rl);
		return;
	}
	for (int pass = 0; pass < (roles ? 2 : 1); pass++) {
		if (pass)
			fputs("-- roles --\n", out);
		for (int y = 0; y < rows; y++) {
			size_t n = 0, keep = 0, rn = 0, rkeep = 0;

			for (int x = 0; x < cols; x++) {
				cchar_t cc;
				wchar_t wc[CCHARW_MAX + 1] = { 0 };
				attr_t at;
				short pair = 0;
				int wd;

				if (mvwin_wch(w, y, x, &cc) == ERR)
					break;
				getcchar(&cc, wc, &at, &pair, NULL);
				enum tui_role r = tui_role_of_pair(pair);

				used[r] = true;
				rl[rn++] = tui_role_letter(r);
				if (r != ROLE_NORMAL)
					rkeep = rn;
				for (int k = 0; k < CCHARW_MAX && wc[k]; k++)
					n += utf8_put(line + n, (uint32_t)wc[k]);
				if (!wc[0])
					line[n++] = ' ';
				if (wc[0] != L' ')
					keep = n;
				/* A wide character covers the next cell too. */
				wd = wc[0] ? wcwidth(wc[0]) : 1;
				for (; wd > 1 && x + 1 < cols; wd--) {
					x++;
					rl[rn] = rl[rn - 1];
					rn++;
				}
			}
			if (pass)
				fprintf(out, "%.*s\n", (int)rkeep, rl);
			else
				fprintf(out, "%.*s\n", (int)keep, line);
		}
	}
	if (roles) {
		fputs("-- legend --\n", out);
		for (int r = 0; r < ROLE_MAX; r++)
			if (used[r])
				fprintf(out, "%c %s\n", tui_role_letter((enum tui_role)r),
					tui_role_name((enum tui_role)r));
	}
	free(line);
	free(rl);
}

static void bench(struct tui_app *a, FILE *out, long frames)
{
	double t0, cold, warm, full;

	/* Cold: every frame lays the tree out again, as after new data or a zoom. */
	t0 = (clock_mono_ns() / 1e6);
	for (long i = 0; i < frames; i++) {
		a->gen++;
		app_draw(a);
	}
	cold = ((clock_mono_ns() / 1e6) - t0) / (double)frames;
	t0 = (clock_mono_ns() / 1e6);
	for (long i = 0; i < frames; i++)
		app_draw(a);
	warm = ((clock_mono_ns() / 1e6) - t0) / (double)frames;
	t0 = (clock_mono_ns() / 1e6);
	for (long i = 0; i < frames; i++) {
		a->gen++;
		app_draw(a);
		wnoutrefresh(a->w);
		doupdate();
	}
	full = ((clock_mono_ns() / 1e6) - t0) / (double)frames;
	fprintf(out,
		"render %dx%d, %u nodes, %ld frames: layout+draw %.3f ms/frame, cached layout "
		"%.3f ms/frame, with terminal output %.3f ms/frame\n",
		a->cols, a->rows, profile__node_count(a->disp), frames, cold, warm, full);
}

int tui_dump(struct tui_app *a)
{
	const struct tui_opts *o = a->opts;
	FILE *out = o->dump_out ? o->dump_out : stdout, *nout, *nin;
	const char *term = o->dump_term ? o->dump_term : "xterm-256color";
	struct tui_input *in = NULL;
	char err[256];
	long n = 0;
	SCREEN *scr;

	if (o->keys) {
		n = tui_keys_parse(o->keys, &in, err, sizeof(err));
		if (n < 0) {
			fprintf(stderr, "galatop: --keys: %s\n", err);
			return 2;
		}
	}
	nout = fopen("/dev/null", "w");
	nin = fopen("/dev/null", "r");
	scr = nout && nin ? newterm(term, nout, nin) : NULL;
	if (!scr) {
		fprintf(stderr, "galatop: cannot start ncurses on /dev/null with TERM %s\n", term);
		free(in);
		if (nout)
			fclose(nout);
		if (nin)
			fclose(nin);
		return 1;
	}
	set_term(scr);
	resizeterm(o->dump_rows, o->dump_cols);
	a->w = stdscr;
	app_colors(a);
	app_draw(a);
	for (long i = 0; i < n && !a->quit; i++) {
		if (in[i].key == KEY_RESIZE)
			resizeterm(in[i].h, in[i].w);
		if (in[i].key == TUI_KEY_TICK)
			app_tick(a);
		else
			app_input(a, &in[i]);
		if (!a->quit)
			app_draw(a);
	}
	if (o->bench_frames > 0)
		bench(a, out, o->bench_frames);
	else
		dump_screen(a->w, out, o->dump_roles);
	endwin();
	delscreen(scr);
	fclose(nout);
	fclose(nin);
	free(in);
	return fflush(out) ? 1 : 0;
}
