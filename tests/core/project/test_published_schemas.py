"""The JSON Schemas published in resources/schemas/ match the validating models."""
import json
from pathlib import Path

from core.project.schema import json_schemas

ROOT = Path(__file__).resolve().parents[3]


def test_published_schemas_are_current():
    for name, schema in json_schemas().items():
        published = json.loads((ROOT / "resources" / "schemas" / name).read_text())
        assert published == json.loads(json.dumps(schema)), f"regenerate with: python -m core.project.schema ({name})"


def test_flow_schema_lists_the_closed_action_space():
    from core.domain import ACTION_KINDS

    step = json_schemas()["flow.schema.json"]["$defs"]["StepModel"]
    assert step["properties"]["action"]["enum"] == list(ACTION_KINDS)
    assert "id" in step["required"]
    # a step names its action, or is a goal step whose actions the model chooses
    assert step["anyOf"] == [{"required": ["action"]}, {"required": ["goal"]}]
