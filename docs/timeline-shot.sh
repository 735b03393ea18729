#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# docs/timeline-shot.sh - the timeline picture of the README: fortstat's
# --timeline of the abcd fixture opened in speedscope (a trace viewer that
# reads Chrome trace-event JSON and runs offline: Perfetto's UI is a web
# page at ui.perfetto.dev, out of this build machine's reach), in Debian's
# headless Chromium driven by playwright-core. Needs: fortstat built with
# its fixtures, Debian's chromium, node and npm (the npm registry).
#   sh docs/timeline-shot.sh [OUT.png]
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/docs/timeline-abcd.png}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
npm install --silent speedscope playwright-core >/dev/null
www=$tmp/node_modules/speedscope/dist/release
# abcd exits 3, its own status, which fortstat keeps
"$src/fortstat" --timeline="$www/trace.json" --timeline-min=0 -o /dev/null \
	"$src/fixtures/bin/abcd-O2" >/dev/null || [ $? = 3 ]
cat >shot.js <<'JS'
const { chromium } = require('playwright-core');
const [out, www, lib] = process.argv.slice(2);
// speedscope and the trace served from www (docs/shot.js)
require(lib).shot({ chromium, www, out, width: 1200, height: 420 }, async (p, base) => {
  await p.goto(`${base}/index.html#profileURL=${base}/trace.json`);
  await p.waitForTimeout(4000);
});
JS
node shot.js "$out" "$www" "$src/docs/shot.js"
echo "$out"
