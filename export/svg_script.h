/* The constant style sheet and JavaScript embedded in every SVG flame graph. They hold no user
 * data: the script reads its settings from attributes of the <g id="frames"> element
 * (data-nametype, data-fontsize, data-fontwidth, data-xpad, data-inverted), so no name, title
 * or option can reach script text, and neither constant contains "]]>". */
#ifndef GALATOP_EXPORT_SVG_SCRIPT_H
#define GALATOP_EXPORT_SVG_SCRIPT_H

/* CSS for the buttons, hover outline, zoom and search states. */
extern const char svg_style[];
/* ECMAScript: hover details, click to zoom, Reset Zoom, regexp search with "Matched: N%",
 * case toggle (Ctrl-I, the "ic" button), Ctrl-F / F3, and zoom/search kept in the URL. */
extern const char svg_script[];

#endif
