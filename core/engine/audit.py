"""Secrets audit: look for the declared secrets' values everywhere a project keeps data (architecture rule 7).

:func:`audit_project` scans

- every file under the project folder (flows, crops, the run-data folder
  ``.steadyhand/`` with its SQLite store and its journal/WAL files, media,
  recording journals, anything sent to a model that was archived there) and
  any extra paths given (exports, reports, JUnit files written elsewhere),
  byte by byte, so a value left in a freed page of the database is found
  too;
- the store table by table, column by column, to say *where* a value is
  (``steps.error, row 12``);
- the value a flow types in clear (not a ``{name}``) into a password field - its type is ``password``, or
  its accessible name, label, placeholder, id or selector names a password in any language
  (:func:`core.secrets.looks_like_password`): that value is looked for everywhere like a declared
  secret's, under the name ``clear value typed into 'Mot de passe' (flow f, step s3)``, so the flow file
  itself is a finding (:func:`clear_password_values`);
- every PNG's text chunks, and the regions the engine masked on its
  screenshots (listed by :func:`core.secrets.mask_boxes_png` in the PNG's
  ``steadyhand:masks`` chunk): a masked region must be one solid colour.

Each value is looked for in the forms it leaks in (:func:`_forms`): as is,
URL-encoded (``%40`` and ``+``, once and twice), JSON-, HTML- and
XML-escaped, hex, UTF-16, base32, base64 at each of its three alignments
(inside a longer encoded text such as ``user:password``) in both alphabets,
and the hex and base64 of its unsalted digests (MD5, SHA-1, SHA-2, SHA-3,
BLAKE2): a digest of a password is cracked with a word list.  Values shorter
than :data:`core.secrets.MIN_SUBSTRING_LENGTH` (3 chars) cannot be searched
for without matching everything: they are reported as not audited.
Symbolic links are not followed (a link out of the project is reported, not
read).  Nothing is written.
"""
from __future__ import annotations

import base64
import hashlib
import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence
from urllib.parse import quote, quote_plus

from core.progress import counted
from core.project import Project
from core.secrets import MASKS_CHUNK, MIN_SUBSTRING_LENGTH, MissingSecretError, looks_like_password, resolve_secret

__all__ = ["Finding", "AuditReport", "declared_secrets", "clear_password_values", "audit_project", "audit_paths",
           "MASKS_CHUNK"]

#: Files are read in blocks of this many bytes (with an overlap as long as the longest pattern).
_BLOCK = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Finding:
    """One place a secret was found.

    Attributes
    ----------
    where : str
        A path relative to the project (or absolute for an extra path),
        with ``: table.column, row N`` for a store cell, ``: PNG chunk K`` or ``: member`` of a zip
        (a Playwright trace).
    secret : str
        The secret's declared name (never its value).
    form : str
        ``clear``, ``url-encoded``, ``url-encoded twice``, ``json-escaped``,
        ``html-escaped``, ``hex``, ``utf-16``, ``base32``, ``base64``,
        ``base64url``, ``<algorithm> digest`` (``sha256 digest``), ``unmasked region`` for a masked screenshot region
        that is not solid, or ``member too large to read`` for a zip member over :data:`ZIP_MEMBER_LIMIT`.
    """

    where: str
    secret: str
    form: str

    def __str__(self) -> str:
        if self.form == "unmasked region":
            return f"{self.where}: a masked region is not solid (something shows through)"
        return f"{self.where}: secret {self.secret!r} ({self.form})"


@dataclass
class AuditReport:
    """What was scanned and what was found; ``clean`` when nothing was found."""

    secrets: list[str] = field(default_factory=list)
    not_audited: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    excluded: list[str] = field(default_factory=list)
    files: int = 0
    store_cells: int = 0
    screenshots: int = 0
    masked_regions: int = 0
    skipped_links: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.findings

    def lines(self) -> list[str]:
        """The report as printed by ``steadyhand audit``: findings first, then the summary line."""
        out = [str(f) for f in self.findings]
        out += [f"{name}: shorter than {MIN_SUBSTRING_LENGTH} characters, not audited" for name in self.not_audited]
        out += [f"{name}: no value (environment, keyring or default), not audited" for name in self.unresolved]
        out += [f"{where}: the app under test's own data, not audited" for where in self.excluded]
        out += [f"{link}: a symbolic link, not followed" for link in self.skipped_links]
        what = (f"{self.files} files ({self.screenshots} screenshots, {self.masked_regions} masked regions), "
                f"{self.store_cells} store cells, for {counted(len(self.secrets), 'secret')}")
        verdict = "nothing found" if self.clean else f"{counted(len(self.findings), 'finding')}"
        out.append(f"Audited {what}: {verdict}.")
        return out


def declared_secrets(project: Project) -> tuple[dict[str, str], list[str]]:
    """The values of the secrets the project and its flows declare, name -> value, and the names without one.

    Values come from where a run takes them (:func:`core.secrets.resolve_secret`:
    environment, keyring, default).
    """
    names = list(project.settings.secrets)
    for flow in project.flows.values():
        names += [n for n in flow.secrets if n not in names]
    values: dict[str, str] = {}
    missing: list[str] = []
    for name in names:
        spec = project.settings.secrets.get(name)
        try:
            values[name] = resolve_secret(name, project=project.name, default=spec.default if spec else None)
        except MissingSecretError:
            missing.append(name)
    return values, missing


def clear_password_values(project: Project) -> dict[str, str]:
    """Values typed in clear into password fields by the project's flows: a label naming the field, flow and
    step -> the value as typed (``{{`` read as ``{``).  A ``{name}`` value, and one shorter than
    :data:`MIN_SUBSTRING_LENGTH`, is not one (the first is a parameter or secret, the second not searchable)."""
    from core.project.params import placeholders

    out: dict[str, str] = {}
    for flow in project.flows.values():
        for st in flow.steps:
            value = st.action.value or ""
            if st.action.kind != "input" or placeholders(value):
                continue
            value = value.replace("{{", "{").replace("}}", "}")
            t = st.target
            if len(value) < MIN_SUBSTRING_LENGTH:
                continue
            if (t.type or "").lower() == "password" or looks_like_password(
                    t.name or "", t.label or "", t.placeholder or "", t.id or "", t.name_attr or "", st.selector or ""):
                field_name = t.name or t.label or t.placeholder or st.selector or "?"
                out[f"clear value typed into {field_name!r} (flow {flow.name}, step {st.id})"] = value
    return out


#: Digests a secret is looked for by (``hashlib`` names): an unsalted digest of a password is cracked offline
#: with a word list as easily as the clear text is read (issue 21 item 5).
_DIGESTS = ("md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3_256", "blake2b", "blake2s")


#: Shortest base64 slice looked for (characters): 6 carry 36 bits of the secret, too many for chance matches in
#: megabytes of screenshots.
_MIN_SLICE = 6


def _b64_slices(raw: bytes) -> list[tuple[str, str]]:
    """The base64 texts that ``raw`` shows as wherever it sits in a longer encoded text: for each of the 3
    alignments, the characters that depend on ``raw`` alone (``user:password`` base64-encoded in a Basic
    header holds none of ``password``'s own base64 text, but one of these)."""
    out = []
    for lead in range(3):
        enc = base64.b64encode(b"\0" * lead + raw).decode()
        start = (lead * 8 + 5) // 6  # first character made of ``raw``'s bits only
        usable = (len(raw) + lead) // 3 * 4  # complete groups: no padding, no bits of what follows
        text = enc[start:usable]
        if lead == 0:
            out.append(("base64", enc))
            out.append(("base64", enc.rstrip("=")))
        if len(text) >= _MIN_SLICE:
            out.append(("base64", text))
            out.append(("base64url", text.replace("+", "-").replace("/", "_")))
    return out


def _forms(value: str) -> list[tuple[str, bytes]]:
    """(form, bytes) of every way ``value`` is looked for: as is, URL-encoded (``quote``, ``quote_plus``,
    twice), JSON-, HTML- and XML-escaped, as hex, UTF-16, base64 at every alignment (and its URL-safe
    alphabet), base32, and the hex and base64 of its unsalted digests (:data:`_DIGESTS`)."""
    raw = value.encode("utf-8")
    forms = [("clear", value), ("url-encoded", quote(value, safe="")), ("url-encoded", quote_plus(value)),
             ("url-encoded", quote(value, safe="@:/")), ("url-encoded twice", quote(quote(value, safe=""), safe="")),
             ("json-escaped", json.dumps(value)[1:-1]), ("json-escaped", json.dumps(value, ensure_ascii=False)[1:-1]),
             ("html-escaped", html.escape(value)), ("html-escaped", html.escape(value, quote=False)),
             ("html-escaped", "".join(f"&#{ord(c)};" for c in value)),
             ("hex", raw.hex()), ("hex", raw.hex().upper()),
             ("base32", base64.b32encode(raw).decode().rstrip("="))]
    forms += _b64_slices(raw)
    for name in _DIGESTS:
        d = hashlib.new(name, raw).digest()
        forms += [(f"{name} digest", d.hex()), (f"{name} digest", d.hex().upper()),
                  (f"{name} digest", base64.b64encode(d).decode().rstrip("=")),
                  (f"{name} digest", base64.urlsafe_b64encode(d).decode().rstrip("="))]
    seen: set[bytes] = set()
    out = []
    for form, text in forms:
        b = text.encode("utf-8")
        if b not in seen:
            seen.add(b)
            out.append((form, b))
    for form, enc in (("utf-16", "utf-16-le"), ("utf-16", "utf-16-be")):
        b = value.encode(enc)
        if b not in seen and len(value) >= MIN_SUBSTRING_LENGTH:
            seen.add(b)
            out.append((form, b))
    return out


class SecretPatterns:
    """Every form (:func:`_forms`) of each secret value, searched in bytes: the audit's and the trace
    scrubber's check (:func:`core.engine.trace.scrub_trace`)."""

    def __init__(self, secrets: Mapping[str, str]) -> None:
        self.items = [(name, form, b) for name, value in secrets.items() for form, b in _forms(value)]
        self.longest = max((len(b) for _, _, b in self.items), default=1)

    def find(self, data: bytes) -> list[tuple[str, str]]:
        """(name, form) of each pattern found in ``data``, once per secret (the first form that matches)."""
        hits: list[tuple[str, str]] = []
        names: set[str] = set()
        for name, form, b in self.items:
            if name not in names and b in data:
                names.add(name)
                hits.append((name, form))
        return hits

    def find_in_file(self, path: Path) -> list[tuple[str, str]]:
        hits: dict[str, str] = {}
        tail = b""
        with open(path, "rb") as fh:
            while True:
                block = fh.read(_BLOCK)
                if not block:
                    break
                for name, form in self.find(tail + block):
                    hits.setdefault(name, form)
                tail = block[-(self.longest - 1):] if self.longest > 1 else b""
        return list(hits.items())


def _rel(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _walk(path: Path, report: AuditReport, root: Path) -> Iterable[Path]:
    if path.is_symlink():
        report.skipped_links.append(_rel(path, root))
        return
    if path.is_file():
        yield path
        return
    if not path.is_dir():
        return
    for child in sorted(path.iterdir()):
        yield from _walk(child, report, root)


def _audit_png(path: Path, where: str, patterns: SecretPatterns, report: AuditReport) -> None:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as img:
            img.load()
            info = {k: v for k, v in img.info.items() if isinstance(v, str)}
            rgb = img.convert("RGB")
    except (OSError, UnidentifiedImageError, ValueError):
        return  # not a readable image: its bytes were scanned as a file
    report.screenshots += 1
    for key, text in info.items():
        if key == MASKS_CHUNK:
            continue
        for name, form in patterns.find(text.encode("utf-8")):
            report.findings.append(Finding(f"{where}: PNG chunk {key}", name, form))
    try:
        rects = json.loads(info.get(MASKS_CHUNK, "[]"))
    except json.JSONDecodeError:
        rects = []
    import numpy as np

    pixels = np.asarray(rgb)
    for rect in rects if isinstance(rects, list) else []:
        try:
            x0, y0, x1, y1 = (int(v) for v in rect)
        except (TypeError, ValueError):
            continue
        region = pixels[max(0, y0):max(0, y1), max(0, x0):max(0, x1)]
        if region.size == 0:
            continue
        report.masked_regions += 1
        if not (region == region.reshape(-1, 3)[0]).all():
            report.findings.append(Finding(f"{where}: masked region {x0},{y0}-{x1},{y1}", "", "unmasked region"))


#: Bytes of one zip member read at most (a Playwright trace's members are a few MB; a bigger one is listed
#: unread rather than inflated into memory).
ZIP_MEMBER_LIMIT = 64 * 1024 * 1024


def _audit_zip(path: Path, where: str, patterns: SecretPatterns, report: AuditReport) -> None:
    """Search each member of a zip (a Playwright trace, an exported report) for the secrets, uncompressed."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                if info.is_dir():
                    continue
                if info.file_size > ZIP_MEMBER_LIMIT:
                    report.findings.append(Finding(f"{where}: {info.filename}", "", "member too large to read"))
                    continue
                for name, form in patterns.find(z.read(info)):
                    report.findings.append(Finding(f"{where}: {info.filename}", name, form))
    except (OSError, zipfile.BadZipFile, RuntimeError, EOFError):
        return  # not a readable zip: its bytes were scanned as a file


def _audit_store(db: Path, where: str, patterns: SecretPatterns, report: AuditReport) -> None:
    from core.store.cells import text_cells

    for name, col, n, data in text_cells(db):
        report.store_cells += 1
        for secret, form in patterns.find(data):
            report.findings.append(Finding(f"{where}: {name}.{col}, row {n}", secret, form))


def audit_paths(paths: Sequence[Path], secrets: Mapping[str, str], *, root: Path,
                exclude: Iterable[Path] = ()) -> AuditReport:
    """Audit files and folders for ``secrets`` (name -> value); ``where`` is given relative to ``root``.

    Files in ``exclude`` (the app under test's own data) are left out and
    listed in :attr:`AuditReport.excluded`.  Never raises for unreadable
    files (they are skipped and not counted).
    """
    report = AuditReport(secrets=sorted(secrets))
    skip = {Path(p).absolute() for p in exclude}
    usable = {n: v for n, v in secrets.items() if len(v) >= MIN_SUBSTRING_LENGTH}
    report.not_audited = sorted(set(secrets) - set(usable))
    patterns = SecretPatterns(usable)
    for top in paths:
        for path in _walk(Path(top), report, root):
            where = _rel(path, root)
            if path.absolute() in skip:
                report.excluded.append(where)
                continue
            try:
                hits = patterns.find_in_file(path) if usable else []
            except OSError:
                continue
            report.files += 1
            store_hits = []
            if path.suffix == ".sqlite" and usable:
                before = len(report.findings)
                _audit_store(path, where, patterns, report)
                store_hits = report.findings[before:]
            if path.suffix.lower() == ".png":
                before = len(report.findings)
                _audit_png(path, where, patterns, report)
                store_hits += report.findings[before:]
            if path.suffix.lower() == ".zip" and usable:
                before = len(report.findings)
                _audit_zip(path, where, patterns, report)
                store_hits += report.findings[before:]
            # found in the file: name the cell or PNG chunk when one holds it, else the file (e.g. a freed page)
            named = {f.secret for f in store_hits}
            report.findings += [Finding(where, n, form) for n, form in hits if n not in named]
    return report


def audit_project(project: Project, *, extra: Sequence[Path] = ()) -> AuditReport:
    """Audit a project's folder (and ``extra`` paths) for its declared secrets' values."""
    from core.project.loader import SETTINGS_FILE

    secrets, missing = declared_secrets(project)
    secrets = {**secrets, **clear_password_values(project)}  # a password typed in clear is looked for too
    from core.sites.adapters import site_data_files

    report = audit_paths([project.root, *extra], secrets, root=project.root, exclude=site_data_files(project))
    report.unresolved = sorted(missing)
    # a secret's declared default sits in the project file by the user's choice (a public demo value): not a leak
    defaults = {n for n, spec in project.settings.secrets.items() if spec.default is not None
                and secrets.get(n) == spec.default}
    report.findings = [f for f in report.findings if not (f.where == SETTINGS_FILE and f.secret in defaults)]
    return report
