/* Unit tests of the TUI's non-drawing parts: key scripts and names, theme files, filters,
 * and value formatting (the filters are tested in tests/model/test_filter.c). */
#include <errno.h>
#include <stdlib.h>

#include "harness.h"
#include "profile_fixture.h"
#include "../model/profile.h"
#include "../model/filter.h"
#include "../tui/keys.h"
#include "../tui/list.h"
#include "../tui/text.h"
#include "../tui/theme.h"
#include "../tui/tui.h"

static struct strtab *st;
static struct frames *ft;

/* Adds folded-style stack "a;b;c" with value v. */
static void add(struct profile *p, const char *stack, double v)
{
	fx_add_stack(ft, p, stack, strlen(stack), v, -1);
}

static struct profile *sample(void)
{
	return fx_identities(ft);
}

TEST_CASE(key_script)
{
	struct tui_input *in;
	char err[128];
	long n = tui_keys_parse("a\\n<Enter><Esc>\\e<Tab><F1><F12><C-l><Up><lt><Nope>x<Click:3,4><Resize:50x20>\\\\", &in, err, sizeof(err));

	CHECK(n == 21);
	if (n == 21) {
		CHECK(in[0].key == 'a');
		CHECK(in[1].key == '\n' && in[2].key == '\n');
		CHECK(in[3].key == 27 && in[4].key == 27);
		CHECK(in[5].key == '\t');
		CHECK(in[6].key == KEY_F(1) && in[7].key == KEY_F(12));
		CHECK(in[8].key == TUI_CTRL('l'));
		CHECK(in[9].key == KEY_UP);
		CHECK(in[10].key == '<');
		CHECK(in[11].key == '<' && in[12].key == 'N'); /* not a name: literal */
		CHECK(in[17].key == 'x');
		CHECK(in[18].key == KEY_MOUSE && in[18].x == 3 && in[18].y == 4 &&
		      in[18].bstate == BUTTON1_CLICKED);
		CHECK(in[19].key == KEY_RESIZE && in[19].w == 50 && in[19].h == 20);
		CHECK(in[20].key == '\\');
	}
	free(in);
	CHECK(tui_keys_parse("ab\\q", &in, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "\\q") != NULL);
	CHECK(tui_keys_parse("", &in, err, sizeof(err)) == 0);
	free(in);
}

TEST_CASE(key_names)
{
	static const struct tui_key k = { { KEY_F(1), '?' }, 1, "help", "Help" };
	static const struct tui_key e = { { '\n', KEY_ENTER }, 1, "zoom", NULL };
	char buf[64];

	tui_key_label(&k, buf, sizeof(buf));
	CHECK_STR(buf, "F1 ?");
	tui_key_label(&e, buf, sizeof(buf));
	CHECK_STR(buf, "Enter");
	tui_key_name(TUI_CTRL('l'), buf, sizeof(buf));
	CHECK_STR(buf, "C-l");
	tui_key_name(27, buf, sizeof(buf));
	CHECK_STR(buf, "Esc");
	CHECK(tui_key_find(&k, 1, '?') == &k);
	CHECK(tui_key_find(&k, 1, 'x') == NULL);
}

TEST_CASE(theme_parse)
{
	struct tui_theme t;
	char err[256];

	CHECK(tui_theme_parse("# c\nframe_user #112233 blue bold\n\nselection 200 default reverse # x\n",
			      "x.theme", &t, err, sizeof(err)) == 0);
	CHECK(t.style[ROLE_FRAME_USER].fg == COLOR_RGB(0x11, 0x22, 0x33));
	CHECK(t.style[ROLE_FRAME_USER].bg == COLOR_BLUE);
	CHECK(t.style[ROLE_FRAME_USER].attr == A_BOLD);
	CHECK(t.style[ROLE_SELECTION].fg == 200 && t.style[ROLE_SELECTION].bg == COLOR_DEFAULT);
	/* Roles the file leaves out look as in the default theme. */
	CHECK(t.style[ROLE_FRAME_KERNEL].bg == COLOR_RED);
	CHECK(tui_theme_parse("frame_user black\nbogus red\n", "b.theme", &t, err, sizeof(err)) == -EINVAL);
	CHECK_STR(err, "b.theme:2: unknown role 'bogus'");
	CHECK(tui_theme_parse("match rouge\n", "c.theme", &t, err, sizeof(err)) == -EINVAL);
	CHECK(strncmp(err, "c.theme:1: bad color", 20) == 0);
	/* A '#' word that is no #rrggbb color starts a comment. */
	CHECK(tui_theme_parse("match #12345 red\n", "g.theme", &t, err, sizeof(err)) == -EINVAL);
	CHECK_STR(err, "g.theme:1: match needs a color");
	CHECK(tui_theme_parse("match 256\n", "d.theme", &t, err, sizeof(err)) == -EINVAL);
	CHECK(tui_theme_parse("header\n", "e.theme", &t, err, sizeof(err)) == -EINVAL);
	CHECK_STR(err, "e.theme:1: header needs a color");
	/* hues on|off: on unless the theme says off. */
	CHECK(tui_theme_parse("", "h.theme", &t, err, sizeof(err)) == 0 && t.hues);
	CHECK(tui_theme_parse("hues off\n", "h.theme", &t, err, sizeof(err)) == 0 && !t.hues);
	CHECK(tui_theme_parse("hues maybe\n", "h.theme", &t, err, sizeof(err)) == -EINVAL);
	CHECK_STR(err, "h.theme:1: hues takes on or off");
	CHECK(tui_theme_parse("heat8 white #cc1010\n", "h.theme", &t, err, sizeof(err)) == 0);
	CHECK(t.style[ROLE_HEAT8].bg == COLOR_RGB(0xcc, 0x10, 0x10));
}

/* The list helper every table pane uses: keys, paging, the cursor kept on a shown row, the
 * wheel taking the cursor along, clicks. */
TEST_CASE(list_helper)
{
	struct tui_list l = { 0 };
	struct tui_input wheel = { .key = KEY_MOUSE, .bstate = BUTTON5_PRESSED };
	struct tui_input click = { .key = KEY_MOUSE, .bstate = BUTTON1_CLICKED };

	tui_list_show(&l, 100, 10);
	CHECK(l.sel == 0 && l.scroll == 0 && l.page == 10);
	CHECK(tui_list_move(&l, 100, LIST_END) && l.sel == 99 && l.scroll == 90);
	CHECK(tui_list_move(&l, 100, LIST_PGUP) && l.sel == 89 && l.scroll == 89);
	CHECK(tui_list_move(&l, 100, LIST_HOME) && l.sel == 0 && l.scroll == 0);
	CHECK(tui_list_move(&l, 100, LIST_UP) && l.sel == 0);
	CHECK(tui_list_move(&l, 100, LIST_PGDN) && l.sel == 10 && l.scroll == 1);
	CHECK(tui_list_move(&l, 100, LIST_DOWN) && l.sel == 11 && l.scroll == 2);
	CHECK(!tui_list_move(&l, 100, LIST_ACTIONS));
	/* After a sort from the last row: the cursor and the view back at the top. */
	tui_list_move(&l, 100, LIST_END);
	tui_list_top(&l);
	tui_list_show(&l, 100, 10);
	CHECK(l.sel == 0 && l.scroll == 0);
	/* The wheel scrolls three rows and drags the cursor into the view. */
	CHECK(tui_list_mouse(&l, 100, &wheel, 5) == -1 && l.scroll == 3 && l.sel == 3);
	wheel.bstate = BUTTON4_PRESSED;
	CHECK(tui_list_mouse(&l, 100, &wheel, 5) == -1 && l.scroll == 0 && l.sel == 3);
	tui_list_move(&l, 100, LIST_END);
	wheel.bstate = BUTTON5_PRESSED;
	CHECK(tui_list_mouse(&l, 100, &wheel, 5) == -1 && l.scroll == 90 && l.sel == 99);
	/* A click picks the row under it; below the last row, or above the list, nothing. */
	click.y = 5 + 4;
	CHECK(tui_list_mouse(&l, 100, &click, 5) == 94 && l.sel == 94);
	click.y = 4;
	CHECK(tui_list_mouse(&l, 100, &click, 5) == -1 && l.sel == 94);
	tui_list_show(&l, 3, 10);
	CHECK(l.sel == 2 && l.scroll == 0);
	click.y = 5 + 5;
	CHECK(tui_list_mouse(&l, 3, &click, 5) == -1);
	/* An empty list: the cursor on row 0, nothing to move to. */
	tui_list_show(&l, 0, 10);
	CHECK(l.sel == 0 && l.scroll == 0 && tui_list_move(&l, 0, LIST_DOWN) && l.sel == 0);
}

TEST_CASE(theme_files_load)
{
	static const char *const names[] = { "default", "hot", "mono", "high-contrast",
					     "colorblind" };
	struct tui_theme builtin, file;
	char err[256];

	setenv("GALATOP_THEMES", "themes", 1);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int r = tui_theme_load(names[i], &file, err, sizeof(err));

		CHECK(r == 0);
		if (r)
			printf("  %s: %s\n", names[i], err);
	}
	/* themes/default.theme is the built-in default, word for word in effect. */
	setenv("GALATOP_THEMES", "/nonexistent", 1);
	CHECK(tui_theme_load("default", &builtin, err, sizeof(err)) == 0);
	CHECK(tui_theme_load("themes/default.theme", &file, err, sizeof(err)) == 0);
	CHECK(memcmp(builtin.style, file.style, sizeof(builtin.style)) == 0);
	CHECK(tui_theme_load("mono", &builtin, err, sizeof(err)) == 0);
	CHECK(tui_theme_load("themes/mono.theme", &file, err, sizeof(err)) == 0);
	CHECK(memcmp(builtin.style, file.style, sizeof(builtin.style)) == 0);
	CHECK(tui_theme_load("../etc", &file, err, sizeof(err)) != 0);
	CHECK(tui_theme_load("nosuch", &file, err, sizeof(err)) == -ENOENT);
}

TEST_CASE(values)
{
	char b[32];

	tui_fmt_value(VALUE_SAMPLES, 1234, b, sizeof(b));
	CHECK_STR(b, "1234");
	tui_fmt_value(VALUE_NANOSECONDS, 12500000, b, sizeof(b));
	CHECK_STR(b, "12.5ms");
	tui_fmt_value(VALUE_MICROSECONDS, 3, b, sizeof(b));
	CHECK_STR(b, "3.00us");
	tui_fmt_value(VALUE_BYTES, 3 * 1048576.0, b, sizeof(b));
	CHECK_STR(b, "3.0 MiB");
	tui_fmt_value(VALUE_BYTES, 10, b, sizeof(b));
	CHECK_STR(b, "10 B");
	CHECK_NUM(tui_pct(1, 0), 0);
	CHECK_NUM(tui_pct(1, 4), 25);
}

/* A live source stand-in: each update adds 10 samples. */
struct fake {
	struct profile *p[STACK_TYPES];
	uint64_t samples;
	enum tui_mode mode;
};

static bool fake_update(void *ctx)
{
	struct fake *f = ctx;

	add(f->p[STACK_ONCPU], "[10]nginx;main;tick", 10);
	return true;
}

static const struct profile *fake_profile(void *ctx, enum stack_type t)
{
	return ((struct fake *)ctx)->p[t];
}

static void fake_stats(void *ctx, struct tui_stats *o)
{
	struct fake *f = ctx;

	/* Samples arrive in the background, whether or not the TUI takes them in. */
	f->samples += 10;
	memset(o, 0, sizeof(*o));
	o->live = true;
	o->origin = "live";
	o->probes = "oncpu offcpu";
	o->hz = 99;
	o->samples_per_s = 500;
	o->samples = f->samples;
	o->lost = 3;
	o->own_cpu = 1.5;
	o->mode = f->mode;
}

static int fake_set_mode(void *ctx, enum tui_mode m, double window_s)
{
	((struct fake *)ctx)->mode = m;
	return 0;
}

static const struct tui_source_ops fake_ops = {
	.update = fake_update,
	.profile = fake_profile,
	.stats = fake_stats,
	.set_mode = fake_set_mode,
};

/* Runs the dump mode over the fake source and returns the screen (caller frees). */
static char *run_live(struct fake *f, const char *keys)
{
	struct tui_source src = { &fake_ops, f };
	struct tui_opts o = { .dump = true, .dump_cols = 120, .dump_rows = 12, .keys = keys };
	char *buf = NULL;
	size_t len = 0;

	o.dump_out = open_memstream(&buf, &len);
	tui_run(&src, &o);
	fclose(o.dump_out);
	return buf;
}

TEST_CASE(live_source)
{
	struct fake f = { { sample(), profile__new(ft, VALUE_NANOSECONDS, false), NULL }, 100,
			  MODE_ACCUMULATE };
	char *s;

	add(f.p[STACK_OFFCPU], "[10]nginx;main;sleep_[k]", 2e6);
	s = run_live(&f, "");
	CHECK(strstr(s, "99 Hz  500 samples/s") != NULL);
	CHECK(strstr(s, "lost 3 (lower -F)") != NULL);
	CHECK(strstr(s, "dropped 0  cpu 1.5%") != NULL);
	CHECK(strstr(s, "mode: accumulate") != NULL);
	free(s);
	s = run_live(&f, "z<Tick><Tick>");
	/* Collection goes on while frozen: pending counts it, the display stays. */
	CHECK(strstr(s, "FROZEN +") != NULL && strstr(s, "FROZEN +0 ") == NULL);
	CHECK(strstr(s, " 15 samples") != NULL); /* the display did not move */
	free(s);
	s = run_live(&f, "<Tick>");
	CHECK(strstr(s, " 25 samples") != NULL);
	free(s);
	s = run_live(&f, "m");
	CHECK(strstr(s, "update mode: window") != NULL && strstr(s, "mode: window 10s") != NULL);
	CHECK(f.mode == MODE_WINDOW);
	free(s);
	s = run_live(&f, "o");
	CHECK(strstr(s, "profile: offcpu") != NULL && strstr(s, "2.00ms") != NULL);
	free(s);
	profile__free(f.p[0]);
	profile__free(f.p[1]);
}

int main(void)
{
	st = strtab__new();
	ft = frames__new(st);
	RUN(key_script);
	RUN(key_names);
	RUN(theme_parse);
	RUN(list_helper);
	RUN(theme_files_load);
	RUN(values);
	RUN(live_source);
	frames__free(ft);
	strtab__free(st);
	HARNESS_EXIT();
}
