"""Circuit breaker (R4): the status-bar indicator and the Breaker panel with its plots.

:class:`BreakerIndicator` is the dot and ``Breaker closed \u00b7 0/3`` of the
status bar; :class:`BreakerPanel` says the same at length - state, consecutive
failures against the threshold, failed half-open probes, the time until an
open breaker half-opens by itself (counting down), what a Resume does now -
and plots per-step latency (ms) and resolution confidence (0..1) over the run
(pyqtgraph).  Both show a finished run's final state as final.
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import QWidget

from core.engine.events import BreakerChanged, EngineEvent

from ..theme import BREAKER_COLORS, COLORS

__all__ = ["BreakerIndicator", "BreakerPanel"]

_LABELS = {"closed": "closed", "open": "OPEN", "half_open": "half-open"}


class BreakerIndicator(QWidget):
    """A coloured dot and ``Breaker closed · 0/3``; unknown until the first ``BreakerChanged``."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = ""
        self._failures = 0
        self._threshold = 0
        self._final = False
        self._update_tooltip()

    @property
    def final(self) -> bool:
        """True once the run ended: the state shown is the one it ended with."""
        return self._final

    @property
    def state(self) -> str:
        """``closed`` / ``open`` / ``half_open``, or ``""`` before the first event."""
        return self._state

    @property
    def failures(self) -> int:
        return self._failures

    @property
    def threshold(self) -> int:
        return self._threshold

    def text(self) -> str:
        """The shown text."""
        if not self._state:
            return "Breaker \u2014"
        text = f"Breaker {_LABELS.get(self._state, self._state)} \u00b7 {self._failures}/{self._threshold}"
        return f"{text} \u00b7 run ended" if self._final else text

    def color(self) -> QColor:
        """Colour of the dot (grey before the first event)."""
        return QColor(BREAKER_COLORS.get(self._state, COLORS["muted"]))

    def apply(self, event: EngineEvent) -> None:
        """Update from a ``BreakerChanged`` event (others are ignored)."""
        if isinstance(event, BreakerChanged):
            self.set_state(event.state, event.consecutive_failures, event.threshold)

    def set_state(self, state: str, failures: int, threshold: int) -> None:
        """Show ``state`` with ``failures`` consecutive failures out of ``threshold`` (a live state, not final)."""
        self._state, self._failures, self._threshold, self._final = state, failures, threshold, False
        self._update_tooltip()
        self.updateGeometry()
        self.update()

    def reset(self) -> None:
        self.set_state("", 0, 0)

    def finish(self) -> None:
        """The run ended: keep the last state, marked as the one it ended with."""
        if self._state:
            self._final = True
            self._update_tooltip()
            self.updateGeometry()
            self.update()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        fm = self.fontMetrics()
        return QSize(fm.horizontalAdvance(self.text()) + 30, max(22, fm.height() + 6))

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return self.sizeHint()

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 - Qt API
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        h = self.height()
        d = 10.0
        color = self.color()
        if self._state == "open":
            halo = QColor(color)
            halo.setAlpha(70)
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(halo)
            p.drawEllipse(QRectF(4, (h - d) / 2 - 3, d + 6, d + 6))
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(color)
        p.drawEllipse(QRectF(7, (h - d) / 2, d, d))
        p.setPen(QColor(COLORS["text"]) if self._state else QColor(COLORS["muted"]))
        p.drawText(QRectF(24, 0, self.width() - 24, h), Qt.AlignmentFlag.AlignVCenter, self.text())
        p.end()

    def _update_tooltip(self) -> None:
        self.setToolTip(
            "Circuit breaker: opens after the threshold of consecutive failures and pauses "
            "the run for you; half-open lets one probe through; closes on success.")


_STATE_WORDS = {"closed": "CLOSED", "open": "OPEN", "half_open": "HALF-OPEN"}


class BreakerPanel(QWidget):
    """The breaker at length, and the run's per-step latency and confidence plots.

    Fed with engine events (:meth:`apply`): ``BreakerChanged`` for the
    state, ``TargetResolved`` for confidence (the winning candidate's score
    0..1; an abstention is plotted at 0 in red), ``StepFinished`` for
    latency (ms per step), ``FlowStarted`` marks where each flow begins,
    ``RunStarted`` clears, ``RunFinished`` makes the state final.  The time
    to half-open counts down locally from the last ``BreakerChanged``
    (``half_open_in_s``), once a second.
    """

    def __init__(self, parent: QWidget | None = None, *, clock: Callable[[], float] | None = None) -> None:
        import time as _time  # noqa: PLC0415

        import pyqtgraph as pg  # noqa: PLC0415 - heavy: loaded with the first panel
        from PySide6.QtCore import QTimer  # noqa: PLC0415
        from PySide6.QtWidgets import QGridLayout, QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout  # noqa: PLC0415

        super().__init__(parent)
        self._clock = clock or _time.monotonic
        self.state = ""
        self.failures = 0
        self.threshold = 0
        self.failed_probes = 0
        self.final = False
        self.running = False  # a run started and no breaker event came yet
        self._deadline: float | None = None
        #: (x, ms) per finished step, (x, score, abstained) per resolution; x counts steps over the run.
        self.latency: list[tuple[int, float]] = []
        self.confidence: list[tuple[int, float, bool]] = []
        #: x of every attempt on which the locator abstained.
        self.abstentions: list[int] = []
        self._x_of: dict[tuple[str, int], int] = {}
        self._flow_lines: list[tuple[int, str]] = []
        self._run_id = ""

        lay = QVBoxLayout(self)
        lay.setContentsMargins(10, 8, 10, 8)
        self.state_label = QLabel()
        self.state_label.setObjectName("breakerState")
        f = self.state_label.font()
        f.setPointSizeF(f.pointSizeF() * 1.5)
        f.setBold(True)
        self.state_label.setFont(f)
        lay.addWidget(self.state_label)
        grid = QGridLayout()
        grid.setHorizontalSpacing(14)
        self.count_label, self.probe_label, self.timer_label, self.hint_label = (QLabel() for _ in range(4))
        for i, (name, value) in enumerate((("Consecutive failures", self.count_label),
                                           ("Failed probes", self.probe_label),
                                           ("Half-opens in", self.timer_label))):
            k = QLabel(name)
            k.setObjectName("panelTitle")
            grid.addWidget(k, 0, i)
            grid.addWidget(value, 1, i)
        lay.addLayout(grid)
        self.hint_label.setWordWrap(True)
        lay.addWidget(self.hint_label)

        plots = QHBoxLayout()  # side by side: the panel lives in a wide, short bottom dock
        lay.addLayout(plots, 1)
        pg.setConfigOptions(antialias=True)
        self.latency_plot = pg.PlotWidget(background=COLORS["base"])
        self.confidence_plot = pg.PlotWidget(background=COLORS["base"])
        for plot, title, unit in ((self.latency_plot, "Step latency", "ms"),
                                  (self.confidence_plot, "Resolution confidence", "score")):
            plot.setTitle(title, color=COLORS["text"], size="9pt")
            plot.setLabel("left", unit, color=COLORS["muted"])
            plot.setLabel("bottom", "step (over the run)", color=COLORS["muted"])
            plot.showGrid(x=True, y=True, alpha=0.15)
            plot.setMinimumHeight(90)
            # the plot's own size hint (480 px high) would make the scrolling dock taller than its view
            plot.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Ignored)
            plot.setMenuEnabled(False)
            plot.getAxis("bottom").setTickSpacing(major=1, minor=1)  # steps are whole numbers
            plots.addWidget(plot, 1)
        self.confidence_plot.setYRange(0, 1.05)
        self.confidence_plot.setXLink(self.latency_plot)  # one step, one x on both plots
        self._latency_curve = self.latency_plot.plot([], [], pen=pg.mkPen(COLORS["accent"], width=2), symbol="o",
                                                     symbolSize=6, symbolBrush=COLORS["accent"])
        self._confidence_curve = self.confidence_plot.plot([], [], pen=pg.mkPen("#3fb96b", width=2), symbol="o",
                                                           symbolSize=6, symbolBrush="#3fb96b")
        self._abstained = pg.ScatterPlotItem(size=9, brush=pg.mkBrush("#f0524f"), pen=None)
        self.confidence_plot.addItem(self._abstained)
        self._pg = pg
        self._timer = QTimer(self)
        self._timer.setInterval(1000)
        self._timer.timeout.connect(self._refresh)
        self._refresh()

    # --- feeding ------------------------------------------------------------------------------

    def apply(self, event: EngineEvent) -> None:
        """Update from an engine event (others are ignored)."""
        from core.engine.events import (  # noqa: PLC0415
            FlowStarted, RunFinished, RunStarted, StepFinished, TargetResolved,
        )

        if isinstance(event, RunStarted):
            self.clear(running=True)
            self._run_id = event.run_id
        elif isinstance(event, FlowStarted):
            x = len(self._x_of) + 1
            self._flow_lines.append((x, event.flow))
            line = self._pg.InfiniteLine(pos=x - 0.5, angle=90, pen=self._pg.mkPen(COLORS["border"], width=1),
                                         label=event.flow, labelOpts={"color": COLORS["muted"], "position": 0.92})
            self.latency_plot.addItem(line)
            self.confidence_plot.addItem(self._pg.InfiniteLine(pos=x - 0.5, angle=90,
                                                               pen=self._pg.mkPen(COLORS["border"], width=1)))
        elif isinstance(event, BreakerChanged):
            self.state, self.failures, self.threshold = event.state, event.consecutive_failures, event.threshold
            self.failed_probes, self.final = event.failed_probes, False
            self._deadline = (self._clock() + event.half_open_in_s) if event.half_open_in_s is not None else None
            if self._deadline is not None:
                self._timer.start()
        elif isinstance(event, TargetResolved):
            x = self._x(event.flow, event.index)
            r = event.resolution
            if r.abstained:  # marked at 0 in red, also when a later attempt of the step found its target
                self.abstentions.append(x)
            self.confidence = [c for c in self.confidence if c[0] != x] + [(x, 0.0 if r.abstained else r.score,
                                                                          r.abstained)]
            self._plot()
        elif isinstance(event, StepFinished):
            x = self._x(event.flow, event.index)
            self.latency = [p for p in self.latency if p[0] != x] + [(x, event.ms)]
            self._plot()
        elif isinstance(event, RunFinished):
            self.finish()
            return
        else:
            return
        self._refresh()

    def finish(self) -> None:
        """The run ended: the state shown is final, nothing counts down."""
        self.final = True
        self.running = False
        self._deadline = None
        self._timer.stop()
        self._refresh()

    def clear(self, *, running: bool = False) -> None:
        """Forget the last run; ``running``: a new run has started (no breaker event yet)."""
        self.running = running
        self.state, self.failures, self.threshold, self.failed_probes, self.final = "", 0, 0, 0, False
        self._deadline = None
        self._timer.stop()
        self.latency, self.confidence, self._x_of, self._flow_lines, self.abstentions = [], [], {}, [], []
        for plot, keep in ((self.latency_plot, (self._latency_curve,)),
                           (self.confidence_plot, (self._confidence_curve, self._abstained))):
            for item in list(plot.getPlotItem().items):
                if item not in keep:
                    plot.removeItem(item)
        self._plot()
        self._refresh()

    # --- reading ------------------------------------------------------------------------------

    def seconds_to_half_open(self) -> float | None:
        """Seconds left until the open breaker half-opens by itself (None when not counting)."""
        if self._deadline is None or self.state != "open" or self.final:
            return None
        return max(0.0, self._deadline - self._clock())

    def state_text(self) -> str:
        """``"OPEN"``, ``"HALF-OPEN \u00b7 probing"``, ``"CLOSED \u00b7 run ended"``..."""
        if not self.state:
            return "Closed \u00b7 waiting for the first step" if self.running else "No run yet"
        word = _STATE_WORDS.get(self.state, self.state)
        if self.final:
            return f"{word} \u00b7 run ended"
        return f"{word} \u00b7 one probe" if self.state == "half_open" else word

    def hint(self) -> str:
        """What the state means for the user now."""
        if not self.state:
            return "The breaker opens after the threshold of consecutive failed attempts and the run waits for you."
        if self.final:
            return {"closed": "The run ended with the breaker closed.",
                    "open": f"The run ended with the breaker open after {self.failures} consecutive failures.",
                    "half_open": "The run ended during a half-open probe."}.get(self.state, "")
        if self.state == "open":
            return ("Resume (F5) lets exactly one probe attempt through (half-open): its success closes the "
                    "breaker, its failure re-opens it.")
        if self.state == "half_open":
            return "One probe attempt runs now: success closes the breaker, a failure re-opens it at once."
        return "Closed: attempts run; each failure counts, a success resets the count."

    def _refresh(self) -> None:
        _C = BREAKER_COLORS

        self.state_label.setText(self.state_text())
        self.state_label.setStyleSheet(f"color: {_C.get(self.state, COLORS['muted'])};")
        self.count_label.setText(f"{self.failures} / {self.threshold}" if self.state else "\u2014")
        self.probe_label.setText(str(self.failed_probes) if self.state else "\u2014")
        left = self.seconds_to_half_open()
        if left is None:
            self.timer_label.setText("\u2014")
            if self._timer.isActive() and (self.final or self.state != "open"):
                self._timer.stop()
        else:
            m, sec = divmod(int(round(left)), 60)
            self.timer_label.setText(f"{m}:{sec:02d}")
        self.hint_label.setText(self.hint())

    def _x(self, flow: str, index: int) -> int:
        key = (flow, index)
        if key not in self._x_of:
            self._x_of[key] = len(self._x_of) + 1
        return self._x_of[key]

    def _plot(self) -> None:
        lat = sorted(self.latency)
        self._latency_curve.setData([p[0] for p in lat], [p[1] for p in lat])
        conf = sorted(self.confidence)
        self._confidence_curve.setData([c[0] for c in conf], [c[1] for c in conf])
        self._abstained.setData(list(self.abstentions), [0.0] * len(self.abstentions))
        # fixed ranges: every step of the run from x = 1, latency from 0 ms (one point never fills the plot)
        last = max([len(self._x_of), 5])
        self.latency_plot.setXRange(0.5, last + 0.5, padding=0)
        top = max([ms for _x, ms in lat] + [100.0])
        self.latency_plot.setYRange(0, top * 1.15, padding=0)
        self.confidence_plot.setYRange(0, 1.05, padding=0)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(820, 300)
