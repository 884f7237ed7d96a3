"""How much of the article the claims registry covers, measured sentence by sentence.

The registry (``claims/*.yaml``) is written by hand, so nothing but a count against the text says
which of the article's figures it has left out. This module splits each text into sentences, keeps
the ones that state a number, and asks of each whether a registered claim covers it:

- ``sentences(version)``: the sentences of "en" (the English translation), "zh" (the Chinese
  original) or "trends" (the companion note, Chinese only), each with its line and article section;
- ``numeric(sentence)``: it states a figure once names that hold digits (K3, V3.2, H200, FP8,
  GPT-5.6, ...; ``NAMES``) and a list marker ("1.", "Step 4:") are taken out;
- ``covers(claim, sentence)``: the claim is printed in that version, its section is the sentence's,
  and its stated figure is one of the sentence's figures in a form the article prints it;
- ``report()``: per version, the numeric sentences, those covered, those exempt (``exempt.yaml``,
  each with a reason from ``REASONS``) and the rest, uncovered, by line, section and locator.

The matching rule of ``covers``. A sentence's figures are its digit runs not glued to a letter
(so "H200" holds none), with thousands separators dropped ("4,390" is 4390), and with what is
glued after them: a scale (K, M, B, T; 万, 亿; "80 万" is 800,000), "%" or a ratio sign (x, ×, 倍).
The word forms "one-million"/"million" and a standalone 百万 or 万 count as 1e6 and 1e4. A claim's
figure is the absolute value of ``stated`` (the article prints "-5" with a dash that may be a
minus or a hyphen) compared as a decimal, so "2.0" matches "2" and "3.00" matches "3" (trailing
zeros do not make a different figure). A figure matches the claim when:

- it carries a scale: its value times the scale equals the claim's figure in SI ("500K" for 500
  "K tokens", "2.8T" for 2.8 "TB" or 2.8 "T params", "10K" and "万" for 10000 "requests");
- it carries "%": the claim's unit is "%"; it carries a ratio sign: the claim's unit is "x";
- it is bare: it equals the claim's figure, or the figure in SI ("~7,800" for 7.8 "K entries");
  except that a claim counted in thousands, millions, ... of something (``SUFFIXED_UNITS``: "K
  tokens", "B params", ...) needs the scale printed, since the article always prints one there
  (a bare "1" is not "1M tokens", a bare "128" not "128K").

Why this rule: matching the printed digits as a substring is too loose ("1" is in "128", "2.8" in
"2.85"), and matching only the exact printed form is too tight (the registry drops separators and
records "~7,800" in thousands). Requiring the section as well keeps a small figure ("1", "2") from
covering every sentence that happens to print it; the cost is that a figure repeated in a later
section is not covered there, which is what the exemption "repeat of a registered figure" is for,
and that exemption is validated: every figure of such a sentence must match a claim of the same
version in some section. What a figure counts, read from the word after it ("24 MLA layers",
"141 GB"), must agree with the claim's unit where both say ("24 layers" does not cover "24 h", "122
KB" not "122 TB", "2 nodes" not a "2x"). Checked by hand on the covered sentences whose claims are
all small figures (where a wrong match is likeliest) and on a sample of the rest (the tests hold
some): the rule finds every registered figure the article prints in digits in its section
(``unfound`` lists the rest: figures printed in words, "halved", "three task domains"); with
small figures ("1", "3") a sentence may be covered by several claims where only one is meant.

A sentence is covered when one claim covers it, even if it prints other figures too; ``report``
lists the figures of covered sentences that no claim of the version registers in any section
(``partial``), so a half-registered sentence stays visible.

The article's text is not in this repository: it is read from ``../shared/article/`` beside it
(or ``$TWOPATHS_ARTICLE``). The exemptions name a sentence by its line and its first words only.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from pathlib import Path

import yaml

from . import SCALE, VERSIONS, Claim, all_claims

REPO = Path(__file__).resolve().parents[3]
ARTICLE = Path(os.environ.get("TWOPATHS_ARTICLE", REPO.parent / "shared" / "article"))
TEXTS = {"en": "two-paths.en.txt", "zh": "two-paths.zh.txt", "trends": "architecture-trends.zh.txt"}
TEXT_VERSIONS = tuple(TEXTS)                  # "trends" is a text, not a claim version: it is zh
EXEMPT = Path(__file__).parent / "sentences" / "exempt.yaml"
TRENDS = "Trends note"                        # the prefix of the companion note's claim sections

# The section a line starts, by the start of its header line, in each text; what comes before the
# first header is the introduction. The names on the right are the claims' ``section`` strings
# where claims are registered; part openings ("I. K3") and the note's parts that hold no claim
# get names in the same style. A header is a sentence too (and "Attention: 69 Layers ..." states
# figures), so it belongs to the section it opens.
HEADERS = {
    "en": {
        "I. K3:": "I. K3",
        "Attention: 69 Layers": "I. Attention",
        "The Conditionality of NoPE": "I. The conditionality of NoPE",
        "Hardware Adaptation:": "I. Hardware adaptation",
        "Stable LatentMoE: Taming": "I. Stable LatentMoE",
        "II. DSV4:": "II. DSV4",
        "CSA + HCA: Magnifying": "II. CSA + HCA",
        "Residual and Routing:": "II. mHC and engineering details",
        "The Intellectual Angle:": "II. What each path lost",
        "Post-Training Headroom:": "II. Post-training headroom",
        "Su Jianlin's Observation:": "II. DSV4 never abandoned MLA",
        "III. The Engineering": "III. Engineering",
        "KV Cache: The Fork": "III. KV Cache",
        "GPU Requirements:": "III. GPU requirements",
        "Deployment Architecture:": "III. Deployment: hardware basis",
        "Step 1:": "III. Deployment step 1: parallelism",
        "Step 2:": "III. Deployment step 2: EP scale",
        "Step 3:": "III. Deployment step 3: PD disaggregation",
        "Step 4:": "III. Deployment step 4: D-node concurrency",
        "Step 5:": "III. Deployment step 5: HiCache offload",
        "B300: single-card": "III. Deployment on B300",     # no header: the paragraph opens it
        "50ms TTFT:": "III. 50 ms TTFT",
        "B300: K3's Hard": "III. B300: K3's hard threshold",
        "Mitigation Measures": "III. Mitigation measures",
        "Unit Inference Cost": "III. Unit inference cost",
        "IV. Assessment": "IV. Assessment",
        "---": "Data sources",
    },
    "zh": {
        "一、K3：": "I. K3",
        "注意力：69 层": "I. Attention",
        "NoPE 的条件性": "I. The conditionality of NoPE",
        "硬件适配：": "I. Hardware adaptation",
        "Stable LatentMoE：": "I. Stable LatentMoE",
        "二、DSV4：": "II. DSV4",
        "CSA + HCA：": "II. CSA + HCA",
        "残差和路由：": "II. mHC and engineering details",
        "智能化角度：": "II. What each path lost",
        "后训练提升空间：": "II. Post-training headroom",
        "苏剑林的观察：": "II. DSV4 never abandoned MLA",
        "三、架构代价": "III. Engineering",
        "KV Cache：两条路": "III. KV Cache",
        "GPU 需求：": "III. GPU requirements",
        "部署架构：": "III. Deployment: hardware basis",
        "第一步：": "III. Deployment step 1: parallelism",
        "第二步：": "III. Deployment step 2: EP scale",
        "第三步：": "III. Deployment step 3: PD disaggregation",
        "第四步：": "III. Deployment step 4: D-node concurrency",
        "第五步：": "III. Deployment step 5: HiCache offload",
        "B300 单卡 288 GB": "III. Deployment on B300",
        "50ms TTFT：": "III. 50 ms TTFT",
        "B300：K3 的硬门槛": "III. B300: K3's hard threshold",
        "缓解手段": "III. Mitigation measures",
        "单位推理成本": "III. Unit inference cost",
        "四、判断": "IV. Assessment",
        "数据来源：苏剑林": "Data sources",          # the zh list of sources has no rule before it
    },
    "trends": {
        "一、模型大小": f"{TRENDS}: I. Model size",
        "二、FFN/MoE": f"{TRENDS}: II. FFN/MoE",
        "三、注意力": f"{TRENDS}: III. Attention",
        "四、投机采样": f"{TRENDS}: IV. Speculative decoding",
        "五、残差流": f"{TRENDS}: V. Residual stream",
        "小结": f"{TRENDS}: summary",
        "附：主流模型架构对比": f"{TRENDS}: appendix table",
    },
}
FIRST_SECTION = {"en": "Introduction", "zh": "Introduction", "trends": f"{TRENDS}: introduction"}

# Names that hold digits and state no figure: models and their versions (K3, V3.2, DSV4, GPT-5.6,
# Qwen3.5, GLM-5.2, Step 3.5, Opus 4.8, Fable 5, MoonViT-V2), GPUs and memories (H100, H200, B300,
# GB300, HBM3e, NVLink 4), number formats (FP8, BF16, MXFP4, NVFP4), cache tiers (L1-L3), a
# benchmark's or an index's version (Terminal Bench 2.1, AA v4.1), a release named by its date
# (Flash 0731), a report's table and an arXiv id. Removed before a sentence's figures are read.
NAMES = [
    r"\b(?:DSV|GB|V|K|H|B|A|L)\d+(?:\.\d+)?",       # K3, V3.2, DSV4, H200, B300, GB300, L1
    r"\bv\d+(?:\.\d+)?",                            # AA v4.1
    r"\b(?:MX|NV)?FP\d+|\bBF16",                    # FP8, FP4, MXFP4, NVFP4, BF16
    r"\bHBM\d+e?|\bNVLink \d+",
    r"\b(?:GPT|GLM)-\d+(?:\.\d+)?|\bQwen\d+(?:\.\d+)?|\bMoonViT-V\d+",
    r"\b(?:Step|Opus|Fable) \d+(?:\.\d+)?(?! ?[:：])",   # Step 3.5 Flash; not "Step 4:", a header
    r"\bTerminal Bench \d+(?:\.\d+)?|\bFlash 0731|\bTable \d+|\barXiv:\d+\.\d+",
]
NAME = re.compile("|".join(NAMES))
# A list marker or a header's ordinal at a sentence's start: "1.", "- ", "•", "Step 4:", "第四步".
LIST_MARKER = re.compile(r"^\s*(?:\d{1,2}\.(?=\s|$)|Step \d+:|[-•](?=\s|$))")
# A date (2026-07-27, 2026-07, "August 6, 2026"): the exemption "date" must hold only these.
DATE = re.compile(r"\b\d{4}-\d{2}(?:-\d{2})?\b|\b(?:January|February|March|April|May|June|July|August|"
                  r"September|October|November|December) \d{1,2}, \d{4}\b|\d{4} ?年|\d{1,2} ?[月日]")

SCALES = {"K": 10**3, "M": 10**6, "B": 10**9, "T": 10**12, "万": 10**4, "亿": 10**8}
FIGURE = re.compile(
    r"(?<![A-Za-z0-9_.])(\d{1,3}(?:,\d{3})+(?![\d,])|\d+)(\.\d+)?"
    r"(?:(?P<scale>[KMBT](?![A-Za-z])| ?[万亿])|(?P<pct>%)|(?P<ratio>[x×](?![\w(])| ?倍))?")
WORDS = re.compile(r"\b(?:one-)?million\b|百万|万")    # a figure in words: 1e6, or 1e4 for 万
# Units whose figures the article always prints with a scale ("1M", "49B", "500K").
SUFFIXED_UNITS = {"M params", "B params", "T params", "K tokens", "M tokens", "K entries"}

# What a figure counts, read from the word after it (past a classifier 个 and up to two short
# capitalised words: "24 MLA layers", "580 D nodes"), and the same for a claim's unit. A figure
# that counts one thing never matches a claim that counts another ("24 layers" is not "24 h"); a
# figure or a unit with no such word (a ratio, a score, "1 compressed entry") is not constrained.
FAMILY_WORDS = {
    "bandwidth": r"[GT][Bb]/s",
    "speed": r"tokens/s",
    "bytes": r"(?:[kKMGTP]i?B|bytes?)(?![A-Za-z]|/s)",
    "time": r"(?:ms|s|seconds?|hours?|秒|小时)(?![A-Za-z/])",
    "tokens": r"tokens?(?![A-Za-z/])",
    "layers": r"layers?\b|层",
    "heads": r"(?:attention )?heads?\b|(?:注意力)?头",
    "dims": r"dims?\b|维",
    "experts": r"(?:(?:routing|shared|always-on shared) )?experts?\b|(?:路由|共享)?专家",
    "GPUs": r"cards?\b|GPUs?\b|卡|张",
    "nodes": r"nodes?\b|节点",
    "requests": r"requests?\b|请求",
    "entries": r"entry\b|entries\b|条目",
    "units": r"(?:deployment )?units?\b|(?:部署)?单元",
}
AFTER = re.compile(r"[\s-]*(?:个\s*)?(?:(?:[A-Z]{1,5}|dense|Gated)\s+){0,2}(?:"
                   + "|".join(f"(?P<{k}>{v})" for k, v in FAMILY_WORDS.items()) + ")")
UNIT_FAMILY = {**{u: "bytes" for u in ("B", "kB", "MB", "GB", "TB", "PB", "KiB", "MiB", "GiB", "TiB")},
               "GB/s": "bandwidth", "TB/s": "bandwidth", "Gb/s": "bandwidth", "tokens/s": "speed",
               "s": "time", "ms": "time", "h": "time", "tokens": "tokens", "K tokens": "tokens",
               "M tokens": "tokens", "K entries": "entries",
               **{u: u for u in ("layers", "heads", "dims", "experts", "GPUs", "nodes", "requests", "entries",
                                 "units")}}
# Within bytes, time and bandwidth the printed unit must be the claim's too ("122 KB" is not 122 TB).
EXACT_FAMILIES = {"bytes", "time", "bandwidth"}
CANONICAL = {"KB": "kB", "byte": "B", "bytes": "B", "seconds": "s", "second": "s", "秒": "s", "hour": "h",
             "hours": "h", "小时": "h", "Kb/s": "kb/s"}
# A ratio or a share ("x", "%") is never printed as a measure: "2 nodes" is not "2x". A count of
# layers, tokens or experts can be (the article writes "1 layer after every 3", "8-select-2").
MEASURES = {"bytes", "bandwidth", "time", "speed", "GPUs", "nodes", "requests", "units"}

EN_BREAK = re.compile(r"[.!?;:]")
ZH_BREAK = re.compile(r"[。！？；：!?]")
CLOSERS = {'"': None, "'": None, "”": "", "’": "", "」": "", ")": "(", "]": "[", "）": "（"}
ABBREVIATIONS = ("e.g.", "i.e.", "vs.", "etc.", "cf.")

# Why a numeric sentence holds nothing to register; ``exemptions`` refuses any other reason.
REASONS = {
    "date": "its only figures are dates or years",
    "name": "its digits belong to a name NAMES does not list",
    "repeat of a registered figure": "every figure is a claim of this version in another section",
    "quotation of a formula already registered": "a formula whose every figure is registered",
    "question": "it asks, and states no figure of its own",
    "illustration": "an example value chosen to show a point, not a property of a model",
}
# The reasons whose every figure must match a registered claim of the version (any section).
REPEATS = {"repeat of a registered figure", "quotation of a formula already registered"}


@dataclass(frozen=True)
class Sentence:
    version: str      # "en", "zh" or "trends"
    line: int         # 1-based line of the text
    section: str      # the claims' section string (or a part's name where no claim is registered)
    text: str


@dataclass(frozen=True)
class Figure:
    text: str         # as printed, e.g. "4,390", "500K", "75%"
    value: Decimal    # the digits, separators dropped
    kind: str         # "" (bare), "scale", "%", "x", or "date" (part of a date: matches no claim)
    scale: int = 1    # what a "scale" figure's value is multiplied by
    family: str | None = None   # what it counts, from the word after it (``FAMILY_WORDS``)
    unit: str | None = None     # the unit printed, for the families in ``EXACT_FAMILIES``


@cache
def text(version: str) -> str:
    """The text of one version (see ``TEXTS``), read from the article folder."""
    if version not in TEXTS:
        raise ValueError(f"version {version!r} is not one of {TEXT_VERSIONS}")
    return (ARTICLE / TEXTS[version]).read_text(encoding="utf-8")


def _closes(piece: str, ch: str) -> bool:
    """``ch`` after ``piece`` closes a quote or bracket the piece opened: a straight quote when the
    piece holds an odd number of them (the article uses '"' both ways), a bracket when one is open."""
    opener = CLOSERS[ch]
    if opener is None:
        return piece.count(ch) % 2 == 1
    return not opener or piece.count(opener) > piece.count(ch)


def split(line: str, version: str = "en") -> list[str]:
    """One line cut into sentences: English on . ! ? ; : followed by a space or the line's end (so
    "2.8T", "3:1" and "arXiv:2602" stay whole, and "e.g." does not end one), Chinese (zh, trends) on
    。！？；：; a quote or bracket that the sentence opened and that closes right after it stays with
    it. A Chinese table row is one sentence."""
    en = version == "en"
    if not en and line.lstrip().startswith("|"):
        return [line.strip()] if line.strip() else []
    out, start = [], 0
    for m in (EN_BREAK if en else ZH_BREAK).finditer(line):
        if m.start() < start:
            continue
        end = m.end()
        while end < len(line) and line[end] in CLOSERS and _closes(line[start:end], line[end]):
            end += 1
        if en and (end < len(line) and not line[end].isspace()
                   or line[max(0, m.end() - 5):m.end()].lower().endswith(ABBREVIATIONS)):
            continue
        out.append(line[start:end])
        start = end
    out.append(line[start:])
    return [s.strip() for s in out if s.strip()]


def sections(version: str) -> list[str]:
    """The section of each line of the text (index 0 is line 1), from ``HEADERS``."""
    current, out = FIRST_SECTION[version], []
    for line in text(version).splitlines():
        for start, name in HEADERS[version].items():
            if line.startswith(start):
                current = name
                break
        out.append(current)
    return out


@cache
def sentences(version: str) -> tuple[Sentence, ...]:
    """Every sentence of a version, in order, with its line and section."""
    tags = sections(version)
    return tuple(Sentence(version, i, tags[i - 1], s)
                 for i, line in enumerate(text(version).splitlines(), start=1) for s in split(line, version))


def scrub(sentence: str) -> str:
    """The sentence with its names (``NAMES``) and a leading list marker replaced by "§" (not a
    space: the "s" of "H100s" must not read as seconds after the figure before it)."""
    return NAME.sub("§", LIST_MARKER.sub("§", sentence))


def _after(s: str, end: int) -> tuple[str | None, str | None]:
    """The family and (for ``EXACT_FAMILIES``) the unit of what follows a figure ending at ``end``."""
    m = AFTER.match(s, end)
    if not m:
        return None, None
    word = m.group(m.lastgroup)
    return m.lastgroup, CANONICAL.get(word, word) if m.lastgroup in EXACT_FAMILIES else None


def figures(sentence: str | Sentence) -> list[Figure]:
    """The figures a sentence states, in order, once names and a list marker are removed."""
    s = scrub(sentence.text if isinstance(sentence, Sentence) else sentence)
    dates = [m.span() for m in DATE.finditer(s)]
    out, taken = [], []
    for m in FIGURE.finditer(s):
        value = Decimal(m.group(1).replace(",", "") + (m.group(2) or ""))
        family, unit = _after(s, m.end())
        if any(a <= m.start() < b for a, b in dates):
            out.append(Figure(m.group(0), value, "date"))
        elif m.group("scale"):
            out.append(Figure(m.group(0), value, "scale", SCALES[m.group("scale").strip()], family, unit))
        else:
            kind = "%" if m.group("pct") else "x" if m.group("ratio") else ""
            # a share or a ratio says what it is: "5.0x GPU gap" is not a count of GPUs
            out.append(Figure(m.group(0), value, kind, 1, *((family, unit) if not kind else (None, None))))
        taken.append(m.span())
    for m in WORDS.finditer(s):
        if not any(a <= m.start() < b for a, b in taken):     # "80 万" is already a figure
            out.append(Figure(m.group(0), Decimal(1), "scale", 10**4 if m.group(0) == "万" else 10**6,
                              *_after(s, m.end())))
    return out


def numeric(sentence: str | Sentence) -> bool:
    """True when the sentence states a figure once names and a list marker are removed."""
    return bool(figures(sentence))


def in_version(claim: Claim, version: str) -> bool:
    """The claim is printed in that text: en or zh for the article (not the note's claims), the
    note's claims (section "Trends note: ...", printed in Chinese) for "trends"."""
    note = claim.section.startswith(TRENDS)
    if version == "trends":
        return note and "zh" in claim.versions
    return not note and version in claim.versions


def matches(claim: Claim, fig: Figure) -> bool:
    """The figure is the claim's stated figure in one of the forms the article prints (module doc)."""
    stated = abs(Decimal(claim.stated))
    si = stated * Decimal(str(SCALE.get(claim.unit, 1)))
    family = UNIT_FAMILY.get(claim.unit)
    if fig.kind == "date" or (fig.family and family and fig.family != family):
        return False
    if fig.unit and family in EXACT_FAMILIES and fig.unit != claim.unit:
        return False
    if claim.unit in ("x", "%") and fig.family in MEASURES:
        return False
    if fig.kind == "scale":
        return fig.value * fig.scale == si
    if fig.kind == "%":
        return claim.unit == "%" and fig.value == stated
    if fig.kind == "x":
        return claim.unit == "x" and fig.value == stated
    return (fig.value == stated and claim.unit not in SUFFIXED_UNITS) or fig.value == si


def covers(claim: Claim, sentence: Sentence) -> bool:
    """The claim is printed in the sentence's version, in its section, and one of the sentence's
    figures is the claim's (its stated figure, or one it lists as ``printed``: a ratio recorded from two
    printed contexts prints neither as its value)."""
    return (in_version(claim, sentence.version) and claim.section == sentence.section
            and (any(matches(claim, f) for f in figures(sentence))
                 or any(p in sentence.text for p in claim.printed)))


def locator(sentence: str, version: str = "en", words: int = 8, chars: int = 16) -> str:
    """The first words of a sentence (``words`` words of English, ``chars`` characters of a Chinese
    text): enough to find it on its line, short enough not to copy the article."""
    if version != "en":
        return sentence[:chars].strip()
    return " ".join(sentence.split()[:words])


@dataclass(frozen=True)
class Exemption:
    version: str
    line: int
    locator: str
    reason: str
    note: str = ""


def exempt_sentence(ex: Exemption) -> Sentence:
    """The one sentence an exemption names: on its line, starting with its locator."""
    found = [s for s in sentences(ex.version) if s.line == ex.line and s.text.startswith(ex.locator)]
    if len(found) != 1:
        raise ValueError(f"exemption {ex.version}:{ex.line} {ex.locator!r} names {len(found)} sentences")
    return found[0]


def load_exemptions(data) -> list[Exemption]:
    """Exemptions from the layout of ``exempt.yaml``: version -> reason -> [line, locator(, note)]."""
    if not isinstance(data, dict):
        raise ValueError("exemptions: expected a mapping of version -> reason -> [line, locator] lists")
    items = []
    for version, by_reason in data.items():
        for reason, rows in (by_reason or {}).items():
            for row in rows:
                if not isinstance(row, list) or len(row) not in (2, 3):
                    raise ValueError(f"exemption {version}/{reason}: {row!r} is not [line, locator(, note)]")
                items.append(Exemption(version, *row[:2], reason, *row[2:]))
    return items


def check_exemptions(items: list[Exemption]) -> tuple[Exemption, ...]:
    """The exemptions, each checked: a known version and reason, a short locator (at most 8 words,
    or 20 characters of Chinese) that names exactly one numeric sentence, no sentence named twice."""
    seen = set()
    for ex in items:
        where = f"exemption {ex.version}:{ex.line} {ex.locator!r}"
        if ex.version not in TEXTS or ex.reason not in REASONS:
            raise ValueError(f"{where}: version must be one of {TEXT_VERSIONS}, "
                             f"reason one of {list(REASONS)}")
        longest = 60 if ex.version == "en" else 20
        if not ex.locator or len(ex.locator.split()) > 8 or len(ex.locator) > longest:
            raise ValueError(f"{where}: a locator is the first few words (at most 8), not the sentence")
        s = exempt_sentence(ex)
        if ex.locator == s.text and len(s.text) > 30:
            raise ValueError(f"{where}: the locator is the whole sentence; keep its first words")
        if not numeric(s) or s in seen:
            raise ValueError(f"{where}: not a numeric sentence, or exempt twice")
        seen.add(s)
    return tuple(items)


@cache
def exemptions(path: Path = EXEMPT) -> tuple[Exemption, ...]:
    """The checked exemptions of ``exempt.yaml``."""
    return check_exemptions(load_exemptions(yaml.safe_load(path.read_text(encoding="utf-8"))))


def unregistered(sentence: Sentence, claims: dict[str, Claim] | None = None) -> list[Figure]:
    """The sentence's figures that match no claim of its version, whatever the claim's section."""
    pool = [c for c in (claims or all_claims()).values() if in_version(c, sentence.version)]
    return [f for f in figures(sentence) if not any(matches(c, f) for c in pool)]


@dataclass(frozen=True)
class Uncovered:
    line: int
    section: str
    locator: str
    figures: tuple[str, ...]      # as printed


@dataclass(frozen=True)
class VersionCoverage:
    version: str
    numeric: int                          # numeric sentences
    covered: int                          # covered by at least one claim
    exempt: tuple[tuple[str, int], ...]   # (reason, count), reasons in ``REASONS`` order
    uncovered: tuple[Uncovered, ...]
    partial: tuple[Uncovered, ...]        # covered, but printing figures (not dates) no claim has
    stale: tuple[Exemption, ...]          # exempt sentences a claim now covers: drop them
    unfound: tuple[str, ...]              # ids of this version's claims that cover no sentence

    @property
    def exempt_total(self) -> int:
        return sum(n for _, n in self.exempt)

    @property
    def coverage(self) -> float:
        """Covered over the numeric sentences that are not exempt."""
        return self.covered / (self.numeric - self.exempt_total) if self.numeric > self.exempt_total else 1.0

    @property
    def coverage_all(self) -> float:
        """Covered over every numeric sentence."""
        return self.covered / self.numeric if self.numeric else 1.0


@dataclass(frozen=True)
class Coverage:
    versions: tuple[VersionCoverage, ...]

    def __getitem__(self, version: str) -> VersionCoverage:
        return next(v for v in self.versions if v.version == version)


def version_coverage(version: str, claims: dict[str, Claim],
                     exempt: tuple[Exemption, ...]) -> VersionCoverage:
    """One text's coverage: each numeric sentence is covered, exempt or uncovered (in that order,
    so a covered sentence that is also exempt counts as covered and its exemption as stale)."""
    pool = [c for c in claims.values() if in_version(c, version)]
    named = {exempt_sentence(e): e for e in exempt if e.version == version}
    covered, reasons, uncovered, partial, stale = 0, Counter(), [], [], []
    for s in filter(numeric, sentences(version)):
        mine = [c for c in pool if covers(c, s)]
        row = Uncovered(s.line, s.section, locator(s.text, version), ())
        if mine:
            covered += 1
            rest = [f.text for f in unregistered(s, claims) if f.kind != "date"]
            if rest:
                partial.append(Uncovered(row.line, row.section, row.locator, tuple(rest)))
            if s in named:
                stale.append(named[s])
        elif s in named:
            reasons[named[s].reason] += 1
        else:
            uncovered.append(Uncovered(row.line, row.section, row.locator, tuple(f.text for f in figures(s))))
    found = {c.id for s in filter(numeric, sentences(version)) for c in pool if covers(c, s)}
    return VersionCoverage(version, covered + sum(reasons.values()) + len(uncovered), covered,
                           tuple((r, reasons[r]) for r in REASONS if reasons[r]), tuple(uncovered),
                           tuple(partial), tuple(stale), tuple(c.id for c in pool if c.id not in found))


def report(claims: dict[str, Claim] | None = None, exempt: tuple[Exemption, ...] | None = None) -> Coverage:
    """The coverage of every text by the registry (``all_claims()``) and ``exempt.yaml``."""
    claims = all_claims() if claims is None else claims
    exempt = exemptions() if exempt is None else exempt
    return Coverage(tuple(version_coverage(v, claims, exempt) for v in TEXT_VERSIONS))


def as_text(cov: Coverage, partial: bool = False) -> str:
    """The report as lines: each version's counts, then its uncovered sentences (and, if asked, the
    covered ones that print figures their claims do not)."""
    out = []
    for v in cov.versions:
        ex = ", ".join(f"{n} {r}" for r, n in v.exempt) or "none"
        out += [f"{v.version}: {v.numeric} numeric sentences, {v.covered} covered, {v.exempt_total} exempt "
                f"({ex}), {len(v.uncovered)} uncovered; coverage {v.coverage:.0%} of the non-exempt, "
                f"{v.coverage_all:.0%} of all"]
        out += [f"  line {u.line:>3}  [{u.section}]  {u.locator} ...  figures: {', '.join(u.figures)}"
                for u in v.uncovered]
        if partial:
            out += [f"  partly covered, line {u.line:>3}  [{u.section}]  {u.locator} ...  not covered: "
                    f"{', '.join(u.figures)}" for u in v.partial]
        out += [f"  stale exemption: line {e.line} {e.locator!r} is covered now" for e in v.stale]
        if v.unfound:
            out.append(f"  claims found in no sentence of their section: {', '.join(v.unfound)}")
    return "\n".join(out)


assert set(VERSIONS) <= set(TEXTS)
