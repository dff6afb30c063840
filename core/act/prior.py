"""Reversibility before acting (S6): may an agent that was not allowed to write try this action?

:mod:`core.act.writes` judges an action *after* it ran, by the requests it
sent.  An explorer (or any decider choosing its own actions) must judge
*before*: this module says whether an action on a candidate is surely
front-end only.  When unsure, the answer is "irreversible" (a wrong click
is the worst outcome there is).

Surely reversible:

- typing into a field, choosing an option, ticking a box (front-end state
  until something submits it);
- a link to a page (``href`` that is not ``javascript:``), unless it is
  named like a write or a sign-out;
- a control whose role says it only shows things: tab, menu item, option,
  tree item, switch, checkbox, radio, a disclosure (``summary``);
- a button named like navigation or display only (Cancel, Close, Back,
  Next, Previous, Show, Hide, Expand, Collapse, Sort, Filter, Menu, More,
  Details, Help, Search...) or styled as one (classes ``sort``, ``tab``,
  ``toggle``, ``nav``, ``close``, ``page``).

Everything else is treated as irreversible: a ``type=submit`` button, a
control named like a write (Submit, Save, Delete, Approve, Send, Sign in,
Log out, Pay, Export...), a confirming button of a dialog (OK, Yes,
Confirm, Continue), and any other button it knows nothing about.
"""
from __future__ import annotations

import re

from core.domain import Candidate

__all__ = ["WRITE_WORDS", "SAFE_WORDS", "judge_reversible"]

#: Words of a control that writes, sends or ends a session (whole words, case-insensitive).
WRITE_WORDS = ("submit", "save", "send", "delete", "remove", "approve", "reject", "confirm", "pay", "buy", "order",
               "sign in", "sign out", "log in", "log out", "login", "logout", "register", "sign up", "create",
               "update", "apply", "publish", "post", "upload", "export", "import", "reset", "unlock", "lock",
               "archive", "cancel request", "accept", "decline", "transfer", "book", "ok", "yes", "continue", "done",
               "finish", "purge", "clear all", "unsubscribe", "subscribe")
#: Words of a control that only navigates or shows things.
SAFE_WORDS = ("cancel", "close", "back", "next", "previous", "prev", "show", "hide", "expand", "collapse", "sort",
              "filter", "menu", "more", "less", "details", "help", "search", "view", "open", "month", "today",
              "page", "tab", "toggle", "dismiss")
_SAFE_ROLES = frozenset({"tab", "menuitem", "option", "treeitem", "switch", "checkbox", "radio", "menuitemcheckbox",
                         "menuitemradio"})
_SAFE_CLASSES = ("sort", "tab", "toggle", "nav", "close", "page")
_VALUE_KINDS = frozenset({"input", "select", "check", "uncheck", "hover", "scroll", "wait", "assert", "screenshot"})


def _has(words: tuple[str, ...], text: str) -> str:
    for w in words:
        if re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", text):
            return w
    return ""


def judge_reversible(kind: str, cand: Candidate | None) -> tuple[bool, str]:
    """``(reversible, why)`` of doing ``kind`` on ``cand`` before it is done (see the module doc).

    Returns
    -------
    (bool, str)
        True only when the action is surely front-end only; ``why`` names the
        evidence in a few words ("a link", "named like a write ('Delete')",
        "unsure: a button that says nothing").
    """
    if kind in _VALUE_KINDS:
        return True, f"{kind} changes only the page"
    if kind not in ("click", "dblclick", "press"):
        return False, f"unsure: {kind}"
    if cand is None:
        return False, "unsure: no target"
    d = cand.descriptor
    name = " ".join((d.label_text or d.name or d.text or d.title or "").lower().split())
    write = _has(WRITE_WORDS, name)
    if d.type == "submit":
        return False, "a submit button"
    if write:
        return False, f"named like a write ({write!r})"
    role = d.role or d.tag
    if (d.tag == "a" or role == "link") and d.href and not d.href.lower().startswith("javascript:"):
        return True, "a link"
    if role in _SAFE_ROLES or d.tag == "summary":
        return True, f"a {role}"
    safe = _has(SAFE_WORDS, name)
    if safe:
        return True, f"named like navigation ({safe!r})"
    cls = next((c for c in d.classes for s in _SAFE_CLASSES if s in c.lower()), "")
    if cls:
        return True, f"styled as navigation (class {cls!r})"
    return False, f"unsure: a {role or 'control'} that says nothing of what it does"
