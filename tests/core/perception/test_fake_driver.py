"""FakeDriver: a scripted page model that behaves like the Driver protocol says."""
from __future__ import annotations

import inspect

import pytest

from core.domain import Action, Assertion, Observation
from core.perception.driver import ActionError, Driver, NavigationError, PlaywrightDriver
from core.perception.fake import (
    FakeDriver, FakePage, Performed, change_text, close_modal, fail, navigate, nothing, open_modal, set_page,
    set_value, update,
)
from core.state.signature import light_signature

PAGES = {
    "/login": FakePage(
        [{"id": "user", "role": "textbox", "label": "User name"},
         {"id": "pw", "role": "textbox", "label": "Password", "type": "password"},
         {"id": "remember", "role": "checkbox", "label": "Remember me", "checked": False},
         {"id": "go", "role": "button", "text": "Sign in"},
         {"id": "help", "role": "link", "text": "Help", "visible": False},
         {"id": "old", "role": "button", "text": "Legacy sign in", "enabled": False}],
        title="Login", text="Welcome back"),
    "/home": FakePage([{"id": "out", "role": "button", "text": "Sign out"}], title="Home", text="Hello alice"),
}


@pytest.fixture
def fake() -> FakeDriver:
    d = FakeDriver(pages=PAGES, reactions={
        ("/login", "go", "click"): navigate("/home"),
        ("/home", "out", "click"): open_modal("Sign out?", [{"id": "yes", "role": "button", "text": "Yes"},
                                                            {"id": "no", "role": "button", "text": "No"}]),
        ("*", "no", "click"): close_modal(),
        ("*", "yes", "click"): [close_modal(), navigate("/login")],
    })
    d.open()
    d.goto("/login")
    return d


def ref(obs: Observation, element_id: str) -> str:
    return next(c.ref for c in obs.candidates if c.descriptor.id == element_id)


def test_implements_every_public_driver_method() -> None:
    for name, member in vars(Driver).items():
        if name.startswith("_") or not callable(member):
            continue
        assert callable(getattr(FakeDriver, name, None)), name
        want = set(inspect.signature(member).parameters)
        got = set(inspect.signature(getattr(FakeDriver, name)).parameters)
        assert want <= got, f"{name}: FakeDriver lacks {want - got}"


def test_driver_protocol_declares_what_the_executor_calls() -> None:
    assert "_redact_item" not in vars(Driver)
    assert "start" in inspect.signature(Driver.wait_settled).parameters


def test_accepts_the_keywords_the_real_driver_takes() -> None:
    for name in ("observe", "wait_settled", "perform", "check_assertion", "refs_for_selector", "goto", "probe"):
        want = set(inspect.signature(getattr(PlaywrightDriver, name)).parameters)
        got = set(inspect.signature(getattr(FakeDriver, name)).parameters)
        assert want <= got, f"{name}: FakeDriver lacks {want - got}"


def test_observe_returns_a_real_observation(fake: FakeDriver) -> None:
    obs = fake.observe()
    assert isinstance(obs, Observation)
    assert obs.url == "http://fake.test/login" and obs.title == "Login"
    assert obs.viewport == (1280, 800) and obs.device_pixel_ratio == 1.0
    ids = [c.descriptor.id for c in obs.candidates]
    assert ids == ["user", "pw", "remember", "go", "old"]  # invisible "help" is not observed
    user = obs.candidates[0]
    assert user.ref == "0:0" and user.editable and user.descriptor.tag == "input"
    assert user.descriptor.name == "User name" and user.descriptor.label == "User name"
    assert user.grid_cell == "A1"
    assert obs.candidates[ids.index("old")].enabled is False
    assert "Welcome back" in obs.visible_text and "Sign in" in obs.visible_text


def test_signature_is_computed_by_light_signature(fake: FakeDriver) -> None:
    obs = fake.observe()
    items = [e for e in fake.elements if e["visible"]]
    raw = {"url": fake.url, "title": "Login", "items": items, "text": obs.visible_text, "modals": [],
           "loading": False, "errors": 0, "focus": ""}
    assert obs.signature == light_signature(raw)
    assert obs.signature.interactive_count == 5
    assert fake.observe().signature.digest == obs.signature.digest


def test_refs_for_selector(fake: FakeDriver) -> None:
    assert [c.descriptor.id for c in fake.refs_for_selector("#go")] == ["go"]
    assert [c.descriptor.id for c in fake.refs_for_selector("text=sign in")] == ["go", "old"]
    assert [c.descriptor.id for c in fake.refs_for_selector('text="Sign in"')] == ["go"]
    assert [c.descriptor.id for c in fake.refs_for_selector("#help")] == ["help"]  # invisible ones too
    assert fake.refs_for_selector("#missing") == []
    assert fake.refs_for_selector("#go")[0].ref == ref(fake.observe(), "go")
    with pytest.raises(ValueError, match="only '#id' and 'text=...'"):
        fake.refs_for_selector("css=button.primary")


def test_default_input_check_and_recorded_actions(fake: FakeDriver) -> None:
    obs = fake.observe()
    fake.perform(Action("input", "alice"), ref(obs, "user"), "alice")
    fake.perform(Action("check"), ref(obs, "remember"), "")
    assert fake.element("user")["value"] == "alice"
    assert fake.element("remember")["checked"] is True
    assert fake.actions == [Performed("/login", "user", "input", "alice", "0:0"),
                            Performed("/login", "remember", "check", "", "0:2")]
    after = fake.observe()
    assert after.signature.values_digest != obs.signature.values_digest
    assert after.signature.text_digest == obs.signature.text_digest


def test_navigation_reaction_and_fresh_state(fake: FakeDriver) -> None:
    obs = fake.observe()
    fake.perform(Action("input", "alice"), ref(obs, "user"), "alice")
    fake.perform(Action("click"), ref(obs, "go"), "")
    home = fake.observe()
    assert home.url == "http://fake.test/home" and home.title == "Home"
    fake.perform(Action("back"), None, "")
    assert fake.path == "/login" and fake.element("user")["value"] == ""  # reloaded
    assert fake.visits == ["/login", "/home", "/login"]
    assert fake.history == ["/login"]


def test_modal_open_and_close(fake: FakeDriver) -> None:
    fake.goto("/home")
    fake.perform(Action("click"), ref(fake.observe(), "out"), "")
    obs = fake.observe()
    assert obs.modal_titles == ("Sign out?",) and obs.signature.modal_count == 1
    assert [c.descriptor.container for c in obs.candidates] == ["", "Sign out?", "Sign out?"]
    fake.perform(Action("click"), ref(obs, "no"), "")
    closed = fake.observe()
    assert closed.modal_titles == () and [c.descriptor.id for c in closed.candidates] == ["out"]
    fake.perform(Action("click"), ref(fake.observe(), "out"), "")
    fake.perform(Action("click"), ref(fake.observe(), "yes"), "")
    assert fake.path == "/login" and fake.modals == []


def test_unscripted_click_does_nothing(fake: FakeDriver) -> None:
    fake.goto("/home")
    before = fake.observe()
    fake.reactions = {}
    fake.perform(Action("click"), ref(before, "out"), "")
    assert fake.observe().signature == before.signature
    assert len(fake.actions) == 1


def test_scripted_reactions() -> None:
    d = FakeDriver(
        pages={"/": FakePage([{"id": "a", "role": "button", "text": "A"}, {"id": "b", "role": "button", "text": "B"},
                              {"id": "f", "role": "textbox", "label": "F"}], text="start")},
        reactions={("/", "a", "click"): [change_text("done"), change_text("A!", element="a")],
                   ("/", "b", "click"): [update("a", enabled=False), set_value("forced", element="f")],
                   ("/", "f", "input"): nothing(),
                   ("/", "a", "dblclick"): fail("covered by a mask"),
                   ("/", "b", "dblclick"): set_page(focus="button#b", loading=True, errors=2, title="Busy")})
    d.goto("/")
    obs = d.observe()
    d.perform(Action("click"), ref(obs, "a"), "")
    assert d.text == "done" and d.element("a")["text"] == "A!" and d.element("a")["name"] == "A!"
    d.perform(Action("click"), ref(obs, "b"), "")
    assert d.element("a")["enabled"] is False and d.element("f")["value"] == "forced"
    d.perform(Action("input", "typed"), ref(obs, "f"), "typed")
    assert d.element("f")["value"] == "forced"
    with pytest.raises(ActionError, match="not enabled"):
        d.perform(Action("dblclick"), ref(obs, "a"), "")
    d.element("a")["enabled"] = True
    with pytest.raises(ActionError, match="covered by a mask"):
        d.perform(Action("dblclick"), ref(obs, "a"), "")
    d.perform(Action("dblclick"), ref(obs, "b"), "")
    sig = d.observe().signature
    assert (sig.focus, sig.loading, sig.error_count, sig.title) == ("button#b", True, 2, "Busy")
    assert [a.kind for a in d.actions] == ["click", "click", "input", "dblclick", "dblclick", "dblclick"]


def test_set_page_rejects_unknown_fields() -> None:
    with pytest.raises(ValueError, match="unknown page field"):
        set_page(colour="red")


def test_acting_on_a_gone_or_invisible_element_raises_and_is_recorded(fake: FakeDriver) -> None:
    with pytest.raises(ActionError, match="gone"):
        fake.perform(Action("click"), "0:99", "")
    with pytest.raises(ActionError, match="not visible"):
        fake.perform(Action("click"), fake.refs_for_selector("#help")[0].ref, "")
    assert [(a.element, a.ref) for a in fake.actions] == [("", "0:99"), ("help", "0:4")]


def test_goto_unknown_page_raises_navigation_error(fake: FakeDriver) -> None:
    with pytest.raises(NavigationError, match="HTTP 404"):
        fake.goto("/nowhere")
    fake.goto("http://fake.test/home")
    assert fake.path == "/home"


def test_targetless_actions(fake: FakeDriver) -> None:
    fake.perform(Action("navigate", "/home"), None, "/home")
    assert fake.path == "/home"
    fake.perform(Action("scroll", direction="down", distance=300), None, "")
    assert fake.observe().scroll == (0.0, 300.0)
    fake.perform(Action("wait", "x"), None, "x")
    assert fake.path == "/home"


def test_probe_counts_mutations_and_wait_settled_returns_at_once(fake: FakeDriver) -> None:
    p0 = fake.probe()
    assert set(p0) == {"url", "mutations", "quietMs", "inflight", "loading", "ready"}
    assert fake.wait_settled(start=p0) == {"ms": 0.0, "changed": False, "timed_out": False}
    fake.perform(Action("input", "bob"), ref(fake.observe(), "user"), "bob")
    p1 = fake.probe()
    assert p1["mutations"] == p0["mutations"] + 1
    assert fake.wait_settled(long=True, start=p0)["changed"] is True


def test_check_assertion(fake: FakeDriver) -> None:
    obs = fake.observe()
    user = ref(obs, "user")
    fake.perform(Action("input", "alice"), user, "alice")
    cases = [
        (Assertion("text_appears", "Welcome"), None, "Welcome", True),
        (Assertion("text_appears", "Goodbye"), None, "Goodbye", False),
        (Assertion("text_absent", "Goodbye"), None, "Goodbye", True),
        (Assertion("url_contains", "/login"), None, "/login", True),
        (Assertion("value", "alice"), user, "alice", True),
        (Assertion("value", "bob", "#user"), None, "bob", False),
        (Assertion("enabled", selector="#go"), None, "", True),
        (Assertion("disabled", selector="#old"), None, "", True),
        (Assertion("visible", selector="#help"), None, "", False),
        (Assertion("hidden", selector="#missing"), None, "", True),
        (Assertion("count", "2", "text=sign in"), None, "2", True),
        (Assertion("text_equals", "Sign in", "#go"), None, "Sign in", True),
        (Assertion("visible"), None, "", False),
    ]
    for assertion, r, expected, ok in cases:
        got, why = fake.check_assertion(assertion, r, expected)
        assert got is ok, (assertion, why)
        assert why


def test_evaluate_only_returns_scripted_results() -> None:
    d = FakeDriver(pages={"/": []}, scripts={"() => 1": 1, "x => x * 2": lambda x: x * 2})
    assert d.evaluate("() => 1") == 1
    assert d.evaluate("x => x * 2", 21) == 42
    with pytest.raises(NotImplementedError, match="no scripted result"):
        d.evaluate("() => document.title")


def test_element_specs_need_an_id() -> None:
    with pytest.raises(ValueError, match="needs an 'id'"):
        FakeDriver(pages={"/": [{"role": "button"}]}).goto("/")


def test_open_close() -> None:
    d = FakeDriver(pages={"/": []})
    d.open()
    assert d.is_open
    d.close()
    assert not d.is_open
