#include "keys.h"
#include "util/grow.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const struct tui_key *tui_key_find(const struct tui_key *table, size_t n, int key)
{
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 4 && table[i].keys[k]; k++)
			if (table[i].keys[k] == key)
				return &table[i];
	return NULL;
}

static const struct {
	int key;
	const char *name;
} named[] = {
	{ '\n', "Enter" },	  { KEY_ENTER, "Enter" },   { TUI_KEY_ESC, "Esc" },
	{ '\t', "Tab" },	  { KEY_BACKSPACE, "BS" },  { 127, "BS" },
	{ ' ', "Space" },	  { KEY_UP, "Up" },	    { KEY_DOWN, "Down" },
	{ KEY_LEFT, "Left" },	  { KEY_RIGHT, "Right" },   { KEY_PPAGE, "PgUp" },
	{ KEY_NPAGE, "PgDn" },	  { KEY_HOME, "Home" },	    { KEY_END, "End" },
	{ KEY_BTAB, "S-Tab" },	  { KEY_RESIZE, "Resize" }, { KEY_MOUSE, "Mouse" },
};

void tui_key_name(int key, char *buf, size_t n)
{
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (named[i].key == key) {
			snprintf(buf, n, "%s", named[i].name);
			return;
		}
	if (key >= KEY_F(1) && key <= KEY_F(12))
		snprintf(buf, n, "F%d", key - KEY_F0);
	else if (key > 0 && key < 0x20)
		snprintf(buf, n, "C-%c", key + 'a' - 1);
	else if (key >= 0x20 && key < 0x7f)
		snprintf(buf, n, "%c", key);
	else
		snprintf(buf, n, "#%d", key);
}

void tui_key_label(const struct tui_key *k, char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = 0;
	for (int i = 0; i < 4 && k->keys[i] && used + 1 < n; i++) {
		char name[16];

		/* KEY_ENTER and '\n' both read "Enter": show it once. */
		if (i > 0 && k->keys[i] == KEY_ENTER && k->keys[i - 1] == '\n')
			continue;
		if (i > 0 && k->keys[i] == 127 && k->keys[i - 1] == KEY_BACKSPACE)
			continue;
		tui_key_name(k->keys[i], name, sizeof(name));
		used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? " " : "", name);
	}
}

static int push(struct tui_input **v, size_t *n, size_t *cap, struct tui_input in)
{
	if (array_grow(v, cap, *n + 1, sizeof(**v)))
		return -ENOMEM;
	(*v)[(*n)++] = in;
	return 0;
}

/* Parses the name inside <...>; 0 and *in filled, or -1 if it is no name. */
static int parse_name(const char *s, size_t len, struct tui_input *in)
{
	char name[32];
	int a, b, k;

	if (len == 0 || len >= sizeof(name))
		return -1;
	memcpy(name, s, len);
	name[len] = 0;
	memset(in, 0, sizeof(*in));
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (!strcasecmp(name, named[i].name) && named[i].key != KEY_RESIZE &&
		    named[i].key != KEY_MOUSE) {
			in->key = named[i].key;
			return 0;
		}
	if (!strcasecmp(name, "Tick")) {
		in->key = TUI_KEY_TICK;
		return 0;
	}
	if (!strcasecmp(name, "lt")) {
		in->key = '<';
		return 0;
	}
	if ((name[0] == 'F' || name[0] == 'f') && sscanf(name + 1, "%d%n", &a, &k) == 1 &&
	    !name[1 + k] && a >= 1 && a <= 12) {
		in->key = KEY_F(a);
		return 0;
	}
	if (len == 3 && (name[0] == 'C' || name[0] == 'c') && name[1] == '-' &&
	    ((name[2] >= 'a' && name[2] <= 'z') || (name[2] >= 'A' && name[2] <= 'Z'))) {
		in->key = TUI_CTRL(name[2]);
		return 0;
	}
	static const struct {
		const char *prefix;
		unsigned long bstate;
	} mouse[] = { { "Click:", BUTTON1_CLICKED },
		      { "DClick:", BUTTON1_DOUBLE_CLICKED },
		      { "WheelUp:", BUTTON4_PRESSED },
		      { "WheelDown:", BUTTON5_PRESSED } };

	for (size_t i = 0; i < sizeof(mouse) / sizeof(mouse[0]); i++) {
		size_t pl = strlen(mouse[i].prefix);

		if (strncasecmp(name, mouse[i].prefix, pl))
			continue;
		if (sscanf(name + pl, "%d,%d%n", &a, &b, &k) != 2 || name[pl + k] || a < 0 ||
		    b < 0)
			return -1;
		in->key = KEY_MOUSE;
		in->bstate = mouse[i].bstate;
		in->x = a;
		in->y = b;
		return 0;
	}
	if (!strncasecmp(name, "Resize:", 7)) {
		if (sscanf(name + 7, "%dx%d%n", &a, &b, &k) != 2 || name[7 + k] || a < 1 ||
		    b < 1 || a > 1000 || b > 1000)
			return -1;
		in->key = KEY_RESIZE;
		in->w = a;
		in->h = b;
		return 0;
	}
	return -1;
}

long tui_keys_parse(const char *script, struct tui_input **out, char *err, size_t errlen)
{
	struct tui_input *v = NULL, in;
	size_t n = 0, cap = 0;

	for (const char *p = script; *p;) {
		memset(&in, 0, sizeof(in));
		if (*p == '\\') {
			switch (p[1]) {
			case 'n':
			case 'r':
				in.key = '\n';
				break;
			case 't':
				in.key = '\t';
				break;
			case 'e':
				in.key = TUI_KEY_ESC;
				break;
			case '\\':
				in.key = '\\';
				break;
			default:
				snprintf(err, errlen, "bad escape '\\%c' (use \\n \\t \\e \\\\)",
					 p[1] ? p[1] : ' ');
				free(v);
				return -EINVAL;
			}
			p += 2;
		} else if (*p == '<' && strchr(p + 1, '>') &&
			   parse_name(p + 1, (size_t)(strchr(p + 1, '>') - p - 1), &in) == 0) {
			p = strchr(p + 1, '>') + 1;
		} else {
			in.key = (unsigned char)*p++;
		}
		if (push(&v, &n, &cap, in)) {
			free(v);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
	}
	*out = v;
	return (long)n;
}
