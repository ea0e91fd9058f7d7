/* libFuzzer target: the theme file parser on arbitrary bytes (theme files are user input). A
 * refused theme has a one-line message naming the file. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tui/theme.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), err[256] = "";
	struct tui_theme t;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (tui_theme_parse(text, "fuzz.theme", &t, err, sizeof(err)) &&
	    (!err[0] || strchr(err, '\n') || !strstr(err, "fuzz.theme")))
		abort();
	free(text);
	return 0;
}
