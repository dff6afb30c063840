"""The OpenAI-compatible adapter against the scripted server (a real HTTP server on 127.0.0.1)."""
from __future__ import annotations

import socket

import pytest
from pydantic import BaseModel

from core.plan.model import ModelAnswerError, ModelClient, ModelConfig, ModelUnreachable, image_part, text_part
from core.plan.scripted_server import Reply, ScriptedModelServer, images_of, texts_of
from core.secrets import MASK, Redactor


class Pick(BaseModel):
    grid: str
    reason: str = ""


@pytest.fixture()
def server():
    with ScriptedModelServer() as srv:
        yield srv


def test_answer_validated_and_counted(server):
    server.queue('{"grid": "C5", "reason": "the button"}', "```json\n{\"grid\": \"A1\"}\n```")
    c = ModelClient(ModelConfig(server.base_url, "scripted", api_key="k-123"))
    png = b"\x89PNG fake"
    obj, usage = c.complete_json([{"role": "user", "content": [text_part("where?"), image_part(png)]}], Pick)
    assert obj.grid == "C5" and usage.prompt_tokens > 0 and usage.completion_tokens > 0 and usage.attempts == 1
    obj2, _ = c.complete_json([{"role": "user", "content": "again"}], Pick)
    assert obj2.grid == "A1"  # a fenced block is accepted
    snap = c.counters.snapshot()
    assert snap["calls"] == 2 and snap["errors"] == 0 and snap["latency_ms"] > 0
    assert images_of(server.requests[0]) == [png]
    assert server.requests[0]["model"] == "scripted" and server.requests[0]["temperature"] == 0.0


def test_malformed_json_retried_then_clear_error(server):
    server.queue("sure! the C5 cell", "{grid: C5}", '{"cell": "C5"}')
    c = ModelClient(ModelConfig(server.base_url, "scripted", retries=2))
    with pytest.raises(ModelAnswerError) as exc:
        c.complete_json([{"role": "user", "content": "x"}], Pick)
    assert "does not fit Pick" in exc.value.reason and "after 3 attempts" in exc.value.reason
    assert len(server.requests) == 3 and c.counters.snapshot()["errors"] == 1


def test_retry_recovers_from_one_bad_answer(server):
    server.queue(Reply("oops", status=500), '{"grid": "B2"}')
    c = ModelClient(ModelConfig(server.base_url, "scripted", retries=1))
    obj, usage = c.complete_json([{"role": "user", "content": "x"}], Pick)
    assert obj.grid == "B2" and usage.attempts == 2


def test_timeout_is_unreachable(server):
    server.queue(Reply('{"grid": "C5"}', delay_s=1.5), Reply('{"grid": "C5"}', delay_s=1.5))
    c = ModelClient(ModelConfig(server.base_url, "scripted", timeout_s=0.3, retries=1))
    with pytest.raises(ModelUnreachable) as exc:
        c.complete_json([{"role": "user", "content": "x"}], Pick)
    assert "no answer within 0.3 s" in exc.value.reason


def test_unreachable_server():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    c = ModelClient(ModelConfig(f"http://127.0.0.1:{port}/v1", "none", retries=0))
    with pytest.raises(ModelUnreachable) as exc:
        c.complete_json([{"role": "user", "content": "x"}], Pick)
    assert "unreachable" in exc.value.reason and f"127.0.0.1:{port}" in exc.value.reason


def test_secret_text_redacted_before_sending(server):
    server.queue('{"grid": "C5"}')
    c = ModelClient(ModelConfig(server.base_url, "scripted"), redactor=Redactor(["hunter2-secret"]))
    c.complete_json([{"role": "system", "content": "pw hunter2-secret"},
                     {"role": "user", "content": [text_part("the value is hunter2-secret")]}], Pick)
    sent = " ".join(texts_of(server.requests[0]))
    assert "hunter2-secret" not in sent and sent.count(MASK) == 2


def test_config_rejects_bad_url():
    with pytest.raises(ValueError, match="http"):
        ModelConfig("127.0.0.1:8000", "m")
