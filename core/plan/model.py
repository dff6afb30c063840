"""An OpenAI-compatible chat-completions client (vLLM, llama.cpp server, Ollama, a hosted API) over httpx.

The model is one optional decider of the chain (P1-P3, P7, P10): nothing
needs it, and everything it answers is checked.  This module only talks to
the server:

* ``POST {base_url}/chat/completions`` with ``model``, ``messages``,
  ``temperature`` and ``max_tokens``; images travel as ``data:image/png;base64``
  URLs inside ``image_url`` content parts;
* the answer's first choice must be one JSON object (a fenced ```json block
  is accepted) validated by a fixed pydantic schema;
* every call has a timeout (:attr:`ModelConfig.timeout_s`) and at most
  :attr:`ModelConfig.retries` retries, 300 ms apart (P6; tenacity's ``Retrying``), for transport
  errors, HTTP 429/5xx and answers that are not the schema's JSON;
* when it still fails, :class:`ModelUnreachable` or :class:`ModelAnswerError`
  says why in one line - the caller escalates with that reason, nothing is
  guessed;
* every text of a message goes through the :class:`~core.secrets.Redactor`
  once more just before it is sent (the callers mask screenshots and strip
  secrets already; a secret never reaches a model in clear).

The counters of :class:`ModelCounters` (calls, prompt/completion tokens,
latency ms, cache hits) are shared by everything that uses one client, so a
run can report them (:meth:`ModelCounters.snapshot` and
:meth:`ModelCounters.since`).
"""
from __future__ import annotations

import base64
import json
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence, TypeVar

import httpx
from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_fixed
from pydantic import BaseModel, ValidationError

from core.secrets import Redactor

__all__ = [
    "ModelConfig", "ModelError", "ModelUnreachable", "ModelAnswerError", "CallUsage", "ModelCounters",
    "ModelClient", "image_part", "text_part", "DEFAULT_TIMEOUT_S", "DEFAULT_RETRIES", "RETRY_DELAY_MS",
]

#: Seconds one call may take (connect + answer); a local vision model answers within this.
DEFAULT_TIMEOUT_S = 30.0
#: Extra attempts after a failed call (P6: 2 retries).
DEFAULT_RETRIES = 2
#: Pause before a retry, ms (P6: 300 ms).
RETRY_DELAY_MS = 300
#: Most characters of a bad answer quoted in an error.
_QUOTE = 160

S = TypeVar("S", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class ModelConfig:
    """Where the model is and how it is called.

    Attributes
    ----------
    base_url : str
        The server's OpenAI-compatible root, e.g. ``http://127.0.0.1:8000/v1``
        (``/chat/completions`` is appended).
    model : str
        Model name the server knows.
    api_key : str
        Bearer token ("" = none sent); never shown by ``repr``.
    timeout_s : float
        Per call, s (:data:`DEFAULT_TIMEOUT_S`).
    retries : int
        Extra attempts (:data:`DEFAULT_RETRIES`).
    max_tokens : int
        Completion limit per call.
    temperature : float
        0 for repeatable answers.
    role : str
        ``"primary"`` or ``"cross_check"`` (P10), for the counters and messages.
    """

    base_url: str
    model: str
    api_key: str = field(default="", repr=False)
    timeout_s: float = DEFAULT_TIMEOUT_S
    retries: int = DEFAULT_RETRIES
    max_tokens: int = 512
    temperature: float = 0.0
    role: str = "primary"

    def __post_init__(self) -> None:
        if not self.base_url.startswith(("http://", "https://")):
            raise ValueError(f"model base_url must start with http:// or https://, got {self.base_url!r}")
        if not self.model:
            raise ValueError("model name is empty")
        if self.timeout_s <= 0 or self.retries < 0:
            raise ValueError(f"model timeout_s must be > 0 and retries >= 0, got {self.timeout_s}, {self.retries}")

    @property
    def endpoint(self) -> str:
        """The chat-completions URL."""
        return self.base_url.rstrip("/") + "/chat/completions"


class ModelError(RuntimeError):
    """The model could not give a usable answer; ``reason`` is one line for the escalation."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ModelUnreachable(ModelError):
    """No answer: connection refused, timeout, HTTP error after the retries."""


class ModelAnswerError(ModelError):
    """An answer that is not the schema's JSON (after the retries)."""


@dataclass(frozen=True, slots=True)
class CallUsage:
    """What one call cost.

    Attributes
    ----------
    prompt_tokens, completion_tokens : int
        As the server reported them (0 when it does not).
    latency_ms : float
        Wall time of the call including retries, ms.
    attempts : int
        HTTP requests made (1 + retries used).
    cached : bool
        True when the answer came from a cache and no request was made.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    attempts: int = 1
    cached: bool = False


class ModelCounters:
    """Calls, tokens, latency and cache hits of one client (thread-safe).

    ``calls`` counts answered calls (requests that failed for good count in
    ``errors``); ``cache_hits`` is counted by the callers that cache
    decisions (P9) through :meth:`cache_hit`.
    """

    FIELDS = ("calls", "errors", "prompt_tokens", "completion_tokens", "latency_ms", "cache_hits")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._v: dict[str, float] = dict.fromkeys(self.FIELDS, 0)

    def add(self, usage: CallUsage) -> None:
        with self._lock:
            self._v["calls"] += 1
            self._v["prompt_tokens"] += usage.prompt_tokens
            self._v["completion_tokens"] += usage.completion_tokens
            self._v["latency_ms"] += usage.latency_ms

    def error(self, latency_ms: float) -> None:
        with self._lock:
            self._v["errors"] += 1
            self._v["latency_ms"] += latency_ms

    def cache_hit(self) -> None:
        with self._lock:
            self._v["cache_hits"] += 1

    def snapshot(self) -> dict[str, float]:
        """The totals so far: ``{"calls", "errors", "prompt_tokens", "completion_tokens", "latency_ms", "cache_hits"}``."""
        with self._lock:
            return dict(self._v)

    def since(self, before: Mapping[str, float]) -> dict[str, float]:
        """Totals minus an earlier :meth:`snapshot` (one run's share); latency rounded to 0.1 ms."""
        now = self.snapshot()
        out = {k: now[k] - before.get(k, 0) for k in self.FIELDS}
        out["latency_ms"] = round(out["latency_ms"], 1)
        return {k: (int(v) if k != "latency_ms" else v) for k, v in out.items()}


def image_part(png: bytes) -> dict[str, Any]:
    """An ``image_url`` content part carrying ``png`` as a base64 data URL."""
    return {"type": "image_url",
            "image_url": {"url": "data:image/png;base64," + base64.b64encode(png).decode("ascii")}}


def text_part(text: str) -> dict[str, Any]:
    """A ``text`` content part."""
    return {"type": "text", "text": text}


_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.S)


def _json_object(content: str) -> Any:
    """The JSON object of an answer: the whole text, else a fenced block, else the outermost braces."""
    text = content.strip()
    for attempt in (text, *(_FENCE.findall(text))):
        try:
            return json.loads(attempt)
        except (json.JSONDecodeError, TypeError):
            continue
    a, b = text.find("{"), text.rfind("}")
    if 0 <= a < b:
        return json.loads(text[a:b + 1])  # raises JSONDecodeError when it is not JSON either
    raise json.JSONDecodeError("no JSON object in the answer", text, 0)


def _short(s: str) -> str:
    s = " ".join(str(s).split())
    return s if len(s) <= _QUOTE else s[:_QUOTE] + "..."


class ModelClient:
    """Calls one OpenAI-compatible server; the caller owns it and closes it.

    Parameters
    ----------
    config : ModelConfig
        Server, model, key, timeout, retries.
    redactor : Redactor | None
        Masks known secret values in every text part before sending (and in
        error messages).
    transport : httpx.BaseTransport | None
        For tests only (the scripted server is a real HTTP server instead).
    """

    def __init__(self, config: ModelConfig, *, redactor: Redactor | None = None,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.config = config
        self.redactor = redactor or Redactor(())
        self.counters = ModelCounters()
        headers = {"Content-Type": "application/json"}
        if config.api_key:
            headers["Authorization"] = f"Bearer {config.api_key}"
        self._http = httpx.Client(timeout=httpx.Timeout(config.timeout_s), headers=headers, transport=transport,
                                  trust_env=False)
        self._lock = threading.Lock()

    def close(self) -> None:
        """Close the HTTP connection pool; never raises."""
        try:
            self._http.close()
        except Exception:  # noqa: BLE001
            pass

    def __enter__(self) -> "ModelClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ModelClient({self.config.role}: {self.config.model} at {self.config.base_url})"

    def _clean(self, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Messages with every text (string content or text part) redacted; image parts as they are."""
        out = []
        for m in messages:
            content = m.get("content", "")
            if isinstance(content, str):
                content = self.redactor.text(content)
            else:
                content = [({**p, "text": self.redactor.text(p.get("text", ""))} if p.get("type") == "text" else dict(p))
                           for p in content]
            out.append({"role": m["role"], "content": content})
        return out

    def complete_json(self, messages: Sequence[Mapping[str, Any]], schema: type[S]) -> tuple[S, CallUsage]:
        """Ask the model and validate its answer against ``schema``.

        Parameters
        ----------
        messages : Sequence[Mapping]
            Chat messages (``{"role", "content"}``; content a string or a
            list of :func:`text_part` / :func:`image_part`).
        schema : type[pydantic.BaseModel]
            The fixed shape of the answer.

        Returns
        -------
        (answer, usage)
            The validated answer and what the call cost (also added to
            :attr:`counters`).

        Raises
        ------
        ModelUnreachable
            Connection refused, timeout, HTTP error status (after the retries).
        ModelAnswerError
            The answer is not one JSON object of ``schema`` (after the retries).
        """
        body = {"model": self.config.model, "messages": self._clean(messages), "temperature": self.config.temperature,
                "max_tokens": self.config.max_tokens}
        t0 = time.perf_counter()
        # tenacity: 1 + retries attempts, RETRY_DELAY_MS apart, only a ModelError is tried again
        retrying = Retrying(stop=stop_after_attempt(1 + max(0, self.config.retries)),
                            wait=wait_fixed(RETRY_DELAY_MS / 1000.0), retry=retry_if_exception_type(ModelError),
                            reraise=True)
        try:
            answer, tokens = retrying(self._once, body, schema)
        except ModelError as exc:
            last = exc
        else:
            attempts = int(retrying.statistics.get("attempt_number", 1))
            usage = CallUsage(tokens[0], tokens[1], (time.perf_counter() - t0) * 1000.0, attempts)
            self.counters.add(usage)
            return answer, usage
        attempts = int(retrying.statistics.get("attempt_number", 1))
        self.counters.error((time.perf_counter() - t0) * 1000.0)
        kind = type(last)
        raise kind(f"model {self.config.model!r} at {self.config.base_url} ({self.config.role}): {last.reason} "
                   f"(after {attempts} attempt{'s' if attempts != 1 else ''})")

    def _once(self, body: Mapping[str, Any], schema: type[S]) -> tuple[S, tuple[int, int]]:
        try:
            with self._lock:
                resp = self._http.post(self.config.endpoint, json=body)
        except httpx.TimeoutException:
            raise ModelUnreachable(f"no answer within {self.config.timeout_s:g} s") from None
        except httpx.HTTPError as exc:
            raise ModelUnreachable(f"unreachable: {type(exc).__name__}: {_short(str(exc))}") from None
        if resp.status_code != 200:
            raise ModelUnreachable(f"HTTP {resp.status_code}: {_short(self.redactor.text(resp.text))}")
        try:
            data = resp.json()
            content = data["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ModelAnswerError(f"not a chat-completions answer: {_short(self.redactor.text(resp.text))}") from None
        usage = data.get("usage") or {}
        tokens = (int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
        if not isinstance(content, str):
            raise ModelAnswerError("the answer has no text content")
        try:
            obj = _json_object(content)
        except (json.JSONDecodeError, ValueError):
            raise ModelAnswerError(f"the answer is not JSON: {_short(self.redactor.text(content))!r}") from None
        try:
            return schema.model_validate(obj), tokens
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first.get("loc", ())) or "answer"
            raise ModelAnswerError(f"the answer does not fit {schema.__name__}: field {where!r}: {first.get('msg')}"
                                   ) from None
