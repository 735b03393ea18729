#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# docs/catapult-shot.sh - a second timeline picture for the README: fortstat's
# --timeline of the abcd fixture in the Catapult trace viewer, the viewer
# that chrome://tracing was. Chromium no longer ships it (Debian's
# Chromium 156 keeps chrome://tracing behind its "internal debugging pages"
# switch and, switched on, fails with ERR_FAILED: the binary has no trace
# viewer left), but Go's `go tool trace` embeds a build of it, which
# Debian's golang-1.19-src installs. A page written here loads the trace
# into it, in Debian's headless Chromium driven by playwright-core.
# Needs: fortstat built with its fixtures, golang-1.19-src (or any Go
# source tree with cmd/trace's static files), Debian's chromium, node and
# npm (the npm registry).
#   sh docs/catapult-shot.sh [OUT.png]
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/docs/timeline-abcd-catapult.png}
static=
for d in "$(go env GOROOT 2>/dev/null)" /usr/share/go-1.19 /usr/lib/go; do
	for s in src/cmd/trace/static src/internal/trace/traceviewer/static; do
		[ -n "$d" ] && [ -f "$d/$s/trace_viewer_full.html" ] &&
			{ static=$d/$s; break 2; }
	done
done
[ -n "$static" ] || { echo "no trace_viewer_full.html: install golang-1.19-src" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
www=$tmp/www
mkdir "$www"
ln -s "$static/trace_viewer_full.html" "$static/webcomponents.min.js" "$www/"
# abcd exits 3, its own status, which fortstat keeps; run from the source
# tree so the process is named ./fixtures/bin/abcd-O2
(cd "$src" && exec ./fortstat --timeline="$www/trace.json" --timeline-min=0 \
	-o /dev/null ./fixtures/bin/abcd-O2 >/dev/null) || [ $? = 3 ]
# the viewer's documented embedding: a tr-ui-timeline-view given a
# tr.Model that tr.importer.Import filled from the JSON
cat >"$www/index.html" <<'HTML'
<!DOCTYPE html>
<html><head><meta charset="utf-8">
<script src="webcomponents.min.js"></script>
<link rel="import" href="trace_viewer_full.html">
<style>html,body{margin:0;height:100%;overflow:hidden}#view{height:100%}</style>
</head><body>
<script>
document.addEventListener('WebComponentsReady', async () => {
  const view = document.createElement('tr-ui-timeline-view');
  view.id = 'view';
  const tracks = document.createElement('track-view-container');
  tracks.id = 'track_view_container';
  view.track_view_container = tracks;
  Polymer.dom(view).appendChild(tracks);
  Polymer.dom(document.body).appendChild(view);
  const text = await (await fetch('trace.json')).text();
  const model = new tr.Model();
  await new tr.importer.Import(model).importTracesWithProgressDialog([text]);
  view.model = model;
  view.viewTitle = 'fortstat --timeline';
  window.traceShown = true;
});
</script>
</body></html>
HTML
cd "$tmp"
npm install --silent playwright-core >/dev/null
cat >shot.js <<'JS'
const { chromium } = require('playwright-core');
const [out, www, lib] = process.argv.slice(2);
// the page and the trace served from www (docs/shot.js)
require(lib).shot({ chromium, www, out, width: 1200, height: 300 }, async (p, base) => {
  await p.goto(`${base}/index.html`);
  await p.waitForFunction(() => window.traceShown, null, { timeout: 60000 });
  // the banner says the viewer runs on the web-components polyfill
  await p.getByRole('button', { name: 'Hide' }).click();
  async function drag(x, y, tx, ty) {
    await p.mouse.move(x, y); await p.mouse.down();
    await p.mouse.move(tx, ty, { steps: 8 }); await p.mouse.up();
  }
  // the tracks take the page: the selection panel's handle dragged down
  for (const h of await p.locator('tr-ui-b-drag-handle').all()) {
    const bb = await h.boundingBox();
    if (bb && bb.width > 500) await drag(600, bb.y + bb.height / 2, 600, 295);
  }
  // main (the first row of slices, drawn on a canvas: clicked where it
  // is) selected, 'f' frames the selection, a click beside unselects
  await p.mouse.click(711, 61);
  await p.keyboard.press('f');
  await p.mouse.click(700, 200);
  // the mouse-mode tool box, which floats over the tracks, moved under the
  // thread's name
  const t = await p.locator('tr-ui-b-mouse-mode-selector').boundingBox();
  await drag(t.x + t.width / 2, t.y + 4, 120, 150);
  await p.waitForTimeout(500);
});
JS
node shot.js "$out" "$www" "$src/docs/shot.js"
echo "$out"
