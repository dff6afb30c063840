import sys, ctypes
from PySide6.QtCore import QCoreApplication, QObject, Signal, SignalInstance
app = QCoreApplication([])
try:
    orig = SignalInstance.emit
    def emit(self, *a): return orig(self, *a)
    SignalInstance.emit = emit
    print("patched class ok")
except Exception as e:
    print("class patch failed:", e)
class O(QObject):
    s = Signal(object)
o = O()
print(type(o.s), type(O.s))
inst = o.s
try:
    inst.emit = lambda *a: None
    print("instance attr ok")
except Exception as e:
    print("instance patch failed:", e)
# QMetaObject.invokeMethod alternative?
from PySide6.QtCore import QMetaObject, Qt
print(sys.getrefcount(True))
