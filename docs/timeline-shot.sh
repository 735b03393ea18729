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
server=
trap '[ -z "$server" ] || kill "$server" 2>/dev/null; rm -rf "$tmp"' EXIT
cd "$tmp"
npm install --silent speedscope playwright-core >/dev/null
www=$tmp/node_modules/speedscope/dist/release
# abcd exits 3, its own status, which fortstat keeps
"$src/fortstat" --timeline="$www/trace.json" --timeline-min=0 -o /dev/null \
	"$src/fixtures/bin/abcd-O2" >/dev/null || [ $? = 3 ]
(cd "$www" && exec python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1) &
server=$!
sleep 1
cat >shot.js <<'JS'
const { chromium } = require('playwright-core');
(async () => {
  const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  const p = await b.newPage({ viewport: { width: 1200, height: 420 } });
  await p.goto('http://127.0.0.1:8765/index.html#profileURL=http://127.0.0.1:8765/trace.json');
  await p.waitForTimeout(4000);
  await p.screenshot({ path: process.argv[2] });
  await b.close();
})();
JS
node shot.js "$out"
echo "$out"
