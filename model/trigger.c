/* Trigger conditions: see trigger.h. */
#include "trigger.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *skip_space(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* Says in err what is wrong at `at` (the condition's text, at most 24 bytes quoted). */
__attribute__((format(printf, 4, 5))) static int fail(char *err, size_t errlen, const char *at,
						      const char *fmt, ...)
{
	char why[128];
	size_t n = strcspn(at, "&|");
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (!n)
		n = strlen(at);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)at[i] < 0x20 || at[i] == 0x7f)
			n = i; /* the quote stays one printable line */
	while (n && (at[n - 1] == ' ' || at[n - 1] == '\t'))
		n--;
	if (*at)
		snprintf(err, errlen, "at '%.*s': %s", (int)(n > 24 ? 24 : n), at, why);
	else
		snprintf(err, errlen, "at the end: %s", why);
	return -EINVAL;
}

/* One condition at *s, advancing *s past it. 0 or -EINVAL with err. */
static int parse_cond(const char **s, struct trigger_cond *c, char *err, size_t errlen)
{
	const char *p = skip_space(*s), *start = p;
	char word[16];
	size_t n = 0;
	char *end;

	while ((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= 'A' && p[n] <= 'Z'))
		n++;
	snprintf(word, sizeof(word), "%.*s", (int)(n < sizeof(word) ? n : sizeof(word) - 1), p);
	if (!strcmp(word, "cpu") && p[n] >= '0' && p[n] <= '9') {
		long cpu = strtol(p + n, &end, 10);

		if (cpu > TRIGGER_MAX_CPU)
			return fail(err, errlen, start, "CPU number past %d", TRIGGER_MAX_CPU);
		c->metric = TRIGGER_CPU_N;
		c->cpu = (int)cpu;
		p = end;
	} else if (!strcmp(word, "cpu")) {
		c->metric = TRIGGER_CPU;
		p += n;
	} else if (!strcmp(word, "load")) {
		c->metric = TRIGGER_LOAD;
		p += n;
	} else if (!n) {
		return fail(err, errlen, start, "a metric is missing (cpu, cpuN, load)");
	} else {
		return fail(err, errlen, start, "unknown metric '%s' (cpu, cpuN, load)", word);
	}
	p = skip_space(p);
	if (p[0] == '>' || p[0] == '<') {
		bool eq = p[1] == '=';

		c->op = p[0] == '>' ? (eq ? TRIGGER_GE : TRIGGER_GT) : (eq ? TRIGGER_LE : TRIGGER_LT);
		p += 1 + eq;
	} else {
		return fail(err, errlen, start, "a comparison is missing (>, >=, <, <=)");
	}
	p = skip_space(p);
	if (!((*p >= '0' && *p <= '9') || *p == '.'))
		return fail(err, errlen, start, "a number is missing after the comparison");
	c->value = strtod(p, &end);
	if (!isfinite(c->value) || end == p)
		return fail(err, errlen, start, "bad number");
	*s = end;
	return 0;
}

int trigger_parse(const char *text, struct trigger_expr *e, char *err, size_t errlen)
{
	const char *s = text;

	memset(e, 0, sizeof(*e));
	if (!*skip_space(s))
		return fail(err, errlen, "", "an empty condition (e.g. cpu>80)");
	for (;;) {
		if (e->n == TRIGGER_MAX_CONDS)
			return fail(err, errlen, s, "more than %d conditions", TRIGGER_MAX_CONDS);
		if (parse_cond(&s, &e->c[e->n], err, errlen))
			return -EINVAL;
		s = skip_space(s);
		e->n++;
		if (!*s)
			return 0;
		if (!strncmp(s, "||", 2) || !strncmp(s, "&&", 2)) {
			e->c[e->n - 1].or_next = s[0] == '|';
			s += 2;
			continue;
		}
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return fail(err, errlen, s, "expected && or || or the end, not byte 0x%02x",
				    (unsigned char)*s);
		return fail(err, errlen, s, "expected && or || or the end, not '%.1s'", s);
	}
}

static double metric_value(const struct trigger_cond *c, const struct trigger_metrics *m)
{
	switch (c->metric) {
	case TRIGGER_CPU:
		return m->cpu;
	case TRIGGER_CPU_N:
		return m->cpus && (size_t)c->cpu < m->ncpus ? m->cpus[c->cpu] : NAN;
	default:
		return m->load;
	}
}

static bool cond_holds(const struct trigger_cond *c, double v)
{
	if (isnan(v))
		return false;
	switch (c->op) {
	case TRIGGER_GT:
		return v > c->value;
	case TRIGGER_GE:
		return v >= c->value;
	case TRIGGER_LT:
		return v < c->value;
	default:
		return v <= c->value;
	}
}

static void describe(const struct trigger_cond *c, double v, char *why, size_t whylen)
{
	static const char *const ops[] = { ">", ">=", "<", "<=" };
	char name[16];

	if (c->metric == TRIGGER_CPU_N)
		snprintf(name, sizeof(name), "cpu%d", c->cpu);
	else
		snprintf(name, sizeof(name), "%s", c->metric == TRIGGER_CPU ? "cpu" : "load");
	snprintf(why, whylen, "%s=%.1f %s %g", name, v, ops[c->op], c->value);
}

/* && binds tighter than ||: the expression holds when every condition of some run of
 * &&-joined conditions holds. */
bool trigger_eval(const struct trigger_expr *e, const struct trigger_metrics *m, char *why,
		  size_t whylen)
{
	size_t i = 0;

	while (i < e->n) {
		size_t first = i;
		bool all = true;

		for (;; i++) {
			all = all && cond_holds(&e->c[i], metric_value(&e->c[i], m));
			if (e->c[i].or_next || i + 1 == e->n)
				break;
		}
		i++;
		if (all) {
			if (why && whylen)
				describe(&e->c[first], metric_value(&e->c[first], m), why, whylen);
			return true;
		}
	}
	return false;
}

bool trigger_uses(const struct trigger_expr *e, enum trigger_metric metric)
{
	for (size_t i = 0; i < e->n; i++)
		if (e->c[i].metric == metric)
			return true;
	return false;
}

void trigger_state_init(struct trigger_state *s, double before, double after, double cooldown)
{
	memset(s, 0, sizeof(*s));
	s->before = before;
	s->after = after;
	s->cooldown = cooldown;
	s->fired_at = NAN;
	s->quiet_until = -INFINITY;
}

bool trigger_state_step(struct trigger_state *s, double t, bool holds)
{
	if (!holds || !isnan(s->fired_at) || t < s->quiet_until)
		return false;
	s->fired_at = t;
	s->fired++;
	return true;
}

bool trigger_state_due(struct trigger_state *s, double t, double *moment)
{
	if (isnan(s->fired_at) || t < s->fired_at + s->after)
		return false;
	if (moment)
		*moment = s->fired_at;
	s->quiet_until = t + s->cooldown;
	s->fired_at = NAN;
	return true;
}
