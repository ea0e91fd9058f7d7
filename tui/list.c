#include "list.h"

void tui_list_show(struct tui_list *l, size_t n, int page)
{
	l->page = page < 1 ? 1 : page;
	if (l->sel >= n)
		l->sel = n ? n - 1 : 0;
	if ((long)l->sel < l->scroll)
		l->scroll = (int)l->sel;
	if ((long)l->sel >= (long)l->scroll + l->page)
		l->scroll = (int)l->sel - l->page + 1;
	/* No empty rows below the last one while the list is longer than the page. */
	if (l->scroll > (long)n - l->page)
		l->scroll = (int)n - l->page;
	if (l->scroll < 0)
		l->scroll = 0;
}

bool tui_list_move(struct tui_list *l, size_t n, int m)
{
	long sel = (long)l->sel, page = l->page < 1 ? 1 : l->page;

	switch (m) {
	case LIST_UP:
		sel--;
		break;
	case LIST_DOWN:
		sel++;
		break;
	case LIST_PGUP:
		sel -= page;
		break;
	case LIST_PGDN:
		sel += page;
		break;
	case LIST_HOME:
		sel = 0;
		break;
	case LIST_END:
		sel = (long)n - 1;
		break;
	default:
		return false;
	}
	if (sel >= (long)n)
		sel = (long)n - 1;
	l->sel = sel < 0 ? 0 : (size_t)sel;
	tui_list_show(l, n, l->page);
	return true;
}

void tui_list_top(struct tui_list *l)
{
	l->sel = 0;
	l->scroll = 0;
}

long tui_list_mouse(struct tui_list *l, size_t n, const struct tui_input *in, int y0)
{
	long r = in->y - y0;

	if (in->bstate & (BUTTON4_PRESSED | BUTTON5_PRESSED)) {
		int page = l->page < 1 ? 1 : l->page;

		l->scroll += in->bstate & BUTTON4_PRESSED ? -3 : 3;
		if (l->scroll > (long)n - page)
			l->scroll = (int)n - page;
		if (l->scroll < 0)
			l->scroll = 0;
		if ((long)l->sel < l->scroll)
			l->sel = (size_t)l->scroll;
		if ((long)l->sel >= (long)l->scroll + page)
			l->sel = (size_t)(l->scroll + page - 1);
		if (l->sel >= n)
			l->sel = n ? n - 1 : 0;
		return -1;
	}
	if (r < 0 || r >= l->page || l->scroll + r >= (long)n)
		return -1;
	l->sel = (size_t)(l->scroll + r);
	return (long)l->sel;
}
