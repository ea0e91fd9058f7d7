/* SVG flame graphs: layout, titles, colors and escaping checked on small known trees. */
#include "harness.h"
#include "profile_fixture.h"

#include <errno.h>
#include <unistd.h>

#include "export/svg.h"
#include "model/sanitize.h"

/* Adds a stack given as "a;b;c" (raw bytes, len bytes; names may hold NUL) with one or two
 * values (value2 < 0: one column). */
static void add_raw(struct fixture *fx, const char *stack, size_t len, double value, double value2)
{
	fx_add_stack(fx->ft, fx->p, stack, len, value, value2);
}

static void add(struct fixture *fx, const char *stack, double value)
{
	add_raw(fx, stack, strlen(stack), value, -1);
}

/* Renders p into a malloc'd string (NUL-terminated; *len gets its length). */
static char *render(const struct profile *p, const struct svg_opts *o, size_t *len, int *rc)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	int r = svg_write(f, p, o);

	fclose(f);
	if (rc)
		*rc = r;
	else
		CHECK(r == 0);
	if (len)
		*len = n;
	return buf;
}

/* Occurrences of needle in hay (by hand: sanitizers make strstr measure the haystack on every
 * call, quadratic on large outputs). */
static size_t count_of(const char *hay, const char *needle)
{
	size_t n = 0, k = strlen(needle);

	for (const char *p = hay; (p = strchr(p, needle[0])); p++) {
		if (!strncmp(p, needle, k)) {
			n++;
			p += k - 1;
		}
	}
	return n;
}

/* Frame k (0-based, in document order): its title text, and its rect's attributes. */
struct frame_view {
	char title[256];
	double x, y, width, height;
	char fill[32];
	char label[256];
};

static bool frame_at(const char *svg, size_t k, struct frame_view *fv)
{
	const char *p = strstr(svg, "<g id=\"frames\"");
	const char *t, *e;

	if (!p)
		return false;
	for (size_t i = 0; i <= k; i++) {
		p = strstr(p + 1, "<g><title>");
		if (!p)
			return false;
	}
	t = p + strlen("<g><title>");
	e = strstr(t, "</title>");
	snprintf(fv->title, sizeof(fv->title), "%.*s", (int)(e - t), t);
	if (sscanf(strstr(e, "<rect"), "<rect x=\"%lf\" y=\"%lf\" width=\"%lf\" height=\"%lf\" fill=\"%31[^\"]",
		   &fv->x, &fv->y, &fv->width, &fv->height, fv->fill) != 5)
		return false;
	t = strchr(strstr(e, "<text"), '>') + 1;
	e = strstr(t, "</text>");
	snprintf(fv->label, sizeof(fv->label), "%.*s", (int)(e - t), t);
	return true;
}

static bool find_frame(const char *svg, const char *title_prefix, struct frame_view *fv)
{
	for (size_t k = 0; frame_at(svg, k, fv); k++)
		if (!strncmp(fv->title, title_prefix, strlen(title_prefix)))
			return true;
	return false;
}

/* Every byte sequence is valid UTF-8 and the only control characters are \n and \t. */
static bool clean_utf8(const char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		size_t n;

		if (s[i] == '\n' || s[i] == '\t') {
			i++;
			continue;
		}
		n = utf8_seq_len((const unsigned char *)s + i, len - i);
		if (!n)
			return false;
		i += n;
	}
	return true;
}

/* xmllint --noout on the text, when xmllint is installed (-1 when it is not). */
static int xmllint(const char *svg, size_t len)
{
	char path[] = "/tmp/galatop-svg-XXXXXX", cmd[128];
	int fd, rc;

	if (system("command -v xmllint >/dev/null 2>&1"))
		return -1;
	fd = mkstemp(path);
	if (fd < 0 || write(fd, svg, len) != (ssize_t)len)
		return 1;
	close(fd);
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s", path);
	rc = system(cmd);
	unlink(path);
	return rc != 0;
}

static void basic(struct fixture *fx)
{
	fx_init(fx, false);
	add(fx, "main;foo;bar", 5);
	add(fx, "main;foo;baz", 3);
	add(fx, "main;qux", 2);
	add(fx, "main", 1);
}

TEST_CASE(frame_count_and_titles)
{
	struct fixture fx;
	struct svg_opts o;
	struct frame_view fv;
	char *svg;

	basic(&fx);
	svg_opts__init(&o);
	svg = render(fx.p, &o, NULL, NULL);
	/* all, main, foo, bar, baz, qux + the frames container */
	CHECK(count_of(svg, "<g>") == 6);
	CHECK(count_of(svg, "<g") == 7);
	CHECK(strstr(svg, "<title>all (11 samples, 100%)</title>") != NULL);
	CHECK(strstr(svg, "<title>main (11 samples, 100.00%)</title>") != NULL);
	CHECK(strstr(svg, "<title>foo (8 samples, 72.73%)</title>") != NULL);
	CHECK(strstr(svg, "<title>bar (5 samples, 45.45%)</title>") != NULL);
	CHECK(strstr(svg, "<title>baz (3 samples, 27.27%)</title>") != NULL);
	CHECK(strstr(svg, "<title>qux (2 samples, 18.18%)</title>") != NULL);
	CHECK(strstr(svg, ">Flame Graph</text>") != NULL);
	/* 4 rows (depth 0..3) * 16 + ypad1 36 + ypad2 34 */
	CHECK(strstr(svg, "width=\"1200\" height=\"134\"") != NULL);
	CHECK(frame_at(svg, 0, &fv));
	CHECK_STR(fv.title, "all (11 samples, 100%)");
	CHECK_NUM(fv.x, 10);
	CHECK_NUM(fv.y, 85);
	CHECK_NUM(fv.width, 1180);
	CHECK_NUM(fv.height, 15);
	free(svg);
	fx_free(&fx);
}

/* Per depth, widths add up to the total minus the parents' own values, and each frame starts
 * where its parent's own value ends or its left sibling ends. */
TEST_CASE(layout_widths_and_order)
{
	struct fixture fx;
	struct svg_opts o;
	struct frame_view all, main_, foo, bar, baz, qux;
	double per = 1180.0 / 11;
	char *svg;

	basic(&fx);
	svg_opts__init(&o);
	svg = render(fx.p, &o, NULL, NULL);
	CHECK(find_frame(svg, "all ", &all) && find_frame(svg, "main ", &main_));
	CHECK(find_frame(svg, "foo ", &foo) && find_frame(svg, "qux ", &qux));
	CHECK(find_frame(svg, "bar ", &bar) && find_frame(svg, "baz ", &baz));
	CHECK(fabs(all.width - 1180) < 0.11 && fabs(main_.width - 1180) < 0.11);
	/* depth 2: foo + qux = 10 of 11 (main's own 1 sample comes first) */
	CHECK(fabs(foo.width + qux.width - 10 * per) < 0.21);
	CHECK(fabs(foo.x - (10 + per)) < 0.06);
	CHECK(fabs(qux.x - (foo.x + foo.width)) < 0.11);
	CHECK(fabs(qux.x + qux.width - 1190) < 0.11);
	/* depth 3 */
	CHECK(fabs(bar.width + baz.width - 8 * per) < 0.21);
	CHECK(fabs(bar.x - foo.x) < 0.06);
	CHECK(fabs(baz.x - (bar.x + bar.width)) < 0.11);
	/* rows go up from the root */
	CHECK(all.y > main_.y && main_.y > foo.y && foo.y == qux.y && foo.y > bar.y);
	CHECK_NUM(all.y - main_.y, 16);
	/* names order siblings: bar before baz, foo before qux */
	CHECK(strstr(svg, "<title>bar ") < strstr(svg, "<title>baz "));
	free(svg);
	fx_free(&fx);
}

TEST_CASE(thousands_and_countname)
{
	struct fixture fx;
	struct svg_opts o;
	char *svg;

	fx_init(&fx, false);
	add(&fx, "a;b", 1234567);
	add(&fx, "a;c", 1000);
	svg_opts__init(&o);
	o.countname = "bytes";
	o.nametype = "Frame:";
	svg = render(fx.p, &o, NULL, NULL);
	CHECK(strstr(svg, "<title>all (1,235,567 bytes, 100%)</title>") != NULL);
	CHECK(strstr(svg, "<title>b (1,234,567 bytes, 99.92%)</title>") != NULL);
	CHECK(strstr(svg, "<title>c (1,000 bytes, 0.08%)</title>") != NULL);
	CHECK(strstr(svg, "data-nametype=\"Frame:\"") != NULL);
	free(svg);
	fx_free(&fx);
}

TEST_CASE(escaping_hostile_names)
{
	static const char nul_name[] = "nul\0byte;x";
	struct fixture fx;
	struct svg_opts o;
	char *svg, *big;
	size_t len, big_len = 64 * 1024;
	int lint;

	fx_init(&fx, false);
	add(&fx, "<script>alert(1)</script>;x", 10);
	add(&fx, "]]><script>alert(2)</script>;x", 10);
	add(&fx, "a&b \"q\" 'r';x", 10);
	add(&fx, "esc\x1b[31mred;bell\x07", 10);
	add_raw(&fx, nul_name, sizeof(nul_name) - 1, 10, -1);
	add(&fx, "bad\xff\xfe utf8;over\xc0\xaflong;sur\xed\xa0\x80rogate;non\xef\xbf\xbe" "char", 10);
	add(&fx, "c1\xc2\x85" "ctl;del\x7f", 10);
	add(&fx, "--;-", 10);
	big = malloc(big_len + 1);
	memset(big, 'W', big_len);
	memcpy(big, "<big&", 5);
	big[big_len] = '\0';
	add(&fx, big, 10);
	svg_opts__init(&o);
	o.title = "<title>&\"'</title>]]>";
	o.subtitle = "sub <b>\x1b";
	o.notes = "notes --> <!-- & -";
	o.fonttype = "Verdana\" onload=\"alert(3)";
	o.countname = "<c>";
	o.nametype = "]]> \"n\"";
	svg = render(fx.p, &o, &len, NULL);

	CHECK(strlen(svg) == len); /* no NUL byte */
	CHECK(clean_utf8(svg, len));
	CHECK(!strstr(svg, "<script>alert"));
	CHECK(!strstr(svg, "onload=\"alert"));
	CHECK(strstr(svg, "&lt;script&gt;alert(1)&lt;/script&gt;") != NULL);
	CHECK(strstr(svg, "a&amp;b &quot;q&quot; &#39;r&#39;") != NULL);
	CHECK(strstr(svg, "esc\xEF\xBF\xBD[31mred") != NULL);
	CHECK(strstr(svg, "nul\xEF\xBF\xBD" "byte") != NULL);
	CHECK(strstr(svg, "bad\xEF\xBF\xBD\xEF\xBF\xBD utf8") != NULL);
	CHECK(strstr(svg, "over\xEF\xBF\xBD\xEF\xBF\xBDlong") != NULL);
	CHECK(strstr(svg, "non\xEF\xBF\xBD" "char") != NULL);
	CHECK(strstr(svg, "c1\xEF\xBF\xBD" "ctl") != NULL);
	CHECK(strstr(svg, "del\xEF\xBF\xBD") != NULL);
	CHECK(strstr(svg, "&lt;big&amp;WWW") != NULL);
	CHECK(strstr(svg, "&lt;title&gt;&amp;&quot;&#39;&lt;/title&gt;]]&gt;</text>") != NULL);
	CHECK(strstr(svg, "<!-- NOTES: notes - -> <!- - & -  -->") != NULL);
	/* The only CDATA ends are the style's and the script's. */
	CHECK(count_of(svg, "]]>") == 2);
	CHECK(count_of(svg, "<script") == 1);
	CHECK(strstr(svg, "<title>-- (10 &lt;c&gt;, 11.11%)") != NULL);
	CHECK(strstr(svg, "fill=\"rgb(160,160,160)\"") != NULL);
	CHECK(strstr(svg, "fill=\"rgb(200,200,200)\"") != NULL);
	lint = xmllint(svg, len);
	if (lint < 0)
		printf("  (xmllint not installed: XML validity not checked here)\n");
	else
		CHECK(lint == 0);
	free(svg);
	free(big);
	fx_free(&fx);
}

TEST_CASE(script_holds_no_user_data)
{
	struct fixture fx;
	struct svg_opts o;
	char *a, *b, *sa, *sb;

	basic(&fx);
	svg_opts__init(&o);
	a = render(fx.p, &o, NULL, NULL);
	o.nametype = "XYZZY";
	o.fontsize = 13;
	o.inverted = true;
	o.title = "other";
	b = render(fx.p, &o, NULL, NULL);
	sa = strstr(a, "<script");
	sb = strstr(b, "<script");
	CHECK(sa && sb);
	CHECK(strstr(sa, "</script>") - sa == strstr(sb, "</script>") - sb);
	CHECK(!memcmp(sa, sb, (size_t)(strstr(sa, "</script>") - sa)));
	CHECK(strstr(b, "data-nametype=\"XYZZY\"") && strstr(b, "data-inverted=\"1\""));
	free(a);
	free(b);
	fx_free(&fx);
}

TEST_CASE(deterministic)
{
	struct fixture fx, fy;
	struct svg_opts o;
	size_t la, lb;
	char *a, *b;

	basic(&fx);
	basic(&fy);
	svg_opts__init(&o);
	a = render(fx.p, &o, &la, NULL);
	b = render(fy.p, &o, &lb, NULL);
	CHECK(la == lb && !memcmp(a, b, la));
	free(b);
	o.hash = true;
	b = render(fx.p, &o, &lb, NULL);
	CHECK(la != lb || memcmp(a, b, la)); /* --hash changes colors */
	free(a);
	a = render(fy.p, &o, &la, NULL);
	CHECK(la == lb && !memcmp(a, b, la));
	free(a);
	free(b);
	fx_free(&fx);
	fx_free(&fy);
}

TEST_CASE(inverted)
{
	struct fixture fx;
	struct svg_opts o;
	struct frame_view all, bar;
	char *svg;

	basic(&fx);
	svg_opts__init(&o);
	o.inverted = true;
	svg = render(fx.p, &o, NULL, NULL);
	CHECK(strstr(svg, ">Icicle Graph</text>") != NULL);
	CHECK(find_frame(svg, "all ", &all) && find_frame(svg, "bar ", &bar));
	CHECK_NUM(all.y, 36); /* ypad1 = 3 * fontsize */
	CHECK_NUM(bar.y, 36 + 3 * 16);
	free(svg);
	o.subtitle = "sub";
	svg = render(fx.p, &o, NULL, NULL);
	CHECK(find_frame(svg, "all ", &all));
	CHECK_NUM(all.y, 36 + 24); /* below the subtitle */
	CHECK(strstr(svg, "height=\"158\"") != NULL);
	CHECK(strstr(svg, "<text id=\"subtitle\" x=\"600\" y=\"48\">sub</text>") != NULL);
	free(svg);
	fx_free(&fx);
}

TEST_CASE(flamechart_keeps_order)
{
	struct fixture fx;
	struct svg_opts o;
	struct frame_view f1, f2, f3;
	char *svg;

	fx_init(&fx, true);
	add(&fx, "b;x", 1);
	add(&fx, "a", 1);
	add(&fx, "b;y", 2);
	svg_opts__init(&o);
	svg = render(fx.p, &o, NULL, NULL);
	CHECK(strstr(svg, ">Flame Chart</text>") != NULL);
	/* all, b, x, a, b, y: the two b are separate frames in time order */
	CHECK(count_of(svg, "<g>") == 6);
	CHECK(frame_at(svg, 1, &f1) && frame_at(svg, 3, &f2) && frame_at(svg, 4, &f3));
	CHECK(!strncmp(f1.title, "b (1 ", 5) && !strncmp(f2.title, "a (1 ", 5));
	CHECK(!strncmp(f3.title, "b (2 ", 5));
	CHECK(f1.x < f2.x && f2.x < f3.x);
	free(svg);
	fx_free(&fx);
}

TEST_CASE(differential_and_negate)
{
	struct fixture fx;
	struct svg_opts o;
	struct frame_view b, c, a;
	char *svg;

	fx_init(&fx, false);
	add_raw(&fx, "a;b", 3, 1, 3);
	add_raw(&fx, "a;c", 3, 4, 1);
	add_raw(&fx, "a", 1, 2, 2);
	svg_opts__init(&o);
	svg = render(fx.p, &o, NULL, NULL);
	CHECK(find_frame(svg, "b ", &b) && find_frame(svg, "c ", &c) && find_frame(svg, "a ", &a));
	CHECK_STR(b.title, "b (3 samples, 50.00%; +33.33%)");
	CHECK_STR(c.title, "c (1 samples, 16.67%; -50.00%)");
	CHECK_STR(a.title, "a (6 samples, 100.00%; 0.00%)");
	CHECK_STR(b.fill, "rgb(255,70,70)"); /* +2 of max 3 */
	CHECK_STR(c.fill, "rgb(0,0,255)");   /* -3 of max 3 */
	CHECK_STR(a.fill, "rgb(255,255,255)");
	CHECK_NUM(b.width, 590); /* widths from the second column: 3 of 6 */
	free(svg);
	o.negate = true;
	svg = render(fx.p, &o, NULL, NULL);
	CHECK(find_frame(svg, "b ", &b) && find_frame(svg, "c ", &c));
	CHECK_STR(b.title, "b (3 samples, 50.00%; -33.33%)");
	CHECK_STR(c.title, "c (1 samples, 16.67%; +50.00%)");
	CHECK_STR(b.fill, "rgb(70,70,255)");
	CHECK_STR(c.fill, "rgb(255,0,0)");
	free(svg);
	fx_free(&fx);
}

TEST_CASE(minwidth_pixels_and_percent)
{
	struct fixture fx;
	struct svg_opts o;
	struct frame_view fv;
	char *svg;

	fx_init(&fx, false);
	add(&fx, "main;big;deep", 90);
	add(&fx, "main;small;deeper;deepest", 10);
	svg_opts__init(&o);
	svg = render(fx.p, &o, NULL, NULL);
	CHECK(count_of(svg, "<g>") == 7);
	CHECK(strstr(svg, "height=\"150\"") != NULL); /* depth 4 */
	free(svg);
	/* small is 118 px wide: gone with everything above it; main keeps its full width */
	o.minwidth = 120;
	svg = render(fx.p, &o, NULL, NULL);
	CHECK(count_of(svg, "<g>") == 4);
	CHECK(!strstr(svg, "<title>small") && !strstr(svg, "<title>deepest"));
	CHECK(find_frame(svg, "main ", &fv) && fabs(fv.width - 1180) < 0.11);
	CHECK(strstr(svg, "height=\"134\"") != NULL); /* depth 3 */
	free(svg);
	o.minwidth = 10.5;
	o.minwidth_percent = true;
	svg = render(fx.p, &o, NULL, NULL);
	CHECK(count_of(svg, "<g>") == 4);
	free(svg);
	o.minwidth = 9.5;
	svg = render(fx.p, &o, NULL, NULL);
	CHECK(count_of(svg, "<g>") == 7);
	free(svg);
	fx_free(&fx);
}

TEST_CASE(labels_fit_and_annotations)
{
	struct fixture fx;
	struct svg_opts o;
	struct frame_view fv;
	char *svg;

	fx_init(&fx, false);
	add(&fx, "java/lang/Thread.run_[j];do_syscall_64_[k]", 1);
	add(&fx, "std::vector<int>::push_back;averyveryverylongfunctionnamethatwillnotfit", 1);
	add(&fx, "x", 2000);
	svg_opts__init(&o);
	o.palette = PALETTE_JAVA;
	o.minwidth = 0;
	svg = render(fx.p, &o, NULL, NULL);
	CHECK(find_frame(svg, "java/lang/Thread.run (1 ", &fv)); /* annotation not shown */
	CHECK(fv.fill[4] == '5' || fv.fill[4] == '6' || fv.fill[4] == '7' || fv.fill[4] == '8' ||
	      fv.fill[4] == '9' || fv.fill[4] == '1'); /* green: rgb(50..110,200..255,..) */
	CHECK(find_frame(svg, "do_syscall_64 ", &fv));
	CHECK(!strncmp(fv.fill, "rgb(", 4) && strstr(fv.fill, ",0)")); /* orange: blue 0 */
	CHECK(find_frame(svg, "std::vector&lt;int&gt;::push_back ", &fv));
	CHECK_STR(fv.label, ""); /* 0.6 px: no room */
	free(svg);
	fx_free(&fx);

	fx_init(&fx, false);
	add(&fx, "averyveryverylongfunctionnamethatwillnotfit", 1);
	add(&fx, "y", 19);
	svg_opts__init(&o);
	svg = render(fx.p, &o, NULL, NULL);
	/* 59 px / 7.08 px per character = 8 characters: 6 and two dots */
	CHECK(find_frame(svg, "averyvery", &fv));
	CHECK_STR(fv.label, "averyv..");
	CHECK(find_frame(svg, "y ", &fv));
	CHECK_STR(fv.label, "y");
	free(svg);
	fx_free(&fx);
}

/* The fill rgb(r,g,b) of a frame view. */
static struct rgb fill_of(const struct frame_view *fv)
{
	int r = -1, g = -1, b = -1;

	sscanf(fv->fill, "rgb(%d,%d,%d)", &r, &g, &b);
	return (struct rgb){ (uint8_t)r, (uint8_t)g, (uint8_t)b };
}

static bool same_rgb(struct rgb a, struct rgb b)
{
	return a.r == b.r && a.g == b.g && a.b == b.b;
}

TEST_CASE(kind_palette)
{
	static const struct {
		const char *name, *label;
		unsigned kind;
		int ramp;
	} want[] = {
		{ "main", "main ", FRAME_USER, RAMP_USER },
		{ "do_syscall_64_[k]", "do_syscall_64 ", FRAME_KERNEL, RAMP_KERNEL },
		{ "com/app/Run.work_[j]", "com/app/Run.work ", FRAME_JIT, RAMP_JIT },
		{ "inl_helper_[i]", "inl_helper ", FRAME_INLINED, RAMP_INLINED },
		{ "Thread.run (threading.py:975)", "Thread.run (threading.py:975) ", FRAME_USER,
		  RAMP_PYTHON },
	};
	struct fixture fx;
	struct svg_opts o;
	struct frame_view fv;
	char *svg;
	double v;
	unsigned used = 0;

	fx_init(&fx, false);
	add(&fx, "main;Thread.run (threading.py:975);inl_helper_[i];do_syscall_64_[k]", 10);
	add(&fx, "main;com/app/Run.work_[j]", 10);
	svg_opts__init(&o);
	o.palette = PALETTE_KIND;
	svg = render(fx.p, &o, NULL, NULL);
	/* Each family on its own ramp, the SVG's color the very one the terminal's hues sample:
	 * the ramp's color at the name's point. */
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		size_t len = strlen(want[i].name);
		int ramp = palette_ramp_of(PALETTE_KIND, want[i].kind, want[i].name, len, false, &v);

		CHECK(ramp == want[i].ramp);
		CHECK(find_frame(svg, want[i].label, &fv));
		CHECK(same_rgb(fill_of(&fv), palette_ramp_color((enum palette_ramp)ramp, v)));
		CHECK(same_rgb(fill_of(&fv), palette_frame_color(PALETTE_KIND, want[i].kind,
								  want[i].name, len, false)));
	}
	CHECK(find_frame(svg, "do_syscall_64 ", &fv));
	CHECK(fill_of(&fv).r >= 180 && fill_of(&fv).g <= 80); /* red */
	CHECK(find_frame(svg, "main ", &fv));
	CHECK(fill_of(&fv).r >= 240 && fill_of(&fv).g >= 130 && fill_of(&fv).b <= 90); /* amber-yellow */
	CHECK(find_frame(svg, "Thread.run (threading.py:975) ", &fv));
	CHECK(fill_of(&fv).b >= 210 && fill_of(&fv).r <= 160); /* blue */
	free(svg);
	fx_free(&fx);
	/* The hue varies per name, stable from run to run: 200 names use all eight hues of a ramp
	 * and many colors; a name keeps its color. */
	for (int i = 0; i < 200; i++) {
		char name[16];
		int n = snprintf(name, sizeof(name), "func_%d", i);

		CHECK(palette_ramp_of(PALETTE_KIND, FRAME_USER, name, (size_t)n, false, &v) == RAMP_USER);
		used |= 1u << (int)(v * 8);
		CHECK(same_rgb(palette_frame_color(PALETTE_KIND, FRAME_USER, name, (size_t)n, false),
			       palette_frame_color(PALETTE_KIND, FRAME_USER, name, (size_t)n, false)));
	}
	CHECK(used == 0xff);
	/* flamegraph.pl's palettes through the same entry, whatever the kind. */
	CHECK(same_rgb(palette_frame_color(PALETTE_HOT, FRAME_KERNEL, "x_[k]", 5, false),
		       palette_color(PALETTE_HOT, "x_[k]", 5, false)));
	CHECK(palette_ramp_of(PALETTE_JAVA, FRAME_USER, "JVM::thing", 10, false, &v) == RAMP_YELLOW);
	CHECK(palette_ramp_of(PALETTE_KIND, FRAME_USER, "-", 1, false, &v) == -1);
	CHECK(palette_python("f (a.py:1)", 10) && palette_python("<module> (app.py:12)", 20));
	CHECK(!palette_python("f (a.py:)", 9) && !palette_python("f a.py:1)", 9) &&
	      !palette_python("py:1)", 5) && !palette_python("f (a.pyc:1)", 11));
	CHECK(palette_parse("kind") == PALETTE_KIND);
}

TEST_CASE(palettes)
{
	struct rgb a = palette_color(PALETTE_HOT, "foo", 3, false);
	struct rgb b = palette_color(PALETTE_HOT, "foo", 3, false);
	struct rgb c;

	CHECK(a.r == b.r && a.g == b.g && a.b == b.b);
	CHECK(a.r >= 205 && a.g <= 230 && a.b <= 55);
	c = palette_color(PALETTE_MEM, "foo", 3, true);
	CHECK(c.r == 0 && c.g >= 190);
	c = palette_color(PALETTE_JAVA, "Ljava/util/HashMap;get", 22, false);
	CHECK(c.g >= 200 && c.r <= 110); /* green */
	c = palette_color(PALETTE_JAVA, "JVM::thing", 10, false);
	CHECK(c.r == c.g && c.b <= 70); /* yellow */
	c = palette_color(PALETTE_JAVA, "inl_[i]", 7, false);
	CHECK(c.g == c.b && c.r <= 110); /* aqua */
	c = palette_color(PALETTE_JS, "foo /app/x.js:12", 16, false);
	CHECK(c.g >= 200 && c.r <= 110);
	c = palette_color(PALETTE_PERL, "Perl_pp_entersub", 16, false);
	CHECK(c.g >= 200 && c.r <= 110);
	/* --hash: flamegraph.pl's vector of the first three characters (module stripped) */
	a = palette_color(PALETTE_HOT, "libc.so`abc", 11, true);
	b = palette_color(PALETTE_HOT, "abcdefgh", 8, true);
	CHECK(a.g == b.g);
	CHECK(palette_parse("orange") == PALETTE_ORANGE && palette_parse("nope") == -1);
	c = palette_delta(5, 10);
	CHECK(c.r == 255 && c.g == 105 && c.b == 105);
	c = palette_delta(-10, 10);
	CHECK(c.r == 0 && c.g == 0 && c.b == 255);
	CHECK(svg_bgcolors_valid("grey") && svg_bgcolors_valid("#A0b0c0"));
	CHECK(!svg_bgcolors_valid("#a0b0cg") && !svg_bgcolors_valid("red\"><script>"));
}

TEST_CASE(backgrounds)
{
	struct fixture fx;
	struct svg_opts o;
	char *svg;

	basic(&fx);
	svg_opts__init(&o);
	o.palette = PALETTE_MEM;
	svg = render(fx.p, &o, NULL, NULL);
	CHECK(strstr(svg, "stop-color=\"#eef2ee\"") && strstr(svg, "stop-color=\"#e0ffe0\""));
	free(svg);
	o.bgcolors = "#123abc";
	svg = render(fx.p, &o, NULL, NULL);
	CHECK(count_of(svg, "stop-color=\"#123abc\"") == 2);
	free(svg);
	fx_free(&fx);
}

TEST_CASE(empty_profile_error_image)
{
	struct fixture fx;
	struct svg_opts o;
	size_t len;
	int rc, lint;
	char *svg;

	fx_init(&fx, false);
	svg_opts__init(&o);
	svg = render(fx.p, &o, &len, &rc);
	CHECK(rc == -ENODATA);
	CHECK(strstr(svg, "ERROR: No valid input provided") != NULL);
	CHECK(strstr(svg, "</svg>") != NULL);
	lint = xmllint(svg, len);
	CHECK(lint <= 0);
	free(svg);
	add(&fx, "a", 0);
	svg = render(fx.p, &o, &len, &rc);
	CHECK(rc == -ENODATA);
	free(svg);
	fx_free(&fx);
}

TEST_CASE(deep_stack)
{
	struct fixture fx;
	struct svg_opts o;
	size_t n = 200000;
	uint32_t *ids = malloc(n * sizeof(*ids));
	char name[32];
	char *svg;

	fx_init(&fx, false);
	for (size_t i = 0; i < n; i++) {
		int k = snprintf(name, sizeof(name), "f%zu", i % 1000);

		ids[i] = frames__intern_name(fx.ft, name, (size_t)k);
	}
	CHECK(profile__add_stack(fx.p, ids, n, 1) == 0);
	svg_opts__init(&o);
	svg = render(fx.p, &o, NULL, NULL);
	CHECK(count_of(svg, "<g>") == n + 1);
	free(svg);
	free(ids);
	fx_free(&fx);
}

int main(void)
{
	RUN(frame_count_and_titles);
	RUN(layout_widths_and_order);
	RUN(thousands_and_countname);
	RUN(escaping_hostile_names);
	RUN(script_holds_no_user_data);
	RUN(deterministic);
	RUN(inverted);
	RUN(flamechart_keeps_order);
	RUN(differential_and_negate);
	RUN(minwidth_pixels_and_percent);
	RUN(labels_fit_and_annotations);
	RUN(palettes);
	RUN(kind_palette);
	RUN(backgrounds);
	RUN(empty_profile_error_image);
	RUN(deep_stack);
	HARNESS_EXIT();
}
