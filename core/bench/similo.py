"""Similo benchmark: relocate web elements after real website changes.

Reads the Similo replication-package format (Nass, Alégroth, Feldt et al.,
"Similo: A Similarity-based Web Element Locator", ACM TOSEM 2023; see
the replication package)::

    <dataset>/<App>/N.properties                  old_xpath=..., new_xpath=...
    <dataset>/<App>/target_widgets/*.properties   widgets of the OLD page
    <dataset>/<App>/candidate_widgets/*.properties widgets of the NEW page

Each widget becomes an :class:`~core.domain.ElementDescriptor` (targets) or
:class:`~core.domain.Candidate`; every target of a pair is resolved by
:func:`core.locate.resolve` against all candidates of its app.  A pick is
correct when its xpath equals ``new_xpath`` after removing ``[1]`` indexes
(the paper's "almost identical").  Geometry in the files is in CSS px of the
recorded page.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from core.domain import BBox, Candidate, ElementDescriptor
from core.locate import LEVELS, LocatorConfig, resolve
from core.locate.features import strip_indexes

__all__ = [
    "read_properties", "widget_descriptor", "AppData", "load_app", "load_dataset",
    "PairOutcome", "AppRow", "LevelRow", "FoldRow", "BenchReport", "run_similo_benchmark", "format_report",
    "SIMILO_REFERENCE", "site_folds",
]

#: Reference figures on the same 318 dev pairs, measured with the dataset when it was packaged:
#: a faithful port of Similo, weights 1.5/0.5, no abstention.
SIMILO_REFERENCE: Mapping[str, float] = {
    "pairs": 318, "located": 295, "wrong": 23, "abstained": 0, "accuracy": 295 / 318,
    "ms_per_target": 13.0,
}

_KEY_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_.\-]*)\s*[=:]\s?(.*)$")
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_UNICODE_ESC = re.compile(r"\\(u[0-9a-fA-F]{4}|.)")
_WS = re.compile(r"\s+")


def _unescape(value: str) -> str:
    def sub(m: re.Match[str]) -> str:
        s = m.group(1)
        if s[0] == "u" and len(s) == 5:
            return chr(int(s[1:], 16))
        return _ESCAPES.get(s, s)

    return _UNICODE_ESC.sub(sub, value) if "\\" in value else value


def read_properties(path: Path) -> dict[str, str]:
    """Parse a Java-properties file into a dict.

    ``key=value`` or ``key:value`` lines; ``#``/``!`` comments; backslash
    escapes and trailing-backslash continuations.  The package's writer did
    not escape multi-line values (class attributes spanning lines), so a line
    that does not start with ``key=`` continues the previous value (joined
    with a space).
    """
    out: dict[str, str] = {}
    last: str | None = None
    logical: list[str] = []
    pending = ""
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = pending + raw.lstrip() if pending else raw
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:  # an odd number of trailing backslashes continues the line
            pending = line[:-1]
            continue
        pending = ""
        logical.append(line)
    if pending:
        logical.append(pending)
    for line in logical:
        stripped = line.strip()
        if not stripped or stripped[0] in "#!":
            continue
        m = _KEY_LINE.match(line)
        if m:
            last = m.group(1)
            out[last] = _unescape(m.group(2))
        elif last is not None:
            out[last] = f"{out[last]} {_unescape(stripped)}".strip()
    return out


def _clean(text: str, limit: int = 200) -> str:
    return _WS.sub(" ", text).strip()[:limit]


def _num(props: Mapping[str, str], key: str) -> float | None:
    try:
        return float(props[key])
    except (KeyError, ValueError):
        return None


def widget_descriptor(props: Mapping[str, str]) -> ElementDescriptor:
    """Convert one Similo widget (properties) into an :class:`ElementDescriptor`.

    ``visible_text`` (else ``text``) becomes ``text``; the ``value`` of a
    submit/button input becomes its accessible ``name``; ``is_button=yes``
    gives role ``button``; ``x, y, width, height`` give the box (CSS px);
    ``neighbor_text*`` give the neighbours.  ``idxpath``, ``area`` and
    ``shape`` are derivable or have no slot and are dropped.
    """
    tag = props.get("tag", "").strip().lower()
    type_ = props.get("type", "").strip().lower()
    text = _clean(props.get("visible_text", "") or props.get("text", ""))
    name = ""
    if tag == "input" and type_ in ("submit", "button", "reset") and props.get("value", "").strip():
        name = _clean(props["value"])
    role = "button" if props.get("is_button", "").strip().lower() == "yes" else ""
    x, y, w, h = (_num(props, k) for k in ("x", "y", "width", "height"))
    bbox = BBox(x, y, w, h) if None not in (x, y, w, h) else None  # type: ignore[arg-type]
    neighbours: list[str] = []
    for key in ("neighbor_text_left", "neighbor_text_above", "neighbor_text_right",
                "neighbor_text_below", "neighbor_text"):
        v = _clean(props.get(key, ""))
        if v and v not in neighbours:
            neighbours.append(v)
    return ElementDescriptor(
        tag=tag,
        role=role,
        name=name,
        text=text,
        placeholder=_clean(props.get("placeholder", "")),
        id=props.get("id", "").strip(),
        name_attr=props.get("name", "").strip(),
        type=type_,
        classes=tuple(props.get("class", "").split()),
        href=props.get("href", "").strip(),
        alt=_clean(props.get("alt", "")),
        title=_clean(props.get("title", "")),
        xpath=props.get("xpath", "").strip(),
        bbox=bbox,
        neighbours=tuple(neighbours),
    )


@dataclass(frozen=True, slots=True)
class AppData:
    """One app of the dataset: its countable pairs, targets and candidates."""

    name: str
    pairs: tuple[tuple[str, str], ...]
    targets: Mapping[str, ElementDescriptor]
    candidates: tuple[Candidate, ...]


def _widgets(folder: Path) -> list[tuple[str, dict[str, str]]]:
    if not folder.is_dir():
        return []
    return [(p.stem, read_properties(p)) for p in sorted(folder.glob("*.properties"))]


def load_app(folder: Path) -> AppData:
    """Read one app folder; only pairs whose both xpaths have widgets count.

    Candidate widgets with the same xpath (a few apps recorded an element
    twice) are one element: the first file (by name) is kept.
    """
    targets: dict[str, ElementDescriptor] = {}
    for _, props in _widgets(folder / "target_widgets"):
        d = widget_descriptor(props)
        if d.xpath:
            targets.setdefault(d.xpath, d)
    cands: dict[str, Candidate] = {}
    for stem, props in _widgets(folder / "candidate_widgets"):
        d = widget_descriptor(props)
        key = d.xpath or stem
        if key not in cands:  # the same element recorded twice is one candidate
            cands[key] = Candidate(ref=f"{folder.name}:{stem}", descriptor=d)
    candidates = tuple(cands.values())
    cand_xpaths = set(cands)
    pair_files = sorted((p for p in folder.glob("*.properties") if p.stem.isdigit()), key=lambda p: int(p.stem))
    pairs = []
    for p in pair_files:
        props = read_properties(p)
        old, new = props.get("old_xpath", "").strip(), props.get("new_xpath", "").strip()
        if old in targets and new in cand_xpaths:
            pairs.append((old, new))
    return AppData(folder.name, tuple(pairs), targets, candidates)


def load_dataset(dataset: Path) -> list[AppData]:
    """Every app folder of ``dataset``, sorted by name."""
    dataset = Path(dataset)
    if not dataset.is_dir():
        raise FileNotFoundError(f"no Similo dataset folder at {dataset}")
    return [load_app(p) for p in sorted(dataset.iterdir()) if p.is_dir()]


@dataclass(frozen=True, slots=True)
class PairOutcome:
    """Result of one target: ``located`` (right), ``wrong`` or ``abstained``."""

    app: str
    old_xpath: str
    new_xpath: str
    outcome: str
    strategy: str
    picked_xpath: str
    score: float
    margin: float
    ms: float
    role_crossing: bool = False


@dataclass(frozen=True, slots=True)
class LevelRow:
    """Per chain level: targets it resolved right and wrong (R2)."""

    level: str
    located: int
    wrong: int


@dataclass(frozen=True, slots=True)
class FoldRow:
    """Counts over one fold of sites (leave-sites-out view; nothing is tuned per fold)."""

    fold: int
    apps: tuple[str, ...]
    pairs: int
    located: int
    wrong: int
    abstained: int


@dataclass(frozen=True, slots=True)
class AppRow:
    """Per-app counts."""

    app: str
    pairs: int
    located: int
    wrong: int
    abstained: int
    ms_per_target: float


@dataclass(frozen=True, slots=True)
class BenchReport:
    """Counts over all pairs of a dataset.

    Attributes
    ----------
    pairs, located, wrong, abstained : int
        Targets resolved right, wrong, or not at all (``located + wrong +
        abstained == pairs``).
    accuracy : float
        ``located / pairs`` (0..1).
    ms_per_target : float
        Mean time of :func:`core.locate.resolve` per target, ms.
    apps : tuple[AppRow, ...]
        Per-app rows (apps with no countable pair are left out).
    outcomes : tuple[PairOutcome, ...]
        Every pair's result, for analysis.
    by_strategy : Mapping[str, tuple[int, int]]
        ``strategy -> (located, wrong)``.
    margin : float
        The locator margin used.
    dataset : str
        Dataset folder.
    levels : tuple[LevelRow, ...]
        One row per chain level, in chain order (levels that resolved
        nothing included).
    role_crossing : int
        Picks whose role differs from the target's (a heal that crossed
        roles because every other attribute agreed).
    folds : tuple[FoldRow, ...]
        Per fold of sites, when asked for (``folds=K``).
    """

    pairs: int
    located: int
    wrong: int
    abstained: int
    accuracy: float
    ms_per_target: float
    apps: tuple[AppRow, ...] = ()
    outcomes: tuple[PairOutcome, ...] = ()
    by_strategy: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    margin: float = 0.0
    dataset: str = ""
    levels: tuple[LevelRow, ...] = ()
    role_crossing: int = 0
    folds: tuple[FoldRow, ...] = ()

    def to_json_dict(self) -> dict[str, Any]:
        """``{"pairs", "located", "wrong", "abstained", "accuracy", "ms_per_target", "levels",
        "role_crossing"}`` plus ``"folds"`` when folds were asked for.

        ``levels`` is ``[{"level", "located", "wrong"}]`` in chain order;
        ``folds`` is ``[{"fold", "apps", "pairs", "located", "wrong", "abstained"}]``.
        """
        out: dict[str, Any] = {
            "pairs": self.pairs,
            "located": self.located,
            "wrong": self.wrong,
            "abstained": self.abstained,
            "accuracy": round(self.accuracy, 4),
            "ms_per_target": round(self.ms_per_target, 3),
            "levels": [{"level": r.level, "located": r.located, "wrong": r.wrong} for r in self.levels],
            "role_crossing": self.role_crossing,
        }
        if self.folds:
            out["folds"] = [{"fold": f.fold, "apps": list(f.apps), "pairs": f.pairs, "located": f.located,
                             "wrong": f.wrong, "abstained": f.abstained} for f in self.folds]
        return out


def site_folds(apps: Sequence[str], k: int) -> list[tuple[str, ...]]:
    """Split app names into ``k`` folds of sites: sorted, then dealt round-robin (fixed, no tuning).

    Raises
    ------
    ValueError
        When ``k < 2``.
    """
    if k < 2:
        raise ValueError(f"folds must be at least 2, got {k}")
    names = sorted(apps)
    return [tuple(names[i::k]) for i in range(k) if names[i::k]]


def run_similo_benchmark(dataset: Path, *, config: LocatorConfig | None = None, folds: int = 0) -> BenchReport:
    """Resolve every countable pair of ``dataset`` and count the outcomes.

    Parameters
    ----------
    dataset : Path
        Folder with one sub-folder per app in the Similo format.
    config : LocatorConfig, optional
        Locator settings; None: ``LocatorConfig()`` (the R2 defaults).
    folds : int
        When >= 2, also count per fold of sites (:func:`site_folds`) - the
        same locator on every fold, to see how much the figures spread
        between groups of sites (a leave-sites-out view of generalisation).

    Returns
    -------
    BenchReport
        Located / wrong / abstained counts, accuracy (located / pairs) and
        mean ms per target (time spent inside :func:`~core.locate.resolve`).
    """
    if config is None:
        config = LocatorConfig()
    outcomes: list[PairOutcome] = []
    rows: list[AppRow] = []
    for app in load_dataset(Path(dataset)):
        if not app.pairs:
            continue
        by_ref = {c.ref: c for c in app.candidates}
        app_out: list[PairOutcome] = []
        for old, new in app.pairs:
            res = resolve(app.targets[old], app.candidates, config=config)
            if res.abstained or res.ref is None:
                kind, picked = "abstained", ""
            else:
                picked = by_ref[res.ref].descriptor.xpath
                kind = "located" if strip_indexes(picked) == strip_indexes(new) else "wrong"
            app_out.append(PairOutcome(app.name, old, new, kind, res.strategy, picked,
                                       res.score, res.margin, res.ms, res.role_crossing))
        outcomes.extend(app_out)
        rows.append(AppRow(
            app.name, len(app_out),
            sum(o.outcome == "located" for o in app_out),
            sum(o.outcome == "wrong" for o in app_out),
            sum(o.outcome == "abstained" for o in app_out),
            sum(o.ms for o in app_out) / len(app_out),
        ))
    n = len(outcomes)
    located = sum(o.outcome == "located" for o in outcomes)
    wrong = sum(o.outcome == "wrong" for o in outcomes)
    by_strategy: dict[str, tuple[int, int]] = {}
    for o in outcomes:
        if o.outcome == "abstained":
            continue
        a, b = by_strategy.get(o.strategy, (0, 0))
        by_strategy[o.strategy] = (a + (o.outcome == "located"), b + (o.outcome == "wrong"))
    levels = tuple(LevelRow(name, *by_strategy.get(name, (0, 0))) for name in LEVELS if name in config.strategies)
    fold_rows: list[FoldRow] = []
    if folds:
        for i, names in enumerate(site_folds([r.app for r in rows], folds), start=1):
            sel = [o for o in outcomes if o.app in names]
            fold_rows.append(FoldRow(i, names, len(sel), sum(o.outcome == "located" for o in sel),
                                     sum(o.outcome == "wrong" for o in sel),
                                     sum(o.outcome == "abstained" for o in sel)))
    return BenchReport(
        pairs=n, located=located, wrong=wrong, abstained=n - located - wrong,
        accuracy=located / n if n else 0.0,
        ms_per_target=sum(o.ms for o in outcomes) / n if n else 0.0,
        apps=tuple(rows), outcomes=tuple(outcomes), by_strategy=by_strategy,
        margin=config.margin, dataset=str(dataset), levels=levels,
        role_crossing=sum(o.role_crossing for o in outcomes if o.outcome != "abstained"),
        folds=tuple(fold_rows),
    )


def _pct(k: float, n: int) -> str:
    return f"{100.0 * k / n:5.1f}%" if n else "  -  "


def format_report(report: BenchReport) -> str:
    """Printable table: per app, totals, and the published Similo reference line."""
    n = report.pairs
    lines = [
        f"Similo benchmark - {report.dataset} ({len(report.apps)} apps, {n} pairs), "
        f"locator margin {report.margin:.2f}",
        "",
        f"{'app':<14}{'pairs':>6}{'located':>9}{'wrong':>7}{'abstained':>11}{'ms/target':>11}",
    ]
    for r in report.apps:
        lines.append(f"{r.app:<14}{r.pairs:>6}{r.located:>9}{r.wrong:>7}{r.abstained:>11}{r.ms_per_target:>11.2f}")
    lines.append("")
    head = f"{'locator':<44}{'located':>15}{'wrong pick':>15}{'abstained':>15}{'accuracy':>10}{'ms/target':>11}"
    lines.append(head)
    lines.append("-" * len(head))
    lines.append(
        f"{'Steadyhand chain (this run)':<44}"
        f"{report.located:>6} ({_pct(report.located, n)})"
        f"{report.wrong:>6} ({_pct(report.wrong, n)})"
        f"{report.abstained:>6} ({_pct(report.abstained, n)})"
        f"{_pct(report.located, n):>10}{report.ms_per_target:>11.2f}"
    )
    ref = SIMILO_REFERENCE
    rn = int(ref["pairs"])
    lines.append(
        f"{'Similo, published reference (same 318 pairs)':<44}"
        f"{int(ref['located']):>6} ({_pct(ref['located'], rn)})"
        f"{int(ref['wrong']):>6} ({_pct(ref['wrong'], rn)})"
        f"{int(ref['abstained']):>6} ({_pct(ref['abstained'], rn)})"
        f"{_pct(ref['located'], rn):>10}{'~13 (Py)':>11}"
    )
    if report.levels:
        lines.append("")
        lines.append(f"{'level':<14}{'located':>9}{'wrong':>7}")
        for lv in report.levels:
            lines.append(f"{lv.level:<14}{lv.located:>9}{lv.wrong:>7}")
        lines.append(f"{'abstained':<14}{report.abstained:>9}")
        lines.append(f"role-crossing picks: {report.role_crossing}")
    if report.folds:
        lines.append("")
        lines.append(f"leave-sites-out view: {len(report.folds)} folds of sites, nothing tuned per fold")
        lines.append(f"{'fold':<6}{'apps':>5}{'pairs':>7}{'located':>16}{'wrong':>14}{'abstained':>11}")
        accs = []
        for f in report.folds:
            lines.append(f"{f.fold:<6}{len(f.apps):>5}{f.pairs:>7}{f.located:>7} ({_pct(f.located, f.pairs)})"
                         f"{f.wrong:>5} ({_pct(f.wrong, f.pairs)}){f.abstained:>11}")
            if f.pairs:
                accs.append(100.0 * f.located / f.pairs)
        if accs:
            lines.append(f"located per fold: min {min(accs):.1f}%, max {max(accs):.1f}%, "
                         f"spread {max(accs) - min(accs):.1f} points")
    lines.append("Similo reference: faithful port of the published weights (1.5/0.5), no abstention, "
                 "measured on the same 318 pairs when the dataset was packaged.")
    return "\n".join(lines)
