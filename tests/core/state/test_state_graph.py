"""The state graph (P4): one node per distinct state, loops, volatile text, and its store round trip."""
from __future__ import annotations

import io
from pathlib import Path

from PIL import Image, ImageDraw

from core.state.graph import (
    StateGraph, StateSeen, Transition, dhash_distance, first_repeat, flow_graph_name, layered_layout, stable_layout,
    target_summary,
)
from core.state.signature import light_signature
from core.store import GraphTable, Store


def _raw(url: str, heading: str, buttons: tuple[str, ...], extra: str = "") -> dict:
    items = [{"tag": "button", "role": "button", "text": b, "name": b, "value": "", "checked": None} for b in buttons]
    return {"url": url, "title": heading, "items": items, "text": f"{heading} {' '.join(buttons)} {extra}",
            "modals": [], "loading": False, "errors": 0, "focus": ""}


def _png(blocks: int, *, clock: str = "") -> bytes:
    img = Image.new("RGB", (320, 200), "white")
    d = ImageDraw.Draw(img)
    for i in range(blocks):
        d.rectangle([10 + i * 60, 40, 50 + i * 60, 160], fill=(30 + 40 * i, 60, 120))
    if clock:
        d.text((280, 5), clock, fill="black")
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


LOGIN = ("http://127.0.0.1:8000/login", "Sign in", ("Sign in",))
HOME = ("http://127.0.0.1:8000/", "Home", ("New request", "Sign out"))
FORM = ("http://127.0.0.1:8000/requests/new", "New request", ("Submit", "Cancel"))


def seen(page: tuple, *, blocks: int = 1, extra: str = "", clock: str = "") -> StateSeen:
    return StateSeen.of(light_signature(_raw(*page, extra=extra)), screenshot_png=_png(blocks, clock=clock),
                        screenshot=f"screenshots/r/{page[1]}.png")


def tr(a: StateSeen, b: StateSeen, kind: str, label: str, step: str, verdict: str = "as_expected",
       start: bool = False) -> Transition:
    return Transition(a, b, kind, target_summary("button", label), step, verdict, run_id="r1", start=start)


def test_one_node_per_distinct_state_and_counts() -> None:
    g = StateGraph(flow_graph_name("leave"))
    login, home, form = seen(LOGIN, blocks=1), seen(HOME, blocks=2), seen(FORM, blocks=3)
    c1 = g.add(tr(login, login, "fill", "User name", "s1", start=True))
    assert c1.new_source and c1.edge.self_loop and c1.new_edge
    g.add(tr(login, home, "click", "Sign in", "s2"))
    g.add(tr(home, form, "click", "New request", "s3"))
    change = g.add(tr(form, home, "click", "Cancel", "s4"))
    assert len(g) == 3
    assert {n.title for n in g.nodes()} == {"Sign in", "Home", "New request"}
    assert change.revisit and g.node(home.key).visits == 2 and g.node(login.key).visits == 1
    assert [n.title for n in g.revisited()] == ["Home"]
    assert len(g.self_loops()) == 1 and g.self_loops()[0].kind == "fill"
    # the same action again counts on the same edge, with its verdicts
    again = g.add(tr(form, home, "click", "Cancel", "s4", verdict="unchanged"))
    assert not again.new_edge and again.edge.count == 2
    assert dict(again.edge.verdicts) == {"as_expected": 1, "unchanged": 1} and again.edge.last_verdict == "unchanged"
    assert again.edge.label == 'click button "Cancel" x2'
    assert len(g.edges()) == 4


def test_a_loop_is_detected() -> None:
    g = StateGraph("explore:/")
    login, home, form = seen(LOGIN, blocks=1), seen(HOME, blocks=2), seen(FORM, blocks=3)
    g.add(tr(login, home, "click", "Sign in", "s1", start=True))
    g.add(tr(home, form, "click", "New request", "s2"))
    assert g.loops() == []
    g.add(tr(form, home, "click", "Cancel", "s3"))
    loops = g.loops()
    assert len(loops) == 1 and set(loops[0]) == {home.key, form.key}
    assert {(e.source, e.target) for e in g.loop_edges()} == {(home.key, form.key), (form.key, home.key)}
    g.add(tr(home, home, "scroll", "", "s4"))
    assert [home.key] in g.loops()
    path = [login.key, home.key, form.key, home.key]
    assert first_repeat(path) == 3 and first_repeat(path[:3]) is None


def test_volatile_text_and_a_few_pixels_do_not_split_a_state() -> None:
    g = StateGraph("flow:x")
    a = seen(HOME, blocks=2, extra="request 3f2b1c9e-0d4a-4b7e-9a10-2c6f1e8d7a55 at 2026-01-02T10:11:12Z",
             clock="10:11")
    b = seen(HOME, blocks=2, extra="request 9aa0b3de-77aa-4c1d-8e21-55c0ffee0001 at 2026-03-04T22:33:44Z",
             clock="22:33")
    assert a.structure == b.structure
    assert (dhash_distance(a.dhash, b.dhash) or 0) <= 6
    form = seen(FORM, blocks=3)
    g.add(tr(a, form, "click", "New request", "s1", start=True))
    g.add(tr(form, b, "click", "Cancel", "s2"))
    assert len(g) == 2 and g.identify(b) == a.key
    # different visible text is another state
    other = seen(HOME, blocks=2, extra="3 requests pending")
    assert g.identify(other) is None


def test_layout_is_stable_between_updates() -> None:
    g = StateGraph("flow:x")
    login, home, form = seen(LOGIN, blocks=1), seen(HOME, blocks=2), seen(FORM, blocks=3)
    g.add(tr(login, home, "click", "Sign in", "s1", start=True))
    p1 = stable_layout(g)
    assert p1 == stable_layout(g)
    g.add(tr(home, form, "click", "New request", "s2"))
    p2 = stable_layout(g, p1)
    assert set(p2) == {login.key, home.key, form.key}
    assert all(-1.0001 <= v <= 1.0001 for xy in p2.values() for v in xy)


def test_store_round_trip_in_sqlite(tmp_path: Path) -> None:
    db = tmp_path / ".steadyhand" / "store.sqlite"
    name = flow_graph_name("leave")
    login, home, form = seen(LOGIN, blocks=1), seen(HOME, blocks=2), seen(FORM, blocks=3)
    steps = [tr(login, home, "click", "Sign in", "s1", start=True), tr(home, form, "click", "New request", "s2"),
             tr(form, home, "click", "Cancel", "s3", verdict="changed_unexpectedly")]
    memory = StateGraph(name)
    with Store.open(db) as store:
        table = GraphTable(store)
        for t in steps:
            stored = table.add_transition(name, t)
            mem = memory.add(t)
            assert (stored.new_source, stored.new_target, stored.new_edge) == (mem.new_source, mem.new_target,
                                                                               mem.new_edge)
        # a later run adds to the same graph; volatile pixels still match the stored node
        later = seen(HOME, blocks=2, clock="12:34")
        table.add_transition(name, tr(login, later, "click", "Sign in", "s1", start=True))
        table.add_transition("explore:/", tr(login, home, "click", "Sign in", "e1", start=True))
        assert table.names() == ["explore:/", name]
    with Store.open(db, read_only=True) as store:
        g = GraphTable(store).load_state_graph(name)
        assert GraphTable(store).counts(name) == (3, 3)
    assert {n.key for n in g.nodes()} == {login.key, home.key, form.key}
    assert g.node(login.key).visits == 2 and g.node(home.key).visits == 3
    assert g.node(home.key).screenshot == "screenshots/r/Home.png"
    sign_in = next(e for e in g.edges() if e.step_id == "s1")
    assert sign_in.count == 2 and dict(sign_in.verdicts) == {"as_expected": 2}
    back = next(e for e in g.edges() if e.step_id == "s3")
    assert back.last_verdict == "changed_unexpectedly" and back.target == home.key
    assert len(g.loops()) == 1
    # the loaded graph identifies states as the stored one did
    assert g.identify(later) == home.key


def test_layered_layout_puts_each_step_one_layer_further() -> None:
    g = StateGraph("flow:x")
    login, home, form = seen(LOGIN, blocks=1), seen(HOME, blocks=2), seen(FORM, blocks=3)
    g.add(tr(login, home, "click", "Sign in", "s1", start=True))
    g.add(tr(home, form, "click", "New request", "s2"))
    g.add(tr(form, login, "click", "Sign out", "s3"))  # a return: the login page stays in layer 0
    assert layered_layout(g) == {login.key: (0, 0.0), home.key: (1, 0.0), form.key: (2, 0.0)}
    other = seen(("http://127.0.0.1:8000/help", "Help", ("Back",)), blocks=4)
    g.add(tr(home, other, "click", "Help", "s4"))
    lay = layered_layout(g)
    assert lay[form.key] == (2, -0.5) and lay[other.key] == (2, 0.5)


def test_a_sighting_decodes_its_screenshot_once_and_keys_it_as_the_state_hash_does(monkeypatch) -> None:
    """The sighting's key is the P4 hash with the screenshot's dHash, computed once (a 1280x800 PNG decode is
    about 20 ms on the step's path); the key is the one ``state_hash`` gives from the PNG itself."""
    import core.state.graph as graph_mod
    from core.state.signature import dhash64, state_hash

    calls: list[int] = []
    monkeypatch.setattr(graph_mod, "dhash64", lambda png: calls.append(1) or dhash64(png))
    import core.state.signature as sig_mod
    monkeypatch.setattr(sig_mod, "dhash64", lambda png: calls.append(1) or dhash64(png))
    sig, png = light_signature(_raw(*LOGIN)), _png(2)
    s = StateSeen.of(sig, screenshot_png=png)
    assert len(calls) == 1
    monkeypatch.undo()
    assert s.key == state_hash(sig, screenshot_png=png) != s.structure == state_hash(sig)
    assert s.dhash == dhash64(png)
