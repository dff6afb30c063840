import sys
from studio.app import create_app
from studio.main_window import MainWindow
from studio.samples import sample_project
from studio.testing import RecordingEngine, sample_run_events
app = create_app()
project = sample_project()
engines = []
n = int(sys.argv[1]); direct = sys.argv[2] == "direct"
w = MainWindow(project.root, engine_factory=RecordingEngine.factory(engines), project_loader=lambda _p: project)
w.start_run()
ev = sample_run_events(project)[:n]
if direct: engines[0].emit(*ev)
else: engines[0].emit_from_thread(*ev)
for _ in range(50): app.processEvents()
print("ok", n, [type(e).__name__ for e in ev][-1])
