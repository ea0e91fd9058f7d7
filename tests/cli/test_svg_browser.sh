#!/bin/sh
# galatop svg's interactivity in a real browser (headless Chromium): click to zoom, unzoom,
# search with "Matched: N%", ignore-case, Ctrl-F, hover details, zoom and search from the URL.
# A harness script is appended to a copy of the SVG; it drives the page with DOM events and
# writes what it saw into the document, which Chromium dumps.
. tests/lib.sh
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$browser" ]; then
	skip svg_browser "no chromium (apt-get install chromium)"
	exit 0
fi

printf 'main;mid;leaf_alpha;spin 60\nmain;mid;leaf_beta;spin 30\nmain;mid;leaf_gamma;spin 10\nother;x 100\n' >"$TMP/t.folded"

# harness SVG OUT: OUT is SVG with the driving script before </svg>.
harness() {
	sed 's|</svg>||' "$1" >"$2"
	cat >>"$2" <<'JS'
<script type="text/ecmascript"><![CDATA[
window.addEventListener("error", function(e) { window.gt_errors = (window.gt_errors || "") + e.message + ";"; });
window.addEventListener("load", function() { setTimeout(function() {
	var out = [];
	function g(name) {
		var el = document.getElementById("frames").children;
		for (var i = 0; i < el.length; i++)
			if (el[i].getElementsByTagName("title")[0].textContent.indexOf(name + " (") == 0)
				return el[i];
		return null;
	}
	function width(name) {
		var e = g(name);
		if (!e) return "none";
		return e.classList.contains("hide") ? "hidden" :
			parseFloat(e.getElementsByTagName("rect")[0].getAttribute("width")).toFixed(1);
	}
	function click(el) { el.dispatchEvent(new MouseEvent("click", { bubbles: true })); }
	function matched() { return document.getElementById("matched").textContent.trim(); }
	var steps = (location.search.indexOf("drive") >= 0);
	out.push("start mid=" + width("mid") + " other=" + width("other") + " matched=" + matched());
	if (steps) {
		g("leaf_alpha").getElementsByTagName("rect")[0].dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
		out.push("hover=" + document.getElementById("details").textContent.trim());
		click(g("mid").getElementsByTagName("rect")[0]);
		out.push("zoom mid=" + width("mid") + " other=" + width("other") + " alpha=" + width("leaf_alpha") +
			" unzoom=" + !document.getElementById("unzoom").classList.contains("hide"));
		window.prompt = function() { return "leaf_b"; };
		click(document.getElementById("search"));
		out.push("search " + matched());
		click(document.getElementById("unzoom"));
		out.push("unzoom mid=" + width("mid") + " other=" + width("other") + " " + matched());
		click(document.getElementById("search"));
		out.push("reset " + (matched() == "" ? "cleared" : matched()));
		window.prompt = function() { return "LEAF_A"; };
		window.dispatchEvent(new KeyboardEvent("keydown", { keyCode: 70, ctrlKey: true, bubbles: true }));
		out.push("ctrlf " + matched());
		click(document.getElementById("search"));
		click(document.getElementById("ignorecase"));
		window.dispatchEvent(new KeyboardEvent("keydown", { keyCode: 70, ctrlKey: true, bubbles: true }));
		out.push("icase " + matched());
	}
	var d = document.createElementNS("http://www.w3.org/2000/svg", "text");
	d.id = "gt-result";
	d.textContent = "GTRESULT " + out.join(" | ") + " | errors=" + (window.gt_errors || "none") + " END";
	document.documentElement.appendChild(d);
}, 0); });
]]></script>
</svg>
JS
}

# run URL: prints the harness result line.
run() {
	timeout 60 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run --user-data-dir="$TMP/profile" \
		--virtual-time-budget=3000 --dump-dom "$1" 2>/dev/null | grep -o 'GTRESULT [^<]*END' | tail -1
}

"$GALATOP" svg "$TMP/t.folded" >"$TMP/t.svg"
harness "$TMP/t.svg" "$TMP/h.svg"
r=$(run "file://$TMP/h.svg?drive")
echo "$r" | grep -q 'start mid=590.0 other=590.0' && pass svg_browser_loads || fail svg_browser_loads "$r"
echo "$r" | grep -q 'hover=Function: leaf_alpha (60 samples, 30.00%)' && pass svg_browser_hover_details || fail svg_browser_hover_details "$r"
echo "$r" | grep -q 'zoom mid=1180.0 other=hidden alpha=708.0 unzoom=true' && pass svg_browser_click_zooms || fail svg_browser_click_zooms "$r"
echo "$r" | grep -q 'search Matched: 30.0%' && pass svg_browser_search_in_zoom || fail svg_browser_search_in_zoom "$r"
echo "$r" | grep -q 'unzoom mid=590.0 other=590.0 Matched: 15.0%' && pass svg_browser_unzoom_keeps_search || fail svg_browser_unzoom_keeps_search "$r"
echo "$r" | grep -q 'reset cleared' && pass svg_browser_reset_search || fail svg_browser_reset_search "$r"
echo "$r" | grep -q 'ctrlf Matched: 0.0%' && pass svg_browser_ctrl_f_case_sensitive || fail svg_browser_ctrl_f_case_sensitive "$r"
echo "$r" | grep -q 'icase Matched: 30.0%' && pass svg_browser_ignore_case || fail svg_browser_ignore_case "$r"
echo "$r" | grep -q 'errors=none' && pass svg_browser_no_script_errors || fail svg_browser_no_script_errors "$r"

# Zoom and search restored from the URL (shareable links).
y=$(grep -o '<title>mid (100 samples[^<]*</title><rect x="[0-9.]*" y="[0-9.]*"' "$TMP/t.svg" | sed 's/.*x="\([0-9.]*\)" y="\([0-9.]*\)"/x=\1\&y=\2/')
r=$(run "file://$TMP/h.svg?$y&s=spin")
echo "$r" | grep -q 'start mid=1180.0 other=hidden matched=Matched: 100%' && pass svg_browser_url_state || fail svg_browser_url_state "$y: $r"

# A real fixture and a hostile one load without script errors.
printf '<script>alert(1)</script>;]]>;a&b"c'"'"'d 5\n\033[2Jesc;\377bad 3\n' >"$TMP/hostile.folded"
for f in "$FIXTURES/flamegraph-tests/results/perf-java-stacks-01-collapsed-all.txt" "$TMP/hostile.folded"; do
	[ -f "$f" ] || continue
	"$GALATOP" svg "$f" >"$TMP/f.svg" 2>/dev/null
	harness "$TMP/f.svg" "$TMP/fh.svg"
	r=$(run "file://$TMP/fh.svg")
	echo "$r" | grep -q 'errors=none' && pass "svg_browser_clean: $(basename "$f")" || fail "svg_browser_clean: $(basename "$f")" "$r"
done
