"""The plugin host finds exactly the hook implementations pluggy's own reading finds - on every default plugin,
and on the odd cases: a property that raises, an implementation an instance holds itself,
a module plugin - while reading no plugin attribute statically that carries no mark (issue 20: registering
the default plugins read some 800 names statically at every run)."""
from __future__ import annotations

import inspect
import types

import pluggy

from core.engine.hooks import PROJECT, FlowBegins, PluginHost, Ports, StepHooks, hookimpl
from core.engine.plugins import default_plugins
from core.perception.fake import FakeDriver


def _impls(pm: pluggy.PluginManager) -> set[tuple[str, str]]:
    return {(name, impl.plugin_name) for name in vars(StepHooks) if not name.startswith("_")
            for impl in getattr(pm.hook, name).get_hookimpls()}


def _reference(plugins: list[object]) -> pluggy.PluginManager:
    pm = pluggy.PluginManager(PROJECT)
    pm.add_hookspecs(StepHooks)
    for p in plugins:
        pm.register(p, type(p).__name__ if not isinstance(p, types.ModuleType) else p.__name__)
    return pm


class Odd:
    calls: list[str] = []

    @property
    def boom(self) -> int:
        raise AssertionError("a property was read while registering")

    @hookimpl
    def flow_begins(self, p: FlowBegins) -> None:
        Odd.calls.append("class")


class Holder:
    def __init__(self) -> None:
        @hookimpl
        def flow_ends(p: object) -> None:
            pass
        self.flow_ends = flow_ends


def test_the_same_specifications_as_pluggy_finds() -> None:
    host = PluginHost(Ports(driver=FakeDriver(pages={}), emit=lambda e: None))
    assert {n for n in vars(host.pm.hook) if not n.startswith("_")} == {
        n for n in vars(_reference([]).hook) if not n.startswith("_")}
    assert all(getattr(host.pm.hook, n).has_spec() for n in vars(StepHooks) if not n.startswith("_"))


def test_the_same_implementations_as_pluggy_finds_and_no_property_read(monkeypatch) -> None:
    ports = Ports(driver=FakeDriver(pages={}), emit=lambda e: None)
    module = types.ModuleType("module_plugin")

    @hookimpl
    def step_recorded(p: object) -> None:
        pass
    module.step_recorded = step_recorded  # type: ignore[attr-defined]
    plugins = [*default_plugins(ports), Odd(), Holder(), module]
    host = PluginHost(ports)
    for p in plugins:
        host.register(p, p.__name__ if isinstance(p, types.ModuleType) else None)
    got = _impls(host.pm)
    assert got == _impls(_reference(plugins))
    assert ("flow_ends", "Holder") in got and ("step_recorded", "module_plugin") in got
    assert ("flow_begins", "Odd") in got

    looked: list[str] = []
    real = inspect.getattr_static

    def counting(obj, name, *a):
        looked.append(name)
        return real(obj, name, *a)

    monkeypatch.setattr(inspect, "getattr_static", counting)
    fresh = PluginHost(ports)
    for p in default_plugins(ports):
        fresh.register(p)
    hooks = {n for n in vars(StepHooks) if not n.startswith("_")}
    assert looked and set(looked) <= hooks  # only the marked names are read statically, not every attribute
