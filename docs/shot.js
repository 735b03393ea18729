// SPDX-License-Identifier: GPL-2.0-or-later
// docs/shot.js - what docs/timeline-shot.sh and docs/catapult-shot.sh
// share: the folder www served on a free local port by node itself (a
// python http.server started by pid could outlive the script where python3
// is a shim that forks; the viewers' pages fetch files, which file: URLs
// refuse), Debian's headless Chromium opened on a page of the given size,
// the script's own steps, the screenshot, and both closed again.
//   require(THIS).shot({ chromium, www, out, width, height }, async (page, base) => ...)
// chromium: playwright-core's, which the calling script installed (node
// looks modules up from the requiring file). base: http://127.0.0.1:PORT.
'use strict';
const fs = require('fs'), http = require('http'), path = require('path');

const types = {
  '.js': 'text/javascript', '.html': 'text/html', '.css': 'text/css',
  '.json': 'application/json', '.png': 'image/png', '.wasm': 'application/wasm',
};

// The files under www (symbolic links followed), nothing outside it.
function serve(www) {
  const server = http.createServer((req, res) => {
    const f = path.join(www, path.normalize(new URL(req.url, 'http://h').pathname));
    if (!f.startsWith(www)) { res.writeHead(403); res.end(); return; }
    fs.readFile(f, (err, data) => {
      if (err) { res.writeHead(404); res.end(); return; }
      res.writeHead(200, { 'Content-Type': types[path.extname(f)] || 'application/octet-stream' });
      res.end(data);
    });
  });
  return new Promise(r => server.listen(0, '127.0.0.1', () => r(server)));
}

async function shot({ chromium, www, out, width, height }, steps) {
  const server = await serve(www);
  try {
    const base = `http://127.0.0.1:${server.address().port}`;
    const b = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
    try {
      const p = await b.newPage({ viewport: { width, height } });
      await steps(p, base);
      await p.screenshot({ path: out });
    } finally {
      await b.close();
    }
  } finally {
    server.close();
  }
}

module.exports = { serve, shot };
