import sys
from PySide6.QtWidgets import QApplication, QListWidget, QLabel
from PySide6.QtCore import QModelIndex, QObject, Signal, Qt
from studio.views.steps import StepsModel, StepsPanel
app = QApplication([])
what = sys.argv[1]
N = 20000
if what == "isValid":
    i = QModelIndex()
    for _ in range(N): i.isValid()
elif what == "blockSignals":
    l = QListWidget()
    for _ in range(N): l.blockSignals(True); l.blockSignals(False)
elif what == "dataChanged":
    m = StepsModel(); m.set_flow("f", ["a","b"]); m.show_flow("f")
    got = []
    m.dataChanged.connect(lambda a, b, *r: got.append(1))
    for _ in range(N): m.dataChanged.emit(m.index(0,0), m.index(0,1))
elif what == "dataChanged_noargs":
    m = StepsModel(); m.set_flow("f", ["a","b"]); m.show_flow("f")
    got = []
    m.dataChanged.connect(lambda *r: got.append(1))
    for _ in range(N): m.dataChanged.emit(m.index(0,0), m.index(0,1))
elif what == "panel":
    p = StepsPanel(); p.model.set_flow("f", ["a","b"]); p.model.show_flow("f")
    for _ in range(N): p.model.dataChanged.emit(p.model.index(0,0), p.model.index(0,1))
print("ok", what)
