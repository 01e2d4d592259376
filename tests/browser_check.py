"""Open a report in headless Chromium and read back what the browser saw: every image's natural
width, every in-page link and whether its target exists, and the page's height.

The report itself is not touched: it is copied, and the copy gets a small script that writes the
measurements into the page once it has loaded; ``--dump-dom`` prints the page after that.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict, Optional

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
WIDTH = 1280  # a laptop screen's CSS width
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
         "--disable-dev-shm-usage")

PROBE = """<script>
window.addEventListener('load', () => {
  const ids = new Set([...document.querySelectorAll('[id]')].map(e => e.id));
  const out = {
    images: [...document.images].map(i => ({src: i.getAttribute('src'), width: i.naturalWidth,
                                             loaded: i.complete && i.naturalWidth > 0})),
    anchors: [...document.querySelectorAll('a[href^="#"]')].map(a => ({
      href: a.getAttribute('href'), target: ids.has(a.getAttribute('href').slice(1))})),
    links: [...document.querySelectorAll('a[href]:not([href^="#"])')].map(a => a.href),
    height: document.documentElement.scrollHeight,
    width: document.documentElement.scrollWidth,
    // Table columns with no text in any body row: a comparison left unfilled.
    emptyColumns: [...document.querySelectorAll('table')].flatMap(t => {
      const rows = [...t.tBodies].flatMap(b => [...b.rows]);
      if (!rows.length) return [];
      const heads = [...t.querySelectorAll('thead th')].map(th => th.textContent.trim());
      const n = Math.max(...rows.map(r => r.cells.length));
      const out = [];
      for (let c = 0; c < n; c++) {
        if (rows.every(r => !r.cells[c] || !r.cells[c].textContent.trim())) out.push(heads[c] || `column ${c}`);
      }
      return out;
    }),
    // Markdown shown as source: a backtick in the visible text.
    backticks: document.body.innerText.split(String.fromCharCode(10)).filter(line => line.includes('`')).slice(0, 5),
    // Text cut off by its box.
    clipped: [...document.querySelectorAll('body *')].filter(e => {
      const st = getComputedStyle(e);
      return (st.overflowX === 'hidden' || st.textOverflow === 'ellipsis') && e.scrollWidth > e.clientWidth + 1;
    }).map(e => `${e.tagName}: ${e.textContent.trim().slice(0, 60)}`),
  };
  const pre = document.createElement('pre');
  pre.id = 'tcpenergy-probe';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


def chromium() -> Optional[str]:
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


def _run(args, timeout: float = 120.0) -> subprocess.CompletedProcess:
    binary = chromium()
    if binary is None:
        raise RuntimeError("no headless browser: install the Debian package `chromium` "
                           "(.ci/run and test.sh do)")
    return subprocess.run([binary, *FLAGS, *args], capture_output=True, text=True, timeout=timeout)


def probe(report_dir: Path, work: Path) -> Dict[str, Any]:
    """Measurements of ``report_dir/index.html`` as rendered ``WIDTH`` CSS pixels wide."""
    copy = work / "probed"
    shutil.copytree(report_dir, copy)
    page = copy / "index.html"
    page.write_text(page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"),
                    encoding="utf-8")
    done = _run([f"--window-size={WIDTH},900", "--virtual-time-budget=10000", "--dump-dom",
                 page.as_uri()])
    match = re.search(r'<pre id="tcpenergy-probe">(.*?)</pre>', done.stdout, re.S)
    if match is None:
        raise RuntimeError(f"the page did not report back; chromium said: {done.stderr[-2000:]}")
    return json.loads(match.group(1))


def screenshot(report_dir: Path, out: Path, height: int) -> Path:
    """A PNG of the whole page (``height`` CSS pixels tall)."""
    _run([f"--window-size={WIDTH},{height}", f"--screenshot={out}",
          (report_dir / "index.html").as_uri()])
    return out
