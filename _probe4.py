import sys
from PySide6.QtCore import QCoreApplication, QObject, Signal, SignalInstance
app = QCoreApplication([])
class O(QObject):
    s = Signal(object)
o = O()
def rc(): return sys.getrefcount(True), sys.getrefcount(False)
print("start", rc())
for _ in range(100): o.s.emit(1)
print("after 100 emits (no slot)", rc())
o.s.connect(lambda x: None)
for _ in range(100): o.s.emit(1)
print("after 100 emits (slot)", rc())
r = o.s.emit(1); print("emit returns", repr(r))
for _ in range(100): o.s.emit(1) or None
print("after", rc())
from PySide6.QtCore import QMetaObject, Qt, Q_ARG
import PySide6; print(PySide6.__version__)
