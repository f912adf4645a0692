"""The built book in headless Chromium: page layout measured at a given width, and screenshots.

Chromium's own window cannot be narrower than about 500 px in headless mode, so each page is loaded in an
``<iframe>`` of exactly the width asked for (the page's media queries see that width), inside a harness page
that Chromium renders with ``--dump-dom``. A script in the harness waits for every frame to load and for MathJax
to typeset, measures the frames' layout, and writes the result as JSON into the DOM that Chromium prints. No
browser driver or DevTools client is needed: Debian's ``chromium`` package is enough.

``python tests/browser.py screenshots HTML_DIR OUT_DIR`` writes ``<page>.png`` (1280 px) and ``<page>-420.png``
for every page (``make screenshots``).
"""

from __future__ import annotations

import html
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

INSTALL = "apt-get install -y chromium"
#: the widths the book is checked at: a phone and a laptop
WIDTHS = (420, 1280)

#: measures one frame's document: what sticks out of the viewport outside a scrolling box, what is clipped, images
#: wider than the viewport. An element counts as contained when an ancestor inside the viewport scrolls or clips.
MEASURE = r"""
function measure(doc) {
  const win = doc.defaultView, vw = doc.documentElement.clientWidth, slack = 1;
  const boxes = new Set(['auto', 'scroll', 'hidden', 'clip']);
  const describe = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
    (typeof el.className === 'string' && el.className.trim() ? '.' + el.className.trim().split(/\s+/).join('.') : '') +
    ': ' + (el.textContent || el.getAttribute('src') || '').trim().replace(/\s+/g, ' ').slice(0, 80);
  const visible = el => { const s = win.getComputedStyle(el); return s.display !== 'none' && s.visibility !== 'hidden'; };
  const contained = el => {
    for (let p = el.parentElement; p && p !== doc.documentElement; p = p.parentElement) {
      if (boxes.has(win.getComputedStyle(p).overflowX)) return p.getBoundingClientRect().right <= vw + slack;
    }
    return false;
  };
  const main = doc.querySelector('main') || doc.body;
  const overflowing = [], clipped = [], images = [];
  // what a reader sees of a formula, a figure, a table or code: a clipping box must hold all of it
  const content = 'mjx-container > mjx-math, img, table, pre';
  for (const el of main.querySelectorAll('*')) {
    if (el.closest('mjx-assistive-mml')) continue;  // MathJax's copy for screen readers, clipped on purpose
    const r = el.getBoundingClientRect();
    if (r.width === 0 || !visible(el)) continue;
    const ox = win.getComputedStyle(el).overflowX;  // a box that scrolls or clips keeps its content in
    const right = boxes.has(ox) ? r.right : Math.max(r.right, r.left + el.scrollWidth);  // a box may fit, its text not
    if (right > vw + slack && !contained(el) && !(el.parentElement && overflowing.includes(el.parentElement)))
      overflowing.push(el);
    if (ox === 'hidden' || ox === 'clip') {
      for (const inner of el.querySelectorAll(content)) {
        const c = inner.getBoundingClientRect();
        if (c.width > 0 && (c.right > r.right + 2 || c.left < r.left - 2)) {
          clipped.push(describe(inner) + ' (' + Math.round(c.width) + ' px in ' + Math.round(r.width) + ' px)');
          break;
        }
      }
    }
    if (el.tagName === 'IMG' && r.width > vw + slack) images.push(el);
  }
  return {viewport: vw, page_scroll_width: doc.documentElement.scrollWidth, height: doc.documentElement.scrollHeight,
          overflowing: overflowing.map(describe), clipped,
          images: images.map(el => describe(el) + ' (' + Math.round(el.getBoundingClientRect().width) + ' px)')};
}
async function run() {
  const frames = [...document.querySelectorAll('iframe')];
  const loaded = f => f.contentDocument && f.contentDocument.URL !== 'about:blank'
    && f.contentDocument.readyState === 'complete';  // a frame starts on a blank document that is complete at once
  await Promise.all(frames.map(f => new Promise(ok => loaded(f) ? ok() : f.addEventListener('load', ok))));
  await Promise.all(frames.map(f => (f.contentWindow.MathJax && f.contentWindow.MathJax.startup
    && f.contentWindow.MathJax.startup.promise) || Promise.resolve()));
  const result = {};
  for (const f of frames) {
    try { result[f.dataset.page] = measure(f.contentDocument); }
    catch (e) { result[f.dataset.page] = {error: String(e)}; }
  }
  const out = document.createElement('pre');
  out.id = 'layout-result';
  out.textContent = JSON.stringify(result);
  document.body.appendChild(out);
}
run();
"""


def chromium() -> str | None:
    """The Chromium executable on PATH (Debian's ``chromium``, or a Chrome), or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def _chromium(*args, timeout: int = 300) -> str:
    exe = chromium()
    if exe is None:
        raise RuntimeError(f"no Chromium found; install Debian's package: {INSTALL}")
    with tempfile.TemporaryDirectory() as profile:  # a fresh profile: no state from an earlier run
        proc = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                               "--allow-file-access-from-files", f"--user-data-dir={profile}", *args],
                              capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"chromium {' '.join(args)} failed (exit {proc.returncode}): {proc.stderr[-2000:]}")
    return proc.stdout


def _harness(pages: list[Path], width: int, height: int, script: str = "") -> Path:
    frames = "\n".join(f'<iframe data-page="{html.escape(p.name)}" src="{p.resolve().as_uri()}" '
                       f'style="display:block;width:{width}px;height:{height}px;border:0"></iframe>' for p in pages)
    text = f"<!DOCTYPE html><html><body style='margin:0'>{frames}<script>{script}</script></body></html>"
    fd, name = tempfile.mkstemp(suffix=".html", prefix="layout-")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    return Path(name)


def measure(pages: list[Path], width: int) -> dict:
    """``{page name: {viewport, page_scroll_width, height, overflowing, clipped, images}}`` for ``pages`` at
    ``width`` px."""
    harness = _harness(pages, width, 900, MEASURE)
    try:
        dom = _chromium("--window-size=1280,900", "--virtual-time-budget=60000", "--dump-dom", harness.as_uri())
    finally:
        harness.unlink()
    start = dom.find('<pre id="layout-result">')
    if start < 0:
        raise RuntimeError(f"the layout script wrote no result at {width} px (did the pages load?)")
    return json.loads(html.unescape(dom[start + len('<pre id="layout-result">'):dom.index("</pre>", start)]))


def problems(results: dict) -> list[str]:
    """One line per layout problem in :func:`measure`'s ``results``."""
    lines = []
    for page, r in results.items():
        if "error" in r:
            lines.append(f"{page}: the page could not be measured: {r['error']}")
            continue
        if r["page_scroll_width"] > r["viewport"] + 1:
            lines.append(f"{page}: the page scrolls sideways ({r['page_scroll_width']} px in {r['viewport']} px)")
        lines += [f"{page}: sticks out of the page: {e}" for e in r["overflowing"]]
        lines += [f"{page}: clipped: {e}" for e in r["clipped"]]
        lines += [f"{page}: image wider than the page: {e}" for e in r["images"]]
    return lines


def book_pages(html_dir: Path) -> list[Path]:
    """The book's content pages: the landing page, the chapters and the bibliography."""
    book = Path(html_dir) / "book"
    return [book / "intro.html", *sorted((book / "chapters").glob("*.html")), book / "bibliography.html"]


#: the tallest screenshot taken (Chromium's limit for one rendered surface)
MAX_HEIGHT = 16384


def screenshot(page: Path, out: Path, width: int, height: int) -> None:
    """A PNG of the first ``height`` px of ``page`` at ``width`` px (a frame of that width for phone widths)."""
    if width >= 500:
        _chromium(f"--window-size={width},{height}", f"--screenshot={out}", page.resolve().as_uri())
        return
    harness = _harness([page], width, height)
    try:
        _chromium(f"--window-size={width},{height}", f"--screenshot={out}", harness.as_uri())
    finally:
        harness.unlink()


def screenshots(html_dir: Path, out_dir: Path) -> None:
    """Whole pages (up to :data:`MAX_HEIGHT` px) at every width of :data:`WIDTHS`: ``<page>.png`` at 1280 px,
    ``<page>-420.png`` at 420 px."""
    out_dir.mkdir(parents=True, exist_ok=True)
    pages = [p for p in book_pages(html_dir) if p.exists()]
    for width in WIDTHS:
        heights = measure(pages, width)
        for page in pages:
            name = page.stem if width == max(WIDTHS) else f"{page.stem}-{width}"
            screenshot(page, out_dir / f"{name}.png", width, min(heights[page.name].get("height", 6000), MAX_HEIGHT))
            print(f"  {name}.png")


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] != "screenshots":
        raise SystemExit("usage: python tests/browser.py screenshots HTML_DIR OUT_DIR")
    if chromium() is None:
        raise SystemExit(f"screenshots: no Chromium found; install Debian's package: {INSTALL}")
    screenshots(Path(sys.argv[2]), Path(sys.argv[3]))
