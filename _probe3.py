import sys
from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, QCoreApplication, QObject, Signal
app = QCoreApplication([])
class M(QAbstractTableModel):
    custom = Signal(object)
    custom2 = Signal(QModelIndex, QModelIndex)
    def rowCount(self, p=QModelIndex()): return 2
    def columnCount(self, p=QModelIndex()): return 2
    def data(self, i, r=Qt.ItemDataRole.DisplayRole): return None
m = M()
what = sys.argv[1]
a, b = m.index(0,0), m.index(0,1)
for _ in range(20000):
    if what == "index": m.index(0,0)
    elif what == "custom": m.custom.emit(1)
    elif what == "custom2": m.custom2.emit(a, b)
    elif what == "dc": m.dataChanged.emit(a, b)
    elif what == "layout": m.layoutChanged.emit()
    elif what == "headerDataChanged": m.headerDataChanged.emit(Qt.Orientation.Horizontal, 0, 1)
print("ok", what)
