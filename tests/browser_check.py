"""Real-browser check of the built static site.

Opens every content page of a built Jupyter Book in headless system Chromium
(driven by playwright; playwright's own browser download is not used) and
reports what a reader would see going wrong: network requests (the site must
work offline), math left as raw TeX, broken images, error output from
notebook cells, glued numbers that did not make it into the page, errors in
the browser's console, code blocks and tables wider than their column, a
chapter's setup shown unfolded, figures without a caption or with a file hash
for alt text, and raw Python reprs in outputs.
A full-page screenshot of every page is saved for a human to look at.

Every problem belongs to one rule (RULES); `--report-only` lists rules whose
problems are printed but do not fail the run.

Usage:  python tests/browser_check.py HTML_DIR --screenshots DIR
            [--expected-glue JSON_FILE] [--report-only RULE,RULE]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from twopaths.machinery.browser import ALLOWED_SCHEMES, NETWORK_URL, WAIT_JS, find_chromium, launch

# Sphinx's own non-content pages, and its asset folders. (The general index is in the navigation:
# it is checked like any page.)
SKIP_FILES = {"search.html"}
SKIP_DIRS = {"_static", "_sources", "_images"}

# Jupyter Book writes index.html as nothing but a redirect to the root page.
REDIRECT = re.compile(r'<meta\s+http-equiv="refresh"\s+content="\d+;\s*url=([^"#?]+)', re.I)

# Generous: a loaded 2-core CI machine must not turn a slow MathJax into "math not typeset".
MATHJAX_TIMEOUT_MS = 30_000
IMAGE_TIMEOUT_MS = 30_000

# Glue roles/directives that leave a countable element in the HTML (see INSPECT_JS).
# {glue:md} is left out on purpose: it renders as plain markdown with no marker.
# ({glue:math} exists only as a directive in myst-nb 1.x; used as a role it
# renders nothing, so counting it makes the page fail, which is what we want.)
GLUE_ROLE = re.compile(r"\{glue(?::(?:text|any|math)?)?\}`")
GLUE_DIRECTIVE = re.compile(r"^\s*(?:`{3,}|:{3,})\{glue(?::(?:any|figure|math)?)?\}", re.M)


# What each rule catches; a problem names its rule, so a run can report some rules without failing.
RULES = {
    "network": "a request that leaves the machine (the site must work offline)",
    "tex": "TeX that MathJax did not typeset",
    "image": "an image that did not load",
    "error-output": "error output or a traceback in a cell",
    "glue": "a glued value missing or empty",
    "console": "an error in the browser's console (an uncaught exception or console.error)",
    "wide-code": "a shown code block wider than its column (the reader must scroll it)",
    "figure": "a figure in a cell's output without a caption, or with a file hash as alt text",
    "repr": "a raw Python repr in an output, e.g. np.float64(...) or torch.Size(...)",
    "shown-setup": "a chapter's parameters or setup cell shown unfolded (bookkeeping before the argument)",
    "wide-table": "a table wider than the text column at 1280 px, folded ones opened (the reader must scroll it)",
    "page": "a page missing, redirecting nowhere, or crashing the check",
}


class Problem(NamedTuple):
    page: str
    rule: str
    text: str

    def __str__(self) -> str:
        return f"{self.page}: {self.text}"


def site_pages(html_dir: Path) -> list[str]:
    """Content pages under html_dir, as POSIX paths relative to it."""
    pages = []
    for path in sorted(html_dir.rglob("*.html")):
        rel = path.relative_to(html_dir)
        if rel.name in SKIP_FILES or SKIP_DIRS.intersection(rel.parts[:-1]):
            continue
        pages.append(rel.as_posix())
    return pages


def screenshot_name(page: str) -> str:
    """'notebooks/01-kv-wall.html' -> 'notebooks__01-kv-wall.png'."""
    return page.removesuffix(".html").replace("/", "__") + ".png"


def expected_glue_from_sources(notebook_dir: Path, html_prefix: str = "notebooks") -> dict[str, int]:
    """Count glue references in the markdown cells of each notebook in notebook_dir."""
    expected = {}
    for nb_path in sorted(notebook_dir.glob("*.ipynb")):
        cells = json.loads(nb_path.read_text(encoding="utf-8"))["cells"]
        count = 0
        for cell in cells:
            if cell["cell_type"] == "markdown":
                text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
                count += len(GLUE_ROLE.findall(text)) + len(GLUE_DIRECTIVE.findall(text))
        expected[f"{html_prefix}/{nb_path.stem}.html"] = count
    return expected


# --- JavaScript run inside each page ---------------------------------------

INSPECT_JS = r"""() => {
  const CODE = "pre, code, .highlight, script, style, mjx-container";
  // Raw TeX that MathJax did not turn into math, in visible text outside code.
  const TEX = /\$\$|\\[()[\]]|\\[a-zA-Z]+\{|\\(?:frac|cdot|times|approx|leq?|geq?|sum|int|infty|alpha|beta|gamma|lambda|mu|sigma|pi)(?![a-zA-Z])/;
  const texLeaks = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node; (node = walker.nextNode()); ) {
    const el = node.parentElement;
    if (!el || el.closest(CODE) || !el.checkVisibility()) continue;
    const m = TEX.exec(node.data);
    if (m) texLeaks.push(node.data.slice(Math.max(0, m.index - 20), m.index + 40).replace(/\s+/g, " ").trim());
  }
  const math = [...document.querySelectorAll(".math")];
  const untypesetMath = math.filter(el => !el.querySelector("mjx-container")).length;

  const brokenImages = [...document.images]
    .filter(img => !(img.complete && img.naturalWidth > 0))
    .map(img => img.getAttribute("src"));

  const errors = [];
  const short = el => el.innerText.replace(/\s+/g, " ").trim().slice(0, 100);
  for (const el of document.querySelectorAll(".output.stderr, .output.traceback, .cell_output .error"))
    errors.push(`${el.className}: ${short(el)}`);
  for (const el of document.querySelectorAll(".cell_output"))
    // Coloured "SomethingError:" line: an error printed as ANSI text, e.g. by a subprocess.
    if (el.querySelector('[class*="-Color"]') && /^\s*\w*(Error|Exception)\s*:/m.test(el.textContent))
      errors.push(`ANSI error output: ${short(el)}`);
  const body = document.body.cloneNode(true);
  body.querySelectorAll(".cell_input, script, style").forEach(el => el.remove());
  if (body.textContent.includes("Traceback (most recent call last)"))
    errors.push("page text contains 'Traceback (most recent call last)'");

  // myst-nb renders {glue:text} as span.pasted-text, the {glue:math} directive as
  // .pasted-math, and {glue}/{glue:any} (role or directive) as a bare rendered
  // output: an .output element, or an <img> of a notebook image (sha256 file name)
  // -- outside any notebook cell.  A missing key renders nothing at all.
  const GLUE = ".pasted-text, .pasted-math, .output";
  const glue = [...document.querySelectorAll(GLUE + ", img")]
    .filter(el => !el.closest(".cell_output") && !el.parentElement.closest(GLUE))
    .filter(el => el.tagName !== "IMG" || /\/[0-9a-f]{64}\.\w+$/.test(el.src));
  const emptyGlue = glue.filter(el => el.tagName !== "IMG" && !el.textContent.trim()).length;

  // Shown code (not outputs) that overflows its column; a collapsed cell is not shown.
  const longest = text => text.split("\n").reduce((a, b) => (b.length > a.length ? b : a), "");
  const wideCode = [...document.querySelectorAll("pre")]
    .filter(pre => !pre.closest(".cell_output") && pre.checkVisibility())
    .filter(pre => pre.scrollWidth > pre.clientWidth + 1)
    .map(pre => `${pre.scrollWidth - pre.clientWidth} px too wide: ${longest(pre.textContent).trim().slice(0, 60)}`);

  // A notebook figure needs a caption and alt text that describes it; myst-nb's default alt
  // text is the image's file name, a content hash.
  const figures = [];
  for (const [i, img] of [...document.querySelectorAll(".cell_output img")].entries()) {
    const src = img.getAttribute("src") || "";
    const name = `#${i + 1} (${src.startsWith("data:") ? "inline image" : src.split("/").pop().slice(0, 16)})`;
    const caption = img.closest("figure")?.querySelector("figcaption")?.textContent.trim();
    const alt = (img.getAttribute("alt") || "").trim();
    if (!caption) figures.push(`figure ${name} without a caption`);
    if (!alt) figures.push(`figure ${name} without alt text`);
    else if (/[0-9a-f]{32}/i.test(alt)) figures.push(`figure ${name} with a file hash as alt text`);
  }

  // Reprs a reader should never see: a number or shape printed as Python would echo it.
  const REPR = /\b(?:np\.(?:float|int|uint|bool)\w*|torch\.Size|Setup|tensor)\(/g;
  const reprs = [];
  for (const el of document.querySelectorAll(".cell_output, .pasted-text")) {
    if (el.parentElement.closest(".cell_output")) continue;   // counted with its cell
    for (const m of el.textContent.matchAll(REPR))
      reprs.push(el.textContent.slice(m.index, m.index + 50).split("\n")[0].trim());
  }

  // The parameters cell (myst-nb's tag_parameters) and the chapter.setup cell belong folded.
  const shownSetup = [...document.querySelectorAll(".cell_input pre")]
    .filter(pre => pre.checkVisibility())
    .filter(pre => pre.closest(".tag_parameters") || /\bsetup\(/.test(pre.textContent))
    .map(pre => pre.textContent.trim().split("\n")[0].slice(0, 60));

  return {texLeaks, untypesetMath, mathCount: math.length, brokenImages, errors,
          glueCount: glue.length, emptyGlue, wideCode, figures, reprs, shownSetup};
}"""

# Run after INSPECT_JS (which needs folds closed): opens every fold, then measures each table
# against the text column's content box, the width the reader has at 1280 px.
TABLES_JS = r"""() => {
  document.querySelectorAll("details").forEach(d => { d.open = true; });
  const wide = [];
  for (const table of document.querySelectorAll("table")) {
    if (!table.checkVisibility()) continue;
    const column = table.closest("article.bd-article, main, body");
    const style = getComputedStyle(column);
    const room = column.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const width = table.getBoundingClientRect().width;
    if (width > room + 1) {
      const head = [...table.querySelectorAll("th")].map(th => th.textContent.trim()).slice(0, 3).join(" | ");
      const title = table.closest(".cell_output")?.querySelector("strong")?.textContent.trim()
        || table.querySelector("caption")?.textContent.trim() || head;
      wide.push(`${Math.round(width)} px in a ${Math.round(room)} px column: ${title.slice(0, 70)}`);
    }
  }
  return wide;
}"""


def _check_page(page, url: str, screenshot: Path, expected_glue: int | None) -> list[tuple[str, str]]:
    """Load one page in a fresh tab and return its problems as (rule, text)."""
    requests: list[str] = []
    console: list[str] = []
    page.on("request", lambda req: requests.append(req.url))
    page.on("console", lambda msg: console.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: console.append(f"uncaught {exc.name}: {exc.message}"))
    page.route(NETWORK_URL, lambda route: route.abort())
    page.goto(url, wait_until="load")
    page.evaluate(WAIT_JS, [MATHJAX_TIMEOUT_MS, IMAGE_TIMEOUT_MS])
    found = page.evaluate(INSPECT_JS)
    page.screenshot(path=str(screenshot), full_page=True)
    wide_tables = page.evaluate(TABLES_JS)

    problems = [("network", f"network request: {u}") for u in requests if not u.startswith(ALLOWED_SCHEMES)]
    problems += [("tex", f"raw TeX visible: ...{s}...") for s in found["texLeaks"][:5]]
    if found["untypesetMath"]:
        untypeset = f"{found['untypesetMath']} of {found['mathCount']} math elements not typeset by MathJax"
        problems.append(("tex", untypeset))
    problems += [("image", f"image did not load: {src}") for src in found["brokenImages"]]
    problems += [("error-output", f"error output: {e}") for e in found["errors"]]
    if expected_glue is not None and found["glueCount"] < expected_glue:
        problems.append(("glue", f"glued values: expected at least {expected_glue}, found {found['glueCount']}"))
    if found["emptyGlue"]:
        problems.append(("glue", f"{found['emptyGlue']} glued values are empty"))
    problems += [("console", f"console error: {c}") for c in dict.fromkeys(console)]
    problems += [("wide-code", f"code block {w}") for w in found["wideCode"]]
    problems += [("figure", f) for f in found["figures"]]
    problems += [("repr", f"raw repr in output: {r}") for r in found["reprs"]]
    problems += [("shown-setup", f"setup cell shown unfolded: {c}") for c in found["shownSetup"]]
    problems += [("wide-table", f"table {t}") for t in wide_tables]
    return problems


def _check_pages(
    html_dir: Path, screenshot_dir: Path, expected_glue: dict[str, int] | None
) -> Iterator[tuple[str, list[tuple[str, str]]]]:
    """Yield (page, [(rule, text)]) for every content page, then for expected pages that are missing."""
    from playwright.sync_api import sync_playwright

    expected_glue = expected_glue or {}
    chromium = find_chromium()
    if chromium is None:
        yield "(browser)", [("page", "no chromium found (apt-get install chromium)")]
        return
    pages = site_pages(html_dir)
    screenshot_dir.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = launch(pw)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.set_default_timeout(30_000)  # goto/screenshot: fail the page rather than hang
        try:
            for rel in pages:
                path = html_dir / rel
                if redirect := REDIRECT.search(path.read_text(encoding="utf-8", errors="replace")[:2000]):
                    # Only check the target exists: the target is itself one of the pages.
                    missing = not (path.parent / redirect[1]).is_file()
                    yield rel, [("page", f"redirects to missing page {redirect[1]}")] if missing else []
                    continue
                tab = context.new_page()
                try:
                    shot = screenshot_dir / screenshot_name(rel)
                    yield rel, _check_page(tab, path.resolve().as_uri(), shot, expected_glue.get(rel))
                except Exception as exc:  # a page that crashes the check is a failed page, not a crashed run
                    yield rel, [("page", f"check crashed: {exc}")]
                finally:
                    tab.close()
        finally:
            browser.close()
    for rel in sorted(set(expected_glue) - set(pages)):
        yield rel, [("page", "page missing from the built site")]


def check_site(html_dir: Path, screenshot_dir: Path, expected_glue: dict[str, int] | None = None) -> list[Problem]:
    """Check every page of the built site in a real browser; return problems (empty = pass).
    ``str(problem)`` reads 'page: what is wrong'; ``problem.rule`` is a key of RULES."""
    results = _check_pages(Path(html_dir), Path(screenshot_dir), expected_glue)
    return [Problem(rel, rule, text) for rel, problems in results for rule, text in problems]


def summary(problems: list[Problem]) -> str:
    """Problems counted per rule, then per page: what each rule finds across the site."""
    lines = []
    for rule in RULES:
        mine = [p for p in problems if p.rule == rule]
        pages = {p.page for p in mine}
        lines.append(f"{rule:13} {len(mine):4} problem(s) on {len(pages):3} page(s)  ({RULES[rule]})")
        lines += [f"{'':13} {sum(p.page == page for p in mine):4}  {page}" for page in sorted(pages)]
    return "\n".join(lines)


def parse_rules(text: str) -> frozenset[str]:
    """'wide-code,repr' -> the rules; an unknown name is an error naming the allowed ones."""
    rules = frozenset(r.strip() for r in text.split(",") if r.strip())
    if unknown := sorted(rules - set(RULES)):
        raise argparse.ArgumentTypeError(f"got {', '.join(unknown)}; allowed: {', '.join(RULES)}")
    return rules


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html_dir", type=Path)
    parser.add_argument("--screenshots", type=Path, required=True, help="folder for full-page PNGs")
    parser.add_argument("--expected-glue", type=Path, help="JSON file: {page path: minimum glued values}")
    parser.add_argument("--report-only", type=parse_rules, default=frozenset(),
                        help=f"rules reported without failing, comma-separated: {', '.join(RULES)}")
    args = parser.parse_args(argv)
    expected = json.loads(args.expected_glue.read_text()) if args.expected_glue else None

    all_problems = []
    for rel, problems in _check_pages(args.html_dir, args.screenshots, expected):
        print(f"{rel}: {'FAIL' if problems else 'OK'}", flush=True)
        all_problems += [Problem(rel, rule, text) for rule, text in problems]
    if all_problems:
        print(f"\n{len(all_problems)} problem(s):")
        print("\n".join(f"  [{p.rule}] {p}" for p in all_problems))
    print("\n" + summary(all_problems))
    return 1 if any(p.rule not in args.report_only for p in all_problems) else 0


if __name__ == "__main__":
    sys.exit(main())
