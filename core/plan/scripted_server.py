"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1 (tests, benchmarks, demos without a model).

A real HTTP server (werkzeug's threaded WSGI server, as :mod:`core.sites.server`) in a daemon thread: it answers ``POST .../chat/completions``
with recorded answers (a queue) or with answers made by a rule (a function of
the request), accepts image parts, and records every request it received so a
test can check what a model would have been sent (no secret in the text, the
masked region of the image).  ``GET .../models`` lists the one model.

    with ScriptedModelServer(rule=lambda req: '{"grid": "C5", ...}') as srv:
        client = ModelClient(ModelConfig(srv.base_url, "scripted"))

It never opens anything but a loopback port and never forwards anything.
"""
from __future__ import annotations

import base64
import json
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Union

from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server
from werkzeug.wrappers import Request as WRequest
from werkzeug.wrappers import Response as WResponse

__all__ = ["Reply", "ScriptedModelServer", "texts_of", "images_of", "last_user_text"]


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted answer.

    Attributes
    ----------
    content : str
        The assistant message's text (a JSON answer, or nonsense on purpose).
    status : int
        HTTP status (200; 500 or 429 to script a failing server).
    delay_s : float
        Seconds to wait before answering (to script a timeout).
    body : str | None
        The whole response body instead of a chat-completions envelope.
    prompt_tokens, completion_tokens : int
        Reported usage; by default about a token per 4 characters.
    """

    content: str = ""
    status: int = 200
    delay_s: float = 0.0
    body: str | None = None
    prompt_tokens: int = -1
    completion_tokens: int = -1


Answer = Union[Reply, str, dict]


class _QuietHandler(WSGIRequestHandler):
    """werkzeug's request handler without a line per request; one request per connection."""

    protocol_version = "HTTP/1.0"

    def log(self, type: str, message: str, *args: Any) -> None:  # noqa: A002 - werkzeug's signature
        return

    def log_request(self, *args: Any, **kwargs: Any) -> None:
        return
Rule = Callable[[dict], Answer]


def texts_of(request: dict) -> list[str]:
    """Every text of a received request's messages (string contents and text parts), in order."""
    out: list[str] = []
    for m in request.get("messages", []):
        c = m.get("content", "")
        if isinstance(c, str):
            out.append(c)
        else:
            out += [p.get("text", "") for p in c if p.get("type") == "text"]
    return out


def last_user_text(request: dict) -> str:
    """The texts of the last user message, joined."""
    for m in reversed(request.get("messages", [])):
        if m.get("role") == "user":
            c = m.get("content", "")
            return c if isinstance(c, str) else "\n".join(p.get("text", "") for p in c if p.get("type") == "text")
    return ""


def images_of(request: dict) -> list[bytes]:
    """The images (decoded bytes of the data URLs) of a received request, in order."""
    out: list[bytes] = []
    for m in request.get("messages", []):
        c = m.get("content", "")
        if isinstance(c, list):
            for p in c:
                if p.get("type") == "image_url":
                    url = p.get("image_url", {}).get("url", "")
                    if url.startswith("data:") and "," in url:
                        out.append(base64.b64decode(url.split(",", 1)[1]))
    return out


class ScriptedModelServer:
    """The server; use as a context manager or call :meth:`start` / :meth:`stop`.

    Parameters
    ----------
    rule : Callable[[dict], Reply | str | dict] | None
        Makes the answer from the request body when the queue is empty
        (a ``dict`` answer is sent as its JSON text).
    model : str
        The model name it claims to serve.

    Attributes
    ----------
    requests : list[dict]
        Every chat-completions request body received, in order.
    base_url : str
        ``http://127.0.0.1:<port>/v1`` once started.
    """

    def __init__(self, rule: Rule | None = None, *, model: str = "scripted") -> None:
        self.rule = rule
        self.model = model
        self.requests: list[dict] = []
        self._queue: list[Answer] = []
        self._lock = threading.Lock()
        self._httpd: BaseWSGIServer | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ""

    def queue(self, *answers: Answer) -> "ScriptedModelServer":
        """Answers given in order to the next requests (before the rule is asked)."""
        with self._lock:
            self._queue.extend(answers)
        return self

    def _answer(self, request: dict) -> Reply:
        with self._lock:
            self.requests.append(request)
            nxt = self._queue.pop(0) if self._queue else None
        if nxt is None:
            nxt = self.rule(request) if self.rule is not None else Reply("no scripted answer", status=500)
        if isinstance(nxt, dict):
            nxt = json.dumps(nxt)
        return Reply(nxt) if isinstance(nxt, str) else nxt

    def _wsgi(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        """The WSGI application (werkzeug parses the request): ``GET .../models``, ``POST .../chat/completions``."""
        req = WRequest(environ)
        path = req.path.rstrip("/")
        if req.method == "GET" and path.endswith("/models"):
            return self._send(200, json.dumps({"object": "list", "data": [{"id": self.model, "object": "model"}]}),
                              environ, start_response)
        if req.method != "POST" or not path.endswith("/chat/completions"):
            return self._send(404, '{"error": "not found"}', environ, start_response)
        raw = req.get_data(cache=False)
        try:
            request = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return self._send(400, '{"error": "bad json"}', environ, start_response)
        reply = self._answer(request)
        if reply.delay_s > 0:
            time.sleep(reply.delay_s)  # a scripted slow model: the client's timeout ends the wait on its side
        if reply.body is not None:
            return self._send(reply.status, reply.body, environ, start_response)
        prompt = reply.prompt_tokens if reply.prompt_tokens >= 0 else len(raw) // 4
        completion = reply.completion_tokens if reply.completion_tokens >= 0 else max(1, len(reply.content) // 4)
        return self._send(reply.status, json.dumps({
            "id": f"scripted-{len(self.requests)}", "object": "chat.completion", "model": self.model,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": reply.content}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        }), environ, start_response)

    @staticmethod
    def _send(status: int, body: str, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        return WResponse(body.encode("utf-8"), status=status, content_type="application/json")(environ, start_response)

    def start(self) -> "ScriptedModelServer":
        """Serve on a free port of 127.0.0.1 in a daemon thread (werkzeug's threaded WSGI server); returns self."""
        if self._httpd is not None:
            return self
        self._httpd = make_server("127.0.0.1", 0, self._wsgi, threaded=True, request_handler=_QuietHandler)
        self._httpd.daemon_threads = True
        port = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1},
                                        name="scripted-model", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; never raises."""
        if self._httpd is not None:
            try:
                self._httpd.shutdown()
                self._httpd.server_close()
            except Exception:  # noqa: BLE001
                pass
        self._httpd = None

    def __enter__(self) -> "ScriptedModelServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
