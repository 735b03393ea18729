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
const fs = require('fs'), http = require('http'), path = require('path');
(async () => {
  // speedscope and the trace served from www on a free local port, by
  // node itself (a python http.server started by pid could outlive the
  // script where python3 is a shim that forks)
  const www = process.argv[3];
  const server = http.createServer((req, res) => {
    const f = path.join(www, path.normalize(new URL(req.url, 'http://h').pathname));
    if (!f.startsWith(www)) { res.writeHead(403); res.end(); return; }
    fs.readFile(f, (err, data) => {
      if (err) { res.writeHead(404); res.end(); return; }
      const type = { '.js': 'text/javascript', '.html': 'text/html', '.css': 'text/css',
                     '.json': 'application/json', '.png': 'image/png', '.wasm': 'application/wasm' };
      res.writeHead(200, { 'Content-Type': type[path.extname(f)] || 'application/octet-stream' });
      res.end(data);
    });
  });
  await new Promise(r => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}`;
  const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  const p = await b.newPage({ viewport: { width: 1200, height: 420 } });
  await p.goto(`${base}/index.html#profileURL=${base}/trace.json`);
  await p.waitForTimeout(4000);
  await p.screenshot({ path: process.argv[2] });
  await b.close();
  server.close();
})();
JS
node shot.js "$out" "$www"
echo "$out"
