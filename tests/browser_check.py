"""Real-browser check of the built static site.

Opens every content page of a built Jupyter Book in headless system Chromium
(driven by playwright; playwright's own browser download is not used) and
reports what a reader would see going wrong: network requests (the site must
work offline), math left as raw TeX, broken images, error output from
notebook cells, and glued numbers that did not make it into the page.  A
full-page screenshot of every page is saved for a human to look at.

Usage:  python tests/browser_check.py HTML_DIR --screenshots DIR
            [--expected-glue JSON_FILE]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

# Sphinx's own non-content pages, and its asset folders.
SKIP_FILES = {"genindex.html", "search.html"}
SKIP_DIRS = {"_static", "_sources", "_images"}

ALLOWED_SCHEMES = ("file:", "data:", "blob:", "about:")
# Any other URL is aborted before it leaves the browser, and reported.
NETWORK_URL = re.compile(f"^(?!{'|'.join(ALLOWED_SCHEMES)})")

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


def find_chromium() -> str | None:
    """Path of the system Chromium (Debian package `chromium`), or None."""
    if Path("/usr/bin/chromium").is_file():
        return "/usr/bin/chromium"
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if path := shutil.which(name):
            return path
    return None


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

WAIT_JS = """async ([mathjaxMs, imageMs]) => {
  const timeout = ms => new Promise(resolve => setTimeout(resolve, ms));
  // MathJax 3 typesets after load; startup.promise settles when it is done.
  // If MathJax never loaded (e.g. its CDN request was blocked) there is no promise.
  const promise = window.MathJax?.startup?.promise;
  if (promise) await Promise.race([promise.catch(() => {}), timeout(mathjaxMs)]);
  const imgs = [...document.images];
  imgs.forEach(img => { img.loading = "eager"; });  // lazy images off-screen never load otherwise
  await Promise.race([Promise.all(imgs.map(img => img.decode().catch(() => {}))), timeout(imageMs)]);
}"""

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

  return {texLeaks, untypesetMath, mathCount: math.length, brokenImages, errors,
          glueCount: glue.length, emptyGlue};
}"""


def _check_page(page, url: str, screenshot: Path, expected_glue: int | None) -> list[str]:
    """Load one page in a fresh tab and return its problems."""
    requests: list[str] = []
    page.on("request", lambda req: requests.append(req.url))
    page.route(NETWORK_URL, lambda route: route.abort())
    page.goto(url, wait_until="load")
    page.evaluate(WAIT_JS, [MATHJAX_TIMEOUT_MS, IMAGE_TIMEOUT_MS])
    found = page.evaluate(INSPECT_JS)
    page.screenshot(path=str(screenshot), full_page=True)

    problems = [f"network request: {u}" for u in requests if not u.startswith(ALLOWED_SCHEMES)]
    problems += [f"raw TeX visible: ...{s}..." for s in found["texLeaks"][:5]]
    if found["untypesetMath"]:
        problems.append(f"{found['untypesetMath']} of {found['mathCount']} math elements not typeset by MathJax")
    problems += [f"image did not load: {src}" for src in found["brokenImages"]]
    problems += [f"error output: {e}" for e in found["errors"]]
    if expected_glue is not None and found["glueCount"] < expected_glue:
        problems.append(f"glued values: expected at least {expected_glue}, found {found['glueCount']}")
    if found["emptyGlue"]:
        problems.append(f"{found['emptyGlue']} glued values are empty")
    return problems


def _check_pages(
    html_dir: Path, screenshot_dir: Path, expected_glue: dict[str, int] | None
) -> Iterator[tuple[str, list[str]]]:
    """Yield (page, problems) for every content page, then for expected pages that are missing."""
    from playwright.sync_api import sync_playwright

    expected_glue = expected_glue or {}
    chromium = find_chromium()
    if chromium is None:
        yield "(browser)", ["no chromium found (apt-get install chromium)"]
        return
    pages = site_pages(html_dir)
    screenshot_dir.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        # --no-sandbox: Chromium refuses to start its sandbox as root (we run as root in CI).
        browser = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.set_default_timeout(30_000)  # goto/screenshot: fail the page rather than hang
        try:
            for rel in pages:
                path = html_dir / rel
                if redirect := REDIRECT.search(path.read_text(encoding="utf-8", errors="replace")[:2000]):
                    # Only check the target exists: the target is itself one of the pages.
                    missing = not (path.parent / redirect[1]).is_file()
                    yield rel, [f"redirects to missing page {redirect[1]}"] if missing else []
                    continue
                tab = context.new_page()
                try:
                    shot = screenshot_dir / screenshot_name(rel)
                    yield rel, _check_page(tab, path.resolve().as_uri(), shot, expected_glue.get(rel))
                except Exception as exc:  # a page that crashes the check is a failed page, not a crashed run
                    yield rel, [f"check crashed: {exc}"]
                finally:
                    tab.close()
        finally:
            browser.close()
    for rel in sorted(set(expected_glue) - set(pages)):
        yield rel, ["page missing from the built site"]


def check_site(html_dir: Path, screenshot_dir: Path, expected_glue: dict[str, int] | None = None) -> list[str]:
    """Check every page of the built site in a real browser; return problems (empty = pass)."""
    results = _check_pages(Path(html_dir), Path(screenshot_dir), expected_glue)
    return [f"{rel}: {p}" for rel, problems in results for p in problems]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("html_dir", type=Path)
    parser.add_argument("--screenshots", type=Path, required=True, help="folder for full-page PNGs")
    parser.add_argument("--expected-glue", type=Path, help="JSON file: {page path: minimum glued values}")
    args = parser.parse_args(argv)
    expected = json.loads(args.expected_glue.read_text()) if args.expected_glue else None

    all_problems = []
    for rel, problems in _check_pages(args.html_dir, args.screenshots, expected):
        print(f"{rel}: {'FAIL' if problems else 'OK'}", flush=True)
        all_problems += [f"{rel}: {p}" for p in problems]
    if all_problems:
        print(f"\n{len(all_problems)} problem(s):")
        print("\n".join(f"  {p}" for p in all_problems))
    return 1 if all_problems else 0


if __name__ == "__main__":
    sys.exit(main())
