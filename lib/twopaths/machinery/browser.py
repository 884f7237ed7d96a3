"""The system Chromium, driven by playwright (whose own browser download is never used): the
browser check reads the site with it, and ``make pdf`` prints the book with it."""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

# Any URL but these is refused before it leaves the browser: the site and the PDF build are offline.
ALLOWED_SCHEMES = ("file:", "data:", "blob:", "about:")
NETWORK_URL = re.compile(f"^(?!{'|'.join(ALLOWED_SCHEMES)})")

# MathJax 3 typesets after load; startup.promise settles when it is done. If MathJax never loaded
# (its script blocked, say) there is no promise. Lazy images off-screen never load unless made eager.
WAIT_JS = """async ([mathjaxMs, imageMs]) => {
  const timeout = ms => new Promise(resolve => setTimeout(resolve, ms));
  const promise = window.MathJax?.startup?.promise;
  if (promise) await Promise.race([promise.catch(() => {}), timeout(mathjaxMs)]);
  const imgs = [...document.images];
  imgs.forEach(img => { img.loading = "eager"; });
  await Promise.race([Promise.all(imgs.map(img => img.decode().catch(() => {}))), timeout(imageMs)]);
}"""

# What a printed page holds, counted in the page just before printing.
CONTENT_JS = """() => ({
  math: document.querySelectorAll(".math").length,
  untypesetMath: [...document.querySelectorAll(".math")].filter(el => !el.querySelector("mjx-container")).length,
  typesetMath: document.querySelectorAll("mjx-container").length,
  images: document.images.length,
  brokenImages: [...document.images].filter(img => !(img.complete && img.naturalWidth > 0)).length,
  figures: document.querySelectorAll("figure").length,
  tables: document.querySelectorAll("table").length,
})"""

# For paper: folded content (exercise solutions, hidden code) open, and code lines too long for
# the page wrapped, since paper cannot scroll (the theme's own print style hides the navigation).
PRINT_JS = """() => {
  document.querySelectorAll("details").forEach(d => { d.open = true; });
  window.dispatchEvent(new Event("beforeprint"));
  const style = document.createElement("style");
  style.textContent = "pre { white-space: pre-wrap; overflow-wrap: anywhere; }";
  document.head.append(style);
}"""


def find_chromium() -> str | None:
    """Path of the system Chromium (Debian package `chromium`), or None."""
    if Path("/usr/bin/chromium").is_file():
        return "/usr/bin/chromium"
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    return None


def launch(playwright):
    """Headless system Chromium. --no-sandbox: Chromium refuses its sandbox as root (CI runs as root)."""
    chromium = find_chromium()
    if chromium is None:
        raise FileNotFoundError("no chromium found (apt-get install chromium)")
    return playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])


@dataclass(frozen=True)
class Printed:
    path: Path
    content: dict       # CONTENT_JS's counts in the page that was printed

    def problems(self) -> list[str]:
        """What did not make it onto paper."""
        c = self.content
        out = []
        if c["untypesetMath"]:
            out.append(f"{c['untypesetMath']} of {c['math']} math elements not typeset by MathJax")
        if c["brokenImages"]:
            out.append(f"{c['brokenImages']} of {c['images']} images did not load")
        return out


def print_pdf(html: Path, pdf: Path, wait_ms: int = 600_000) -> Printed:
    """Print the page ``html`` to ``pdf`` (A4) once MathJax has typeset it and its images loaded;
    every request that leaves the machine is refused."""
    from playwright.sync_api import sync_playwright

    pdf.parent.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = launch(pw)
        try:
            page = browser.new_page()
            page.set_default_timeout(wait_ms)
            page.route(NETWORK_URL, lambda route: route.abort())
            page.goto(Path(html).resolve().as_uri(), wait_until="load")
            page.evaluate(WAIT_JS, [wait_ms, wait_ms])
            content = page.evaluate(CONTENT_JS)
            page.evaluate(PRINT_JS)
            page.emulate_media(media="print")
            page.pdf(path=str(pdf), format="A4", print_background=True, display_header_footer=True,
                     header_template="<span></span>",
                     footer_template='<div style="font-size:8px;width:100%;text-align:center">'
                                     '<span class="pageNumber"></span> / <span class="totalPages"></span></div>',
                     margin={"top": "15mm", "bottom": "15mm", "left": "12mm", "right": "12mm"})
        finally:
            browser.close()
    return Printed(pdf, content)
