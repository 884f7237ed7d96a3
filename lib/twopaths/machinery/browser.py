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

# For paper: exercise solutions and other folds open, and code lines too long for the page wrapped,
# since paper cannot scroll (the theme's own print style hides the navigation). What the site
# folds away as bookkeeping stays off paper: hidden code cells, and folded tables (the audit's
# claims by topic, 72 pages of chapter 14), which leave their title and a pointer to the site.
# Headings lose their permalink signs, which would otherwise end every bookmark's title.
FOLDED_NOTE = " (folded: open it on the site)"
PRINT_JS = """() => {
  document.querySelectorAll("details").forEach(d => { d.open = true; });
  document.querySelectorAll(".headerlink").forEach(a => a.remove());
  window.dispatchEvent(new Event("beforeprint"));
  const style = document.createElement("style");
  style.textContent = `
    pre { white-space: pre-wrap; overflow-wrap: anywhere; }
    figure, table { break-inside: avoid; }
    h1, h2, h3, h4, summary, caption, .admonition-title { break-after: avoid; }
    table { font-size: 8pt; max-width: 100%; }
    th, td { overflow-wrap: anywhere; }
    .pst-scrollable-table-container, .table-wrapper { overflow: visible !important; }
    details.above-input, .tag_hide-input > .cell_input { display: none !important; }
    .dropdown.admonition:not(.solution) > :not(.admonition-title) { display: none !important; }
    .dropdown.admonition:not(.solution) { padding-bottom: 0.2em; }
    .dropdown.admonition:not(.solution) > .admonition-title::after { content: "{note}"; }`;
  document.head.append(style);
}""".replace("{note}", FOLDED_NOTE)

# Tables that still run past the printed column (A4 less the margins), which paper would cut.
PAGE_WIDTH_PX = round((210 - 2 * 12) / 25.4 * 96)
CLIPPED_JS = """() => [...document.querySelectorAll("table")].filter(t => {
  const column = (t.closest("article, main") ?? document.body).getBoundingClientRect();
  return t.getBoundingClientRect().right > column.right + 1 || t.scrollWidth > t.clientWidth + 1;
}).map(t => (t.querySelector("caption")?.textContent ?? t.rows[0]?.textContent ?? "").trim().slice(0, 60))"""


# The printed contents: a list of the headings that ``selector`` picks (a chapter's h1, a
# section's h2), each linked to its section and ending in the page it lands on, put before the
# page's first heading. The first print reserves the room with a number as wide as any the book
# reaches; the second writes the pages read from the first PDF, so the layout, and with it every
# page, stays as it was (``print_pdf`` checks that).
CONTENTS_JS = """([selector, pages]) => {
  let nav = document.querySelector("div.tp-contents");
  if (!nav) {
    nav = document.createElement("div");   // a div: the theme's print style hides every nav
    nav.className = "tp-contents";
    const list = document.createElement("ul");
    nav.append(Object.assign(document.createElement("h2"), {textContent: "Contents"}), list);
    for (const h of document.querySelectorAll(selector)) {
      const id = h.closest("[id]")?.id;
      if (!id) continue;
      const title = h.cloneNode(true);
      title.querySelectorAll(".headerlink").forEach(x => x.remove());
      const a = Object.assign(document.createElement("a"), {href: "#" + id});
      a.append(title.textContent.trim(), Object.assign(document.createElement("span"),
                                                      {className: "tp-page"}));
      const item = document.createElement("li");
      item.className = "tp-" + h.tagName.toLowerCase();
      item.append(a);
      list.append(item);
    }
    const style = document.createElement("style");
    style.textContent = ".tp-contents ul { list-style: none; padding: 0; } "
      + ".tp-contents a { display: block; } .tp-contents .tp-h2 { margin-left: 1.5em; } "
      + ".tp-page { float: right; min-width: 3ch; text-align: right; "
      + "font-variant-numeric: tabular-nums; } .tp-contents { break-after: page; }";
    document.head.append(style);
    const first = document.querySelector(selector);
    (first?.closest("section") ?? document.body.firstChild).before(nav);
  }
  const links = [...nav.querySelectorAll("a")];
  links.forEach(a => {
    a.querySelector(".tp-page").textContent =
      pages ? String(pages[a.hash.slice(1)] ?? "") : "000";
  });
  return links.map(a => a.hash.slice(1));
}"""
PLACEHOLDER_PAGES = 999   # the widest page number the reserved room holds


def anchor_pages(pdf: Path) -> dict[str, int]:
    """Each named destination of ``pdf`` (Chromium writes one for every anchor a link in the page
    points to) and the page, counted from 1, it lands on."""
    from pypdf import PdfReader

    reader = PdfReader(pdf)
    return {str(name).lstrip("/"): reader.get_destination_page_number(dest) + 1
            for name, dest in reader.named_destinations.items()}


# The headings' text as a reader sees it, in document order: Chromium builds the bookmarks from the
# printed lines, so a heading that wraps loses the space at its break ("your ownparameters") and
# one split across a page break can come out twice ("ChaptersChapters").
HEADINGS_JS = """() => [...document.querySelectorAll("h1, h2, h3, h4, h5, h6")]
  .map(h => h.textContent.replace(/\\s+/g, " ").trim())"""


def retitle_outline(pdf: Path, headings: list[str]) -> int:
    """Give each bookmark of ``pdf`` the text of the heading it was printed from: the next heading
    (in document order) whose letters, spaces aside, are the bookmark's, or half of them. Returns
    how many titles changed; a bookmark no heading matches keeps its title."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import NameObject, TextStringObject

    def squash(text: str) -> str:
        return "".join(text.split())

    writer = PdfWriter(clone_from=PdfReader(pdf))
    outlines = writer._root_object.get("/Outlines")
    items, stack = [], [outlines["/First"]] if outlines and "/First" in outlines else []
    while stack:                                   # depth first, as the headings run
        item = stack.pop().get_object()
        items.append(item)
        stack += [item[k] for k in ("/Next", "/First") if k in item]
    changed, at = 0, 0
    for item in items:
        title = squash(str(item["/Title"]))
        half = title[:len(title) // 2] if len(title) % 2 == 0 else None
        match = next((i for i in range(at, len(headings))
                      if squash(headings[i]) in (title, half)), None)
        if match is None:
            continue
        at = match + 1
        if str(item["/Title"]) != headings[match]:
            item[NameObject("/Title")] = TextStringObject(headings[match])
            changed += 1
    if changed:
        with open(pdf, "wb") as f:
            writer.write(f)
    return changed


def outline_titles(pdf: Path) -> list[str]:
    """The PDF's bookmarks (its outline), depth first."""
    from pypdf import PdfReader

    def walk(items):
        for item in items:
            yield from walk(item) if isinstance(item, list) else [item.title]

    return list(walk(PdfReader(pdf).outline))


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
        for key, what in (("clippedTables", "tables wider than the printed page"),
                          ("unpaged", "contents entries whose anchor has no page"),
                          ("moved", "contents entries whose page moved when numbered"),
                          ("pastPlaceholder", f"contents entries past page {PLACEHOLDER_PAGES}")):
            if c.get(key):
                out.append(f"{len(c[key])} {what}: {', '.join(c[key][:5])}")
        return out


def print_pdf(html: Path, pdf: Path, wait_ms: int = 600_000, contents: str | None = None) -> Printed:
    """Print the page ``html`` to ``pdf`` (A4, with bookmarks from its headings) once MathJax has
    typeset it and its images loaded; every request that leaves the machine is refused. With
    ``contents`` (a CSS selector of the headings to list) a contents list with page numbers comes
    first: the page is printed twice, and a second print whose pages moved is a problem."""
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
            page.set_viewport_size({"width": PAGE_WIDTH_PX, "height": 1000})
            clipped = page.evaluate(CLIPPED_JS)
            anchors = page.evaluate(CONTENTS_JS, [contents, None]) if contents else []
            _print(page, pdf)
            pages = anchor_pages(pdf) if anchors else {}
            if anchors:
                page.evaluate(CONTENTS_JS, [contents, pages])
                _print(page, pdf)
            headings = page.evaluate(HEADINGS_JS)
        finally:
            browser.close()
    again = anchor_pages(pdf) if anchors else {}
    retitled = retitle_outline(pdf, headings)
    content = {**content, "clippedTables": clipped, "contents": len(anchors), "retitled": retitled,
               "unpaged": sorted(a for a in anchors if a not in pages),
               "moved": sorted(a for a in anchors if a in pages and again.get(a) != pages[a]),
               "pastPlaceholder": sorted(a for a in anchors if pages.get(a, 0) > PLACEHOLDER_PAGES)}
    return Printed(pdf, content)


def _print(page, pdf: Path) -> None:
    page.pdf(path=str(pdf), format="A4", print_background=True, outline=True, tagged=True,
             display_header_footer=True, header_template="<span></span>",
             footer_template='<div style="font-size:8px;width:100%;text-align:center">'
                             '<span class="pageNumber"></span> / <span class="totalPages"></span></div>',
             margin={"top": "15mm", "bottom": "15mm", "left": "12mm", "right": "12mm"})
