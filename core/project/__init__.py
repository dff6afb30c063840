"""Project and flow files: load, validate, save with stable key order."""
from .loader import (
    DATA_DIR, FLOWS_DIR, SETTINGS_FILE, Project, ProjectError, engine_settings_of, flow_to_mapping, load_flow,
    load_project, run_data_dir, save_flow,
)
from .schema import SCHEMA_VERSION, FlowModel, ProjectModel

__all__ = [
    "DATA_DIR", "FLOWS_DIR", "SETTINGS_FILE", "Project", "ProjectError", "flow_to_mapping",
    "load_flow", "load_project", "run_data_dir", "save_flow", "engine_settings_of",
    "SCHEMA_VERSION", "FlowModel",
    "ProjectModel",
]
