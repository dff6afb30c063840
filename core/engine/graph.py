"""The flow's state graph grown during a run (P4), as a plugin of the step kernel: one transition per step.

:class:`GraphRecorder` is registered on the executor's plugin host
(:mod:`core.engine.hooks`).  At the start of a flow (``flow_begins``) it loads the flow's stored graph
(:func:`core.state.graph.flow_graph_name`) so later runs add to the same
graph; the kernel tells it the screenshot path of every observation it
records (``observation_stored``); and at the end of every step that has a
before- and an after-observation (``step_recorded``) it adds the transition - before
state -> after state, the action kind and a summary of its target, the
step id and the verdict kind (S5) - to the graph in memory and in the store
(:class:`core.store.GraphTable`), then emits
:class:`~core.engine.events.StateGraphChanged`.

Best effort like every store write: a failure to store is kept in the
ports' ``store_errors`` and never breaks a run.  Secrets: the target
summary is the element's label (never a typed value) and passes the
driver's redactor; screenshots are already masked.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from core.engine.events import StateGraphChanged
from core.engine.hooks import FlowBegins, ObservationStored, Ports, StepRecorded, hookimpl
from core.engine.step import StepContext
from core.state.graph import GraphChange, StateGraph, StateSeen, Transition, flow_graph_name, target_summary
from core.store import GraphTable, Store

__all__ = ["GraphRecorder"]


class GraphRecorder:
    """Grows the state graph of the flow being run (see the module doc)."""

    def __init__(self, ex: Ports) -> None:
        self.ex = ex
        self.name = ""
        self.graph = StateGraph()
        self._shots: dict[tuple[int, str], str] = {}
        self._started = False

    def _table(self) -> GraphTable | None:
        store = self.ex.store
        return GraphTable(store) if isinstance(store, Store) and not store.read_only else None

    @hookimpl
    def flow_begins(self, p: FlowBegins) -> None:
        self.begin_flow(p.run.flow.name)

    @hookimpl
    def observation_stored(self, p: ObservationStored) -> None:
        self.saw(p.index, p.when, p.written)

    @hookimpl
    def step_recorded(self, p: StepRecorded) -> None:
        self.step_done(p.step)

    def begin_flow(self, flow: str) -> None:
        """Load the stored graph of ``flow`` (empty without a store)."""
        self.name = flow_graph_name(flow)
        self._shots.clear()
        self._started = False
        table = self._table()
        try:
            self.graph = table.load_state_graph(self.name) if table is not None else StateGraph(self.name)
        except Exception as exc:  # noqa: BLE001 - recording is best effort
            self.ex.store_errors.append(f"state graph {self.name!r} could not be loaded: {exc}")
            self.graph = StateGraph(self.name)

    def saw(self, index: int, when: str, written: Path | None) -> None:
        """The observation ``when`` of step ``index`` was stored as ``written`` (absolute path, or None)."""
        store = self.ex.store
        if written is None or not isinstance(store, Store):
            return
        try:
            self._shots[(index, when)] = Path(written).resolve().relative_to(store.media_root.resolve()).as_posix()
        except ValueError:
            return

    def transition(self, ctx: StepContext) -> Transition | None:
        """The step's transition, None when it has no before- or after-observation (or no decided action)."""
        step = ctx.decided or ctx.step
        if ctx.before is None or ctx.after is None or step is None:
            return None
        cand: Any = ctx.candidate
        if cand is not None:
            d = cand.descriptor
            summary = target_summary(d.role, d.label_text, tag=d.tag, selector=step.selector)
        elif not step.target.is_empty or step.selector:
            summary = target_summary(step.target.role, step.target.label_text, tag=step.target.tag,
                                     selector=step.selector)
        else:
            summary = ""
        before = StateSeen.of(ctx.before.signature, screenshot_png=ctx.before.screenshot_png,
                              screenshot=self._shots.get((ctx.index, "before"), ""))
        after = StateSeen.of(ctx.after.signature, screenshot_png=ctx.after.screenshot_png,
                             screenshot=self._shots.get((ctx.index, "after"), ""))
        return Transition(before, after, str(step.action.kind), self.ex.redact(summary), step.id,
                          ctx.verdict.kind if ctx.verdict is not None else "", run_id=ctx.run.run_id,
                          step_index=ctx.index, start=not self._started)

    def step_done(self, ctx: StepContext) -> GraphChange | None:
        """Add the step's transition (memory, store) and announce it; None when the step has none."""
        try:
            t = self.transition(ctx)
        except Exception as exc:  # noqa: BLE001 - never break a run over its graph
            self.ex.store_errors.append(f"state graph: {exc}")
            return None
        if t is None:
            return None
        self._started = True
        change = self.graph.add(t)  # the graph as loaded at the flow's start and grown by this run
        table = self._table()
        if table is not None:
            name, errors = self.name, self.ex.store_errors

            def failed(exc: BaseException) -> None:
                errors.append(f"state graph {name!r} not stored: {exc}")

            try:  # on the store's writer thread, in order with the step's other records (core.store.writer)
                self.ex.store.defer(table.add_transition, name, t, on_error=failed)
            except Exception as exc:  # noqa: BLE001 - recording is best effort, the run goes on
                failed(exc)
        self.ex.emit(StateGraphChanged(ctx.run.run_id, ctx.run.flow.name, ctx.index, self.name, change.source,
                                       change.target, change.edge, change.new_source, change.new_target,
                                       change.new_edge, change.revisit))
        return change
