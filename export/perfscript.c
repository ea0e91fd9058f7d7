/* perf script parser with stackcollapse-perf.pl's grammar, and a hash aggregator of stacks.
 *
 * The script's regexes are matched by hand: each one is reduced to the few byte scans that give
 * the same captures under perl's leftmost, greedy/lazy backtracking, noted where it matters. */
#include "perfscript.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "../model/strtab.h"
#include "../model/stackset.h"
#include "util/grow.h"
#include "util/word.h"

/* Character classes of perl's \s, \d, \w on byte strings, plus the bytes frame tidying edits. */
enum {
	C_WS = 1,    /* \s: space \t \n \v \f \r */
	C_DIGIT = 2, /* \d */
	C_WORD = 4,  /* \w */
	C_TIDY = 8,  /* ; ( " ' */
};

static unsigned char cls[256];

static void cls_init(void)
{
	int c;

	if (cls['0'])
		return;
	for (c = '0'; c <= '9'; c++)
		cls[c] = C_DIGIT | C_WORD;
	for (c = 'a'; c <= 'z'; c++)
		cls[c] = C_WORD;
	for (c = 'A'; c <= 'Z'; c++)
		cls[c] = C_WORD;
	cls['_'] = C_WORD;
	cls[' '] = cls['\t'] = cls['\n'] = cls['\v'] = cls['\f'] = cls['\r'] = C_WS;
	cls[';'] = cls['('] = cls['"'] = cls['\''] = C_TIDY;
}

static inline bool is_ws(char c)
{
	return cls[(unsigned char)c] & C_WS;
}

static inline bool is_digit(char c)
{
	return cls[(unsigned char)c] & C_DIGIT;
}

/* A growable byte buffer. */
struct buf {
	char *p;
	size_t len, cap;
};

static inline int buf_reserve(struct buf *b, size_t extra)
{
	return extra > SIZE_MAX - b->len ? -ENOMEM : ARRAY_GROW(b->p, b->cap, b->len + extra);
}

static int buf_put(struct buf *b, const char *s, size_t n)
{
	if (buf_reserve(b, n))
		return -ENOMEM;
	if (n)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	return 0;
}

struct perfscript {
	struct perfscript_opts o;
	perfscript_stack_fn fn;
	void *ctx;
	struct perfscript_stats stats;

	struct buf filter; /* event filter; empty until set (by option or first event) */
	bool filter_defaulted, filter_warned;

	/* The sample being read: perl's $pname, $m_period and @stack. */
	bool have_pname;
	bool java;	   /* $pname =~ /^java/ */
	struct buf pname;
	uint64_t period;
	/* @stack, built right to left: frames are read leaf first, printed root first. The joined
	 * stack is stack[start..cap), with room on the left for the next frames and the pname. */
	char *stack;
	size_t start, cap;
	bool stack_nonempty, stack_cut;

	struct buf frame; /* the frames of one line, joined by ';' */
	struct buf carry; /* a line split across perfscript__feed calls */

	/* Warnings of the file being read wait here until its end shows it is perf script. */
	FILE *held;
	unsigned long file_valid, file_unrecognized; /* stats at the start of the file */
	unsigned long last_valid, last_unrecognized; /* counts of the last file ended */
};

/* Where warnings go now: the held file (made on first use), or o.warn if it cannot be. */
static FILE *warn_file(struct perfscript *ps)
{
	if (!ps->o.warn)
		return NULL;
	if (!ps->held)
		ps->held = tmpfile();
	return ps->held ? ps->held : ps->o.warn;
}

struct perfscript *perfscript__new(const struct perfscript_opts *o, perfscript_stack_fn fn,
				   void *ctx)
{
	struct perfscript *ps;

	cls_init();
	ps = calloc(1, sizeof(*ps));
	if (!ps)
		return NULL;
	ps->o = *o;
	ps->o.event_filter = NULL;
	ps->fn = fn;
	ps->ctx = ctx;
	if (o->event_filter && buf_put(&ps->filter, o->event_filter, strlen(o->event_filter))) {
		free(ps);
		return NULL;
	}
	return ps;
}

void perfscript__free(struct perfscript *ps)
{
	if (!ps)
		return;
	free(ps->filter.p);
	free(ps->pname.p);
	free(ps->stack);
	free(ps->frame.p);
	free(ps->carry.p);
	if (ps->held)
		fclose(ps->held);
	free(ps);
}

const struct perfscript_stats *perfscript__stats(const struct perfscript *ps)
{
	return &ps->stats;
}

static void stack_clear(struct perfscript *ps)
{
	ps->start = ps->cap;
	ps->stack_nonempty = false;
	ps->stack_cut = false;
}

/* Prepends s[0..n) and, when the stack is not empty, a ';' (perl's unshift before join).
 * Frames past PERFSCRIPT_MAX_STACK are dropped; the pname (force) always goes in. */
static inline int stack_prepend(struct perfscript *ps, const char *s, size_t n, bool force)
{
	size_t used = ps->cap - ps->start, need = n + 1, cap;
	char *p;

	if (!force && used + need > PERFSCRIPT_MAX_STACK) {
		ps->stack_cut = true;
		return 0;
	}
	if (ps->start < need) {
		cap = ps->cap ? ps->cap * 2 : 4096;
		while (cap - used < need)
			cap *= 2;
		p = malloc(cap);
		if (!p)
			return -ENOMEM;
		if (used)
			memcpy(p + cap - used, ps->stack + ps->start, used);
		free(ps->stack);
		ps->stack = p;
		ps->start = cap - used;
		ps->cap = cap;
	}
	if (ps->stack_nonempty)
		ps->stack[--ps->start] = ';';
	ps->start -= n;
	if (n)
		memcpy(ps->stack + ps->start, s, n);
	ps->stack_nonempty = true;
	return 0;
}

static void warn_line(struct perfscript *ps, const char *what, const char *line, size_t len)
{
	size_t i, n = len > 160 ? 160 : len;
	FILE *w = warn_file(ps);

	if (!w)
		return;
	fprintf(w, "%s", what);
	/* Untrusted bytes: no control characters on the terminal. */
	for (i = 0; i < n; i++) {
		unsigned char c = line[i];

		fputc(c < 0x20 || c == 0x7f ? '?' : c, w);
	}
	fprintf(w, "%s (line %lu)\n", n < len ? "..." : "", ps->stats.lines);
}

/* A blank line ends the sample: "pname;frames..." with its period. */
static int sample_end(struct perfscript *ps)
{
	int err;

	if (!ps->have_pname)
		return 0; /* the script skips a filtered sample and keeps its @stack */
	err = stack_prepend(ps, ps->pname.p, ps->pname.len, true);
	if (err)
		return err;
	if (ps->stack_cut)
		ps->stats.truncated++;
	ps->stats.samples++;
	err = ps->fn(ps->ctx, ps->stack + ps->start, ps->cap - ps->start,
		     ps->o.count_samples ? 1 : ps->period);
	stack_clear(ps);
	ps->have_pname = false;
	return err;
}

/* Digits to a number, saturating (perl would switch to a float). */
static uint64_t parse_u64(const char *s, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned d = s[i] - '0';

		if (v > (UINT64_MAX - d) / 10)
			return UINT64_MAX;
		v = v * 10 + d;
	}
	return v;
}

/* The header regex /^(\S.+?)\s+(\d+)\/{0,}(\d+)*\s+/ (the script writes {0,} as a star)
 * on a line whose first byte is not \s. The lazy $1 ends at the first \s at index >= 2 after
 * which the rest matches; the rest only depends on the run of \s that index sits in, so one try
 * per run. Sets the comm end and the captures; false if none. */
static bool match_header(const char *l, size_t n, size_t *comm_end, const char **pid,
			 size_t *pid_len, const char **tid, size_t *tid_len)
{
	size_t k = 2, q, d0, s1, t1;

	while (k < n) {
		if (!is_ws(l[k])) {
			k++;
			continue;
		}
		for (q = k; q < n && is_ws(l[q]); q++)
			;
		if (q == n)
			return false;
		d0 = q;
		while (q < n && is_digit(l[q]))
			q++;
		if (q > d0 && q < n) {
			if (is_ws(l[q])) {
				*tid = NULL;
				*tid_len = 0;
				goto found;
			}
			if (l[q] == '/') {
				for (s1 = q; s1 < n && l[s1] == '/'; s1++)
					;
				for (t1 = s1; t1 < n && is_digit(l[t1]); t1++)
					;
				if (t1 < n && is_ws(l[t1])) {
					*tid = t1 > s1 ? l + s1 : NULL;
					*tid_len = t1 - s1;
					goto found;
				}
			}
		}
		/* No match from this run: the next try is the next run of \s. */
		while (k < n && is_ws(l[k]))
			k++;
		continue;
found:
		*comm_end = k;
		*pid = l + d0;
		*pid_len = q - d0;
		return true;
	}
	return false;
}

/* /:\s*(\d+)*\s+(\S+):\s*$/: the event is the last \S run, which must end in ':' and follow
 * "\s+", optional digits (the period), "\s*" and a ':'. Only one ':' can start such a match. */
static bool match_event(const char *l, size_t n, const char **period, size_t *period_len,
			const char **event, size_t *event_len)
{
	size_t end = n, w, b, d;

	while (end > 0 && is_ws(l[end - 1]))
		end--;
	for (w = end; w > 0 && !is_ws(l[w - 1]); w--)
		;
	if (end - w < 2 || l[end - 1] != ':' || w == 0)
		return false;
	for (b = w; b > 0 && is_ws(l[b - 1]); b--)
		;
	for (d = b; d > 0 && is_digit(l[d - 1]); d--)
		;
	*period = l + d;
	*period_len = b - d;
	while (d > 0 && is_ws(l[d - 1]))
		d--;
	if (d == 0 || l[d - 1] != ':') {
		*period_len = 0;
		return false;
	}
	*event = l + w;
	*event_len = end - 1 - w;
	return true;
}

static int header_line(struct perfscript *ps, const char *l, size_t n, size_t comm_end,
		       const char *pid, size_t pid_len, const char *tid, size_t tid_len)
{
	const char *period = NULL, *event = NULL;
	size_t period_len = 0, event_len = 0, i;
	struct buf *pn = &ps->pname;

	/* `not $tid`: absent or "0" means the number was the TID and the PID is unknown. */
	if (!tid || (tid_len == 1 && tid[0] == '0')) {
		tid = pid;
		tid_len = pid_len;
		pid = "?";
		pid_len = 1;
	}
	if (match_event(l, n, &period, &period_len, &event, &event_len)) {
		if (!ps->filter.len) {
			if (buf_put(&ps->filter, event, event_len))
				return -ENOMEM;
			ps->filter_defaulted = true;
		} else if (event_len != ps->filter.len || memcmp(event, ps->filter.p, event_len)) {
			FILE *w = warn_file(ps);

			if (ps->filter_defaulted && !ps->filter_warned && w) {
				/* The script names the event it skips, not the one it keeps. */
				fputs("Filtering for events of type: ", w);
				fwrite(event, 1, event_len, w);
				fputc('\n', w);
			}
			ps->filter_warned = true;
			ps->stats.filtered++;
			return 0;
		}
	}
	/* `not $period`: absent or "0" counts 1. */
	if (!period_len || (period_len == 1 && period[0] == '0'))
		ps->period = 1;
	else
		ps->period = parse_u64(period, period_len);

	pn->len = 0;
	if (buf_reserve(pn, comm_end + pid_len + tid_len + 2))
		return -ENOMEM;
	for (i = 0; i < comm_end; i++)
		pn->p[i] = l[i] == ' ' ? '_' : l[i];
	pn->len = comm_end;
	if (ps->o.include_tid || ps->o.include_pid) {
		pn->p[pn->len++] = '-';
		memcpy(pn->p + pn->len, pid, pid_len);
		pn->len += pid_len;
		if (ps->o.include_tid) {
			pn->p[pn->len++] = '/';
			memcpy(pn->p + pn->len, tid, tid_len);
			pn->len += tid_len;
		}
	}
	ps->have_pname = true;
	ps->java = comm_end >= 4 && !memcmp(l, "java", 4);
	return 0;
}

/* The index of the first byte from p on in l[0..n) that is not \s: a frame line's indent is a
 * tab and up to 16 spaces, skipped 8 at a time. */
static size_t skip_spaces(const char *l, size_t p, size_t n)
{
	if (p < n && l[p] == '\t')
		p++;
	for (; n - p >= 8; p += 8) {
		uint64_t x = load_le(l + p) ^ 0x2020202020202020ULL;

		if (x) { /* its lowest set bit is in the first byte that is no space */
			p += (size_t)__builtin_ctzll(x) / 8;
			break;
		}
	}
	while (p < n && is_ws(l[p]))
		p++;
	return p;
}

/* The bytes of w that are lowercase hex digits, as their top bits: exact for each byte (no
 * carry crosses bytes), whatever the others hold. */
static inline uint64_t hex_bytes(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ULL, top = ones << 7, low = ~top;
	uint64_t v = w & low, digit, alpha;

	digit = (v + ones * (0x80 - '0')) & ~(v + ones * (0x7f - '9'));
	alpha = (v + ones * (0x80 - 'a')) & ~(v + ones * (0x7f - 'f'));
	return (digit | alpha) & ~w & top;
}

/* Skips the lowercase hex digits from p on in l[0..n) (the address that starts a frame line,
 * all \w), a word at a time; the caller goes on byte by byte. */
static size_t skip_hex(const char *l, size_t p, size_t n)
{
	const uint64_t top = 0x8080808080808080ULL;

	for (; n - p >= 8; p += 8) {
		uint64_t other = ~hex_bytes(load_le(l + p)) & top;

		if (other)
			return p + (size_t)__builtin_ctzll(other) / 8;
	}
	return p;
}

/* /^\s*(\w+)\s*(.+) \((.*)\)/. The greedy (.+) ends at the last " (" that still has a ')' at
 * least two bytes after it, and the greedy (.*) at the last ')'. (\w+) and \s* give back bytes
 * only when (.+) would otherwise be empty. */
static bool match_frame(const char *l, size_t n, const char **pc, size_t *pc_len,
			const char **func, size_t *func_len, const char **mod, size_t *mod_len)
{
	size_t p = 0, w0, wl, ws, lp, e, fs;
	const char *rp;

	p = skip_spaces(l, 0, n);
	w0 = p;
	p = skip_hex(l, p, n);
	while (p < n && (cls[(unsigned char)l[p]] & C_WORD))
		p++;
	wl = p - w0;
	if (!wl)
		return false;
	while (p < n && is_ws(l[p]))
		p++;
	ws = p - w0 - wl;
	rp = l[n - 1] == ')' ? l + n - 1 : memrchr(l, ')', n); /* the usual end, else a search */
	if (!rp)
		return false;
	lp = rp - l;
	if (lp < 2)
		return false;
	/* the last " (" at or before lp - 2: the last '(' at or before lp - 1 after a space */
	for (size_t lim = lp;;) {
		const char *op = memrchr(l + 1, '(', lim - 1);

		if (!op)
			return false;
		e = (size_t)(op - l) - 1;
		if (l[e] == ' ')
			break;
		lim = e + 1;
		if (lim < 2)
			return false;
	}
	if (e < w0 + 2)
		return false;
	if (w0 + wl + 1 <= e) {
		size_t room = e - 1 - (w0 + wl);

		fs = w0 + wl + (ws < room ? ws : room);
	} else {
		wl = e - 1 - w0;
		fs = w0 + wl;
	}
	*pc = l + w0;
	*pc_len = wl;
	*func = l + fs;
	*func_len = e - fs;
	*mod = l + e + 2;
	*mod_len = lp - e - 2;
	return true;
}

/* $func !~ /\.\(.*\)\./: a Go method such as "net/http.(*Client).Do" keeps its parentheses. */
static bool is_go_method(const char *s, size_t n)
{
	size_t i, j;

	for (i = 0; i + 1 < n; i++)
		if (s[i] == '.' && s[i + 1] == '(')
			break;
	if (i + 1 >= n)
		return false;
	for (j = n - 1; j >= i + 3; j--)
		if (s[j - 1] == ')' && s[j] == '.')
			return true;
	return false;
}

/* The index of the first byte from i on in s[0..n) that frame tidying edits (C_TIDY), or n:
 * a word at a time, as most names have none. */
static size_t next_tidy(const char *s, size_t i, size_t n)
{
	const uint64_t ones = 0x0101010101010101ULL, top = ones << 7;

	for (; n - i >= 8; i += 8) {
		uint64_t w, a, b, c, d, hit;

		w = load_le(s + i);
		a = w ^ ones * ';';
		b = w ^ ones * '(';
		c = w ^ ones * '"';
		d = w ^ ones * '\'';
		/* a zero byte in any: the lowest flag is exact */
		hit = (((a - ones) & ~a) | ((b - ones) & ~b) | ((c - ones) & ~c) | ((d - ones) & ~d)) &
		      top;
		if (hit)
			return i + (size_t)__builtin_ctzll(hit) / 8;
	}
	while (i < n && !(cls[(unsigned char)s[i]] & C_TIDY))
		i++;
	return i;
}

/* The script's $tidy_generic, in place: ';' -> ':', cut at the first '(' that does not open
 * "(anonymous namespace)" unless it is a Go method, drop quotes. Returns the new length. */
static size_t frame_tidy(char *s, size_t n)
{
	static const char anon[] = "anonymous namespace)";
	size_t i, j, paren = SIZE_MAX;
	bool quotes = false;

	for (i = 0; (i = next_tidy(s, i, n)) < n; i++) {
		if (s[i] == ';')
			s[i] = ':';
		else if (s[i] == '(')
			paren = paren == SIZE_MAX ? i : paren;
		else
			quotes = true;
	}
	if (paren != SIZE_MAX && !is_go_method(s, n)) {
		for (i = paren; i < n; i++) {
			if (s[i] != '(')
				continue;
			if (n - i - 1 >= sizeof(anon) - 1 && !memcmp(s + i + 1, anon, sizeof(anon) - 1))
				continue;
			n = i;
			break;
		}
	}
	if (quotes) {
		for (i = j = 0; i < n; i++)
			if (s[i] != '"' && s[i] != '\'')
				s[j++] = s[i];
		n = j;
	}
	return n;
}

static bool contains(const char *s, size_t n, const char *needle)
{
	return memmem(s, n, needle, strlen(needle)) != NULL;
}

/* The first "->" in s[0..end), or NULL: memchr finds the rare '-' faster than memmem the pair. */
static const char *find_arrow(const char *s, const char *end)
{
	for (const char *p = s; p < end && (p = memchr(p, '-', (size_t)(end - p))); p++)
		if (end - p >= 2 && p[1] == '>')
			return p;
	return NULL;
}

/* $mod =~ m:/tmp/perf-\d+\.map: */
static bool is_jit_mod(const char *m, size_t n)
{
	const char *p = m, *end = m + n;

	while ((p = memmem(p, end - p, "/tmp/perf-", 10))) {
		const char *d = p + 10;

		while (d < end && is_digit(*d))
			d++;
		if (d > p + 10 && end - d >= 4 && !memcmp(d, ".map", 4))
			return true;
		p++;
	}
	return false;
}

/* One frame of a line (a piece of the "->" split): appended to ps->frame. */
static int frame_piece(struct perfscript *ps, const char *s, size_t n, bool inlined, bool kernel,
		       bool jit, const char *pc, size_t pc_len, const char *mod, size_t mod_len)
{
	struct buf *f = &ps->frame;
	size_t at = f->len, len;
	char *out;

	/* Room for "[" mod " <" pc ">]" and a 4-byte annotation. */
	if (buf_reserve(f, n + mod_len + pc_len + 16))
		return -ENOMEM;
	out = f->p + at;
	if (n == 9 && !memcmp(s, "[unknown]", 9)) {
		const char *base = "unknown";
		size_t bl = 7;

		if (!(mod_len == 9 && !memcmp(mod, "[unknown]", 9))) {
			const char *slash = memrchr(mod, '/', mod_len);

			base = slash ? slash + 1 : mod;
			bl = mod + mod_len - base;
		}
		len = 0;
		out[len++] = '[';
		memcpy(out + len, base, bl);
		len += bl;
		if (ps->o.include_addrs) {
			out[len++] = ' ';
			out[len++] = '<';
			memcpy(out + len, pc, pc_len);
			len += pc_len;
			out[len++] = '>';
		}
		out[len++] = ']';
	} else {
		memcpy(out, s, n);
		len = n;
	}
	len = frame_tidy(out, len);
	if (ps->java && len && out[0] == 'L' && memchr(out, '/', len)) {
		memmove(out, out + 1, len - 1);
		len--;
	}
	if (inlined) {
		if (!contains(out, len, "_[i]"))
			memcpy(out + len, "_[i]", 4), len += 4;
	} else if (kernel) {
		memcpy(out + len, "_[k]", 4), len += 4;
	} else if (jit) {
		if (!contains(out, len, "_[j]"))
			memcpy(out + len, "_[j]", 4), len += 4;
	}
	f->len = at + len;
	return 0;
}

/* The frame that a frame line (its pc, function and module) adds to the stack: *frame[0..*len),
 * in ps->frame or, for a name that needs no edit, in the line itself; *frame NULL when it adds
 * none. 0 or -ENOMEM. Inlined into both callers: the text parser's per-line path keeps its
 * speed. */
static inline __attribute__((always_inline)) int
frame_build(struct perfscript *ps, const char *pc, size_t pc_len, const char *func, size_t n,
	    const char *mod, size_t mod_len, const char **frame, size_t *len)
{
	bool kernel = false, jit = false, first = true;
	const char *end, *arrow;
	size_t h;
	int err;

	*frame = NULL;
	*len = 0;
	/* s/\+0x[\da-f]+$//: the hex digits that end func, the last 8 bytes at a time */
	for (h = n; h >= 8;) {
		uint64_t other = ~hex_bytes(load_le(func + h - 8)) & 0x8080808080808080ULL;

		if (other) {
			h -= (size_t)__builtin_clzll(other) / 8;
			break;
		}
		h -= 8;
	}
	for (; h > 0 && h < 8 && (is_digit(func[h - 1]) || (func[h - 1] >= 'a' && func[h - 1] <= 'f'));
	     h--)
		;
	if (h < n && h >= 3 && !memcmp(func + h - 3, "+0x", 3))
		n = h - 3;
	if (n && func[0] == '(')
		return 0; /* a process name, not a frame */
	/* split /->/ drops trailing empty fields. */
	while (n >= 2 && func[n - 2] == '-' && func[n - 1] == '>')
		n -= 2;
	if (!n)
		return 0;

	if (ps->o.annotate_kernel && mod_len &&
	    (mod[0] == '[' || (mod_len >= 7 && !memcmp(mod + mod_len - 7, "vmlinux", 7))) &&
	    !contains(mod, mod_len, "unknown"))
		kernel = true;
	else if (ps->o.annotate_jit)
		jit = is_jit_mod(mod, mod_len);

	end = func + n;
	if (!kernel && !jit && !ps->java && !find_arrow(func, end) &&
	    !(n == 9 && !memcmp(func, "[unknown]", 9)) && next_tidy(func, 0, n) == n) {
		*frame = func; /* most frames: the name as it is, not copied */
		*len = n;
		return 0;
	}
	ps->frame.len = 0;
	for (;;) {
		arrow = find_arrow(func, end);
		if (!first && buf_put(&ps->frame, ";", 1))
			return -ENOMEM;
		err = frame_piece(ps, func, (arrow ? arrow : end) - func, !first, kernel, jit, pc,
				  pc_len, mod, mod_len);
		if (err)
			return err;
		first = false;
		if (!arrow)
			break;
		func = arrow + 2;
	}
	*frame = ps->frame.p;
	*len = ps->frame.len;
	return 0;
}

static int frame_line(struct perfscript *ps, const char *pc, size_t pc_len, const char *func,
		      size_t n, const char *mod, size_t mod_len)
{
	const char *frame;
	size_t len;
	int err = frame_build(ps, pc, pc_len, func, n, mod, mod_len, &frame, &len);

	return err || !frame ? err : stack_prepend(ps, frame, len, false);
}

int perfscript__frame_parse(struct perfscript *ps, const char *l, size_t n, const char **frame,
			    size_t *len)
{
	const char *pc, *func, *mod;
	size_t pc_len, func_len, mod_len;
	int err;

	/* a line that starts with a blank is never a header (line() tries those first) */
	if (!n || !is_ws(l[0]) || !match_frame(l, n, &pc, &pc_len, &func, &func_len, &mod, &mod_len))
		return 0;
	err = frame_build(ps, pc, pc_len, func, func_len, mod, mod_len, frame, len);
	return err ? err : 1;
}

int perfscript__frame_push(struct perfscript *ps, const char *frame, size_t len)
{
	ps->stats.lines++;
	ps->stats.valid++;
	if (!ps->have_pname || !frame)
		return 0;
	return stack_prepend(ps, frame, len, false);
}

bool perfscript__frame_mode(const struct perfscript *ps)
{
	return ps->java;
}

/* One line without its '\n' (perl's chomp). */
static int line(struct perfscript *ps, const char *l, size_t n)
{
	const char *pid, *tid, *pc, *func, *mod;
	size_t comm_end, pid_len, tid_len, pc_len, func_len, mod_len;

	ps->stats.lines++;
	if (!n)
		return sample_end(ps);
	if (l[0] == '#')
		return 0;
	if (!is_ws(l[0]) &&
	    match_header(l, n, &comm_end, &pid, &pid_len, &tid, &tid_len)) {
		ps->stats.valid++;
		return header_line(ps, l, n, comm_end, pid, pid_len, tid, tid_len);
	}
	if (match_frame(l, n, &pc, &pc_len, &func, &func_len, &mod, &mod_len)) {
		ps->stats.valid++;
		if (!ps->have_pname)
			return 0;
		return frame_line(ps, pc, pc_len, func, func_len, mod, mod_len);
	}
	ps->stats.unrecognized++;
	warn_line(ps, "Unrecognized line: ", l, n);
	return 0;
}

int perfscript__feed(struct perfscript *ps, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len, *nl;
	int err;

	if (ps->carry.len) {
		size_t n;

		nl = memchr(p, '\n', len);
		if (buf_put(&ps->carry, p, (nl ? nl : end) - p))
			return -ENOMEM;
		if (!nl)
			return 0;
		n = ps->carry.len;
		ps->carry.len = 0;
		err = line(ps, ps->carry.p, n);
		if (err)
			return err;
		p = nl + 1;
	}
	while (p < end && (nl = memchr(p, '\n', end - p))) {
		err = line(ps, p, nl - p);
		if (err)
			return err;
		p = nl + 1;
	}
	if (p < end && buf_put(&ps->carry, p, end - p))
		return -ENOMEM;
	return 0;
}

/* Ends the file's held warnings: passed on to o.warn, or dropped when the file was mostly
 * unrecognized lines (then -EBADMSG). */
static int file_verdict(struct perfscript *ps)
{
	unsigned long valid = ps->stats.valid - ps->file_valid;
	unsigned long bad = ps->stats.unrecognized - ps->file_unrecognized;
	char block[65536];
	size_t n;
	int ret = bad > valid ? -EBADMSG : 0;

	ps->file_valid = ps->stats.valid;
	ps->file_unrecognized = ps->stats.unrecognized;
	ps->last_valid = valid;
	ps->last_unrecognized = bad;
	if (!ps->held)
		return ret;
	if (!ret) {
		rewind(ps->held);
		while ((n = fread(block, 1, sizeof(block), ps->held)) > 0)
			fwrite(block, 1, n, ps->o.warn);
	}
	fclose(ps->held);
	ps->held = NULL;
	return ret;
}

void perfscript__strerror(const struct perfscript *ps, const char *label, char *buf,
			  size_t len)
{
	snprintf(buf, len, "%s: not perf script output: %lu of %lu lines unrecognized", label,
		 ps->last_unrecognized, ps->last_unrecognized + ps->last_valid);
}

int perfscript__end_file(struct perfscript *ps)
{
	size_t n = ps->carry.len;
	int err = 0;

	if (n) {
		ps->carry.len = 0;
		err = line(ps, ps->carry.p, n);
	}
	return err ? err : file_verdict(ps);
}

/* Feeds the rest of a regular file, from its current offset, mapped whole: no copy through
 * stdio's and our buffers. 1 when fed (then *err is feed's verdict), 0 when f is no such file
 * or cannot be mapped (nothing was read: the caller reads it). */
static int feed_mapped(struct perfscript *ps, FILE *f, int *err)
{
	struct stat st;
	off_t at = ftello(f);
	char *map;
	size_t len;

	if (at < 0 || fstat(fileno(f), &st) || !S_ISREG(st.st_mode) || st.st_size <= at ||
	    (uint64_t)st.st_size > SIZE_MAX / 2)
		return 0;
	len = (size_t)st.st_size;
	map = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fileno(f), 0);
	if (map == MAP_FAILED)
		return 0;
	madvise(map, len, MADV_SEQUENTIAL);
	*err = perfscript__feed(ps, map + at, len - (size_t)at);
	munmap(map, len);
	if (!*err && fseeko(f, 0, SEEK_END))
		*err = -EIO;
	return 1;
}

int perfscript__parse_file(struct perfscript *ps, FILE *f)
{
	size_t size = 1 << 20, n;
	char *b;
	int err = 0;

	if (feed_mapped(ps, f, &err))
		return err ? err : perfscript__end_file(ps);
	b = malloc(size);
	if (!b)
		return -ENOMEM;
	while ((n = fread(b, 1, size, f)) > 0) {
		err = perfscript__feed(ps, b, n);
		if (err)
			break;
	}
	free(b);
	if (!err && ferror(f))
		err = -EIO;
	if (!err)
		err = perfscript__end_file(ps);
	return err;
}

/* The aggregator: one column of model/stackset, whose sums are exact in 64 bits as perl's
 * integers are, and take perl's float once a sum no longer fits. */
struct stack_agg {
	struct stack_set *set; /* one column */
};

struct stack_agg *stack_agg__new(void)
{
	struct stack_agg *sa = calloc(1, sizeof(*sa));

	if (!sa)
		return NULL;
	sa->set = stack_set__new();
	if (!sa->set) {
		free(sa);
		return NULL;
	}
	return sa;
}

void stack_agg__free(struct stack_agg *sa)
{
	if (!sa)
		return;
	stack_set__free(sa->set);
	free(sa);
}

size_t stack_agg__count(const struct stack_agg *sa)
{
	return stack_set__count(sa->set);
}

int stack_agg__add(struct stack_agg *sa, const char *stack, size_t len, uint64_t count)
{
	return stack_set__add_count(sa->set, 0, stack, len, count);
}

int stack_agg__add_cb(void *ctx, const char *stack, size_t len, uint64_t count)
{
	return stack_agg__add(ctx, stack, len, count);
}

/* " COUNT\n" into buf (at least 23 bytes), as printf's " %llu\n": thousands of lines. Its
 * length. */
static int u64_line(char *buf, uint64_t v)
{
	char tmp[20];
	int n = 0, len = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	buf[len++] = ' ';
	while (n)
		buf[len++] = tmp[--n];
	buf[len++] = '\n';
	return len;
}

int stack_agg__write(struct stack_agg *sa, FILE *out)
{
	size_t n = stack_set__count(sa->set);
	uint32_t *ids = stack_set__sorted(sa->set);
	char num[48];

	if (!ids)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint64_t count;
		size_t slen;
		const char *stack = stack_set__stack(sa->set, ids[i], &slen);
		int len;

		if (stack_set__exact(sa->set, 0, ids[i], &count))
			len = u64_line(num, count);
		else
			len = snprintf(num, sizeof(num), " %.15g\n", stack_set__value(sa->set, 0, ids[i]));
		fwrite(stack, 1, slen, out);
		fwrite(num, 1, (size_t)len, out);
	}
	free(ids);
	return ferror(out) ? -EIO : 0;
}
