"""The sage-pddl thor-server wire protocol, version 1 (docs/thor-protocol.md is the reference).

Transport: one ZMQ REQ/REP exchange per command (the server is a ROUTER, so REQ and DEALER
clients both work); each message is one frame of UTF-8 JSON holding one object. Every request
carries `"v": 1` and `"cmd"`; an optional `"id"` (string or integer) is echoed in the reply, and
`"token"` carries the shared secret of a server started with `--token-file`. Every reply
carries `"v": 1` and `"ok"`; on `ok: false` it carries `"error": {"code", "message"}`. A
failed *action* is not a protocol error: `step` answers `ok: true` with `result.success: false`.

Requests (fields beyond these are rejected with `bad-request`):

| cmd          | fields                                                                           |
|--------------|----------------------------------------------------------------------------------|
| ping         | -                                                                                |
| reset        | `problem` (PDDL text) with `domain` (PDDL text or a registered domain name), or  |
|              | `task` (a task reference such as `ithor#K01`, optional `domain` name); optional  |
|              | `hidden` (list of facts), `faults` (list of fault specs), `scene` (simulator scene)|
| step         | `step`: `{"action", "args"}`, `{"action", "object", "target"}` or a text step     |
| get_state    | -                                                                                |
| get_objects  | -                                                                                |
| close        | - (the server replies, then exits)                                               |

Replies to episode commands carry `"episode"`: the id of the client's episode (a new one per
reset). Error codes: `bad-json`, `bad-request`, `unknown-command`, `version-mismatch`,
`too-large`, `no-episode`, `bad-problem`, `backend-error`, `unauthorized`, `busy`, `timeout`.

`decode_request` validates raw bytes into a `Request` (raising `ProtocolError` with the code),
`encode` / `decode_reply` handle the other direction.
"""
from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.limits import load_json

PROTOCOL_VERSION = 1
DEFAULT_MAX_BYTES = 1 << 20  # 1 MiB
COMMANDS = ("ping", "reset", "step", "get_state", "get_objects", "close")
# Safe to send twice: a retry after a lost reply changes nothing (reset restarts the same episode).
IDEMPOTENT = frozenset({"ping", "reset", "get_state", "get_objects"})

ERROR_CODES = ("bad-json", "bad-request", "unknown-command", "version-mismatch", "too-large",
               "no-episode", "bad-problem", "backend-error", "unauthorized", "busy", "timeout")

_FIELDS: dict[str, tuple[frozenset[str], frozenset[str]]] = {  # cmd -> (required, optional)
    "ping": (frozenset(), frozenset()),
    "reset": (frozenset(), frozenset({"domain", "problem", "task", "hidden", "faults", "scene"})),
    "step": (frozenset({"step"}), frozenset()),
    "get_state": (frozenset(), frozenset()),
    "get_objects": (frozenset(), frozenset()),
    "close": (frozenset(), frozenset()),
}
_ENVELOPE = frozenset({"v", "cmd", "id", "token"})


class ProtocolError(SageError):
    """A message that breaks the protocol; `code` is one of ERROR_CODES."""

    def __init__(self, code: str, message: str, request_id: Any = None):
        self.code = code
        self.message = message
        self.request_id = request_id
        super().__init__(f"{code}: {message}")


@dataclass(frozen=True)
class Request:
    """A validated request: the command, its fields (without the envelope) and the echo id."""

    cmd: str
    fields: Mapping[str, Any] = field(default_factory=dict)
    id: Any = None
    token: str | None = field(default=None, repr=False)


def encode(message: Mapping[str, Any]) -> bytes:
    """One frame of JSON. ASCII-escaped, so any string a request carried (a lone surrogate
    in an `id` included) can be sent back."""
    return json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def port_number(text: str) -> int:
    """A TCP port from the command line, 0 to 65535 (an argparse `type`)."""
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is a whole number from 0 to 65535, "
                                         f"not {text!r}")
    return port


def request(cmd: str, request_id: Any = None, **fields: Any) -> dict:
    message = {"v": PROTOCOL_VERSION, "cmd": cmd, **fields}
    if request_id is not None:
        message["id"] = request_id
    return message


def reply(request_id: Any = None, **fields: Any) -> dict:
    message = {"v": PROTOCOL_VERSION, "ok": True, **fields}
    if request_id is not None:
        message["id"] = request_id
    return message


def error_reply(code: str, message: str, request_id: Any = None) -> dict:
    out = {"v": PROTOCOL_VERSION, "ok": False, "error": {"code": code, "message": message}}
    if request_id is not None:
        out["id"] = request_id
    return out


def _is_str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _check_step(step: Any) -> None:
    if isinstance(step, str):
        if not step.strip():
            raise ValueError("'step' text is empty")
        return
    if not isinstance(step, dict):
        raise ValueError("'step' must be an object or a string")
    if not isinstance(step.get("action"), str) or not step["action"].strip():
        raise ValueError("'step.action' must be a non-empty string")
    if "args" in step and not _is_str_list(step["args"]):
        raise ValueError("'step.args' must be a list of strings")
    for name in ("object", "target", "text", "reason"):
        if name in step and not isinstance(step[name], str):
            raise ValueError(f"'step.{name}' must be a string")


def _check_reset(fields: Mapping[str, Any]) -> None:
    for name in ("domain", "problem", "task", "scene"):
        if name in fields and not isinstance(fields[name], str):
            raise ValueError(f"'{name}' must be a string")
    for name in ("hidden", "faults"):
        if name in fields and not _is_str_list(fields[name]):
            raise ValueError(f"'{name}' must be a list of strings")
    has_problem, has_task = "problem" in fields, "task" in fields
    if has_problem == has_task:
        raise ValueError("reset needs exactly one of 'problem' (with 'domain') or 'task'")
    if has_problem and "domain" not in fields:
        raise ValueError("reset with 'problem' needs 'domain' (PDDL text or a domain name)")


def _load(raw: bytes, what: str) -> Any:
    """One frame as JSON, within the shared limits on nesting and number length."""
    try:
        return load_json(raw.decode("utf-8"), f"<{what}>", what)
    except UnicodeDecodeError as error:
        raise ProtocolError("bad-json", f"the {what} is not UTF-8: {error}") from None
    except SageError as error:
        raise ProtocolError("bad-json", f"the {what} is not usable JSON: "
                            f"{getattr(error, 'message', error)}") from None


def decode_request(raw: bytes, max_bytes: int = DEFAULT_MAX_BYTES) -> Request:
    """Validate one request frame; raises ProtocolError with the matching error code."""
    if len(raw) > max_bytes:
        raise ProtocolError("too-large", f"message of {len(raw)} bytes exceeds the limit of "
                                         f"{max_bytes} bytes")
    message = _load(raw, "request")
    if not isinstance(message, dict):
        raise ProtocolError("bad-json", "a message must be a JSON object")
    request_id = message.get("id")
    if request_id is not None and (not isinstance(request_id, (str, int)) or
                                   isinstance(request_id, bool)):
        raise ProtocolError("bad-request", "'id' must be a string or an integer")
    token = message.get("token")
    if token is not None and not isinstance(token, str):
        raise ProtocolError("bad-request", "'token' must be a string", request_id)
    version = message.get("v")
    if type(version) is not int or version != PROTOCOL_VERSION:  # (`true` and 1.0 equal 1)
        raise ProtocolError("version-mismatch", f"protocol version {version!r} is not supported; "
                            f"this server speaks v{PROTOCOL_VERSION}", request_id)
    cmd = message.get("cmd")
    if not isinstance(cmd, str):
        raise ProtocolError("bad-request", "'cmd' must be a string", request_id)
    if cmd not in _FIELDS:
        raise ProtocolError("unknown-command", f"unknown command {cmd!r}; known: "
                            f"{', '.join(COMMANDS)}", request_id)
    required, optional = _FIELDS[cmd]
    fields = {k: v for k, v in message.items() if k not in _ENVELOPE}
    missing = sorted(required - fields.keys())
    unknown = sorted(fields.keys() - required - optional)
    if missing:
        raise ProtocolError("bad-request", f"{cmd}: missing field(s) {', '.join(missing)}",
                            request_id)
    if unknown:
        raise ProtocolError("bad-request", f"{cmd}: unknown field(s) {', '.join(unknown)}",
                            request_id)
    try:
        if cmd == "step":
            _check_step(fields["step"])
        elif cmd == "reset":
            _check_reset(fields)
    except ValueError as error:
        raise ProtocolError("bad-request", f"{cmd}: {error}", request_id) from None
    return Request(cmd, fields, request_id, token)


def decode_reply(raw: bytes) -> dict:
    """Read a reply frame (client side); raises ProtocolError on a malformed reply."""
    message = _load(raw, "reply")
    if not isinstance(message, dict) or not isinstance(message.get("ok"), bool):
        raise ProtocolError("bad-json", "the server sent a reply without 'ok'")
    if type(message.get("v")) is not int or message.get("v") != PROTOCOL_VERSION:
        raise ProtocolError("version-mismatch", f"the server speaks protocol version "
                            f"{message.get('v')!r}; this client speaks v{PROTOCOL_VERSION}")
    return message
