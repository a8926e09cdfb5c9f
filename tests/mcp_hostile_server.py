"""A real, tiny, misbehaving MCP server on stdio (newline-delimited JSON-RPC, no SDK).

The MCP-source tests wrap it as a pack to see what a hostile or buggy server can do to the
control plane. Every misbehaviour is a tool; ``echo`` behaves. Options:

    --init-delay S       answer ``initialize`` after S seconds
    --banner TEXT        print TEXT on stdout before anything (a careless server's log line)
    --chatty             also print a log line that is not JSON-RPC (plain text, and a JSON
                         log record) on stdout before every message it sends
    --only-junk          answer every request with lines that are not JSON-RPC, never with
                         a message (a server whose stdout is all logs)
    --bad-schemas        also list tools whose schemas the MCP SDK or the control plane
                         refuses (BAD_SCHEMA_TOOLS)
    --only-bad-schemas   list only those tools
    --duplicate-tools    list ``echo`` twice, and ``Echo`` and ``e-c-h-o`` beside it
    --huge-mb N          the size of ``huge``'s answer (default 20)
    --extra-tools FILE   more tool definitions (a JSON list in FILE) after the usual ones
    --http               streamable HTTP on 127.0.0.1:0 instead of stdio (prints
                         ``listening on port N`` on stderr); tools echo, huge (a JSON body),
                         huge_sse (one SSE event), endless (a body that never ends), hang

Tools (arguments in brackets):

    echo [text]            {"content": [{"type": "text", "text": text}]}
    huge                   one JSON-RPC line of ``--huge-mb`` MiB (a text block of "a")
    endless                a line that never ends (writes until killed)
    exit                   the process exits without answering
    hang                   never answers
    wrong_id               answers with another id (and never with the right one)
    flood [count]          ``count`` notifications/message, then the answer
    secret_error           isError: true, the text full of credentials
    nonjson                a line that is not JSON instead of the answer
    bad_utf8               a line that is not UTF-8
    odd_content            content blocks of unexpected types and shapes
    bad_structured         an answer that violates the tool's outputSchema
    stderr_flood [mb]      ``mb`` MiB on stderr in one line, then the answer
    error_data             a JSON-RPC error with a large ``data`` field and secrets in it
    noise [count]          ``count`` lines that are not JSON-RPC on stdout, then the answer
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from typing import Any

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PASSWORD_URL = "postgres://admin:hunter2hunter2@db.internal:5432/prod"

_out = sys.stdout.buffer
_lock = threading.Lock()


#: What goes before every message sent (--chatty: CHATTY_LINES).
_before: list[bytes] = []


def send(obj: Any) -> None:
    write_raw(b"".join(_before) + json.dumps(obj, separators=(",", ":")).encode() + b"\n")


def write_raw(data: bytes) -> None:
    with _lock:
        _out.write(data)
        _out.flush()


def result(req_id: Any, value: Any) -> None:
    send({"jsonrpc": "2.0", "id": req_id, "result": value})


def text_result(req_id: Any, text: str, *, is_error: bool = False) -> None:
    result(req_id, {"content": [{"type": "text", "text": text}], "isError": is_error})


OPEN: dict[str, Any] = {"type": "object", "additionalProperties": True}

TOOLS: list[dict[str, Any]] = [
    {"name": name, "description": f"The {name} misbehaviour.", "inputSchema": OPEN}
    for name in (
        "echo",
        "huge",
        "endless",
        "exit",
        "hang",
        "wrong_id",
        "flood",
        "secret_error",
        "nonjson",
        "bad_utf8",
        "odd_content",
        "stderr_flood",
        "error_data",
        "noise",
    )
]
TOOLS.append(
    {
        "name": "bad_structured",
        "description": "Structured content that breaks its own outputSchema.",
        "inputSchema": OPEN,
        "outputSchema": {
            "type": "object",
            "required": ["count"],
            "properties": {"count": {"type": "integer"}},
        },
    }
)


#: Tools whose schemas cannot be served, each for another reason; listed by --bad-schemas.
BAD_SCHEMA_TOOLS: list[dict[str, Any]] = [
    # Refused by the MCP SDK's model of a tool (until now: the whole tools/list with it).
    {"name": "in_not_object", "inputSchema": {"type": "string"}},
    {"name": "in_not_a_dict", "inputSchema": "object"},
    {"name": "in_missing"},
    {
        "name": "out_bad_required",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "required": "count"},
    },
    # Accepted by the SDK, refused by the registry: not a JSON Schema.
    {
        "name": "in_bad_keyword",
        "inputSchema": {"type": "object", "properties": {"x": {"type": "strin"}}},
    },
    # A reference the control plane must not fetch.
    {
        "name": "in_remote_ref",
        "inputSchema": {
            "type": "object",
            "properties": {"x": {"$ref": "http://schemas.invalid/x.json"}},
        },
    },
]

#: What --chatty prints before each message: a careless server's log lines.
CHATTY_LINES = (
    b"[info] sending a message, token=" + SECRET.encode() + b"\n",
    b'{"level":"info","msg":"sending","password":"hunter2hunter2"}\n',
)


def call_tool(req_id: Any, name: str, args: dict[str, Any], opts: argparse.Namespace) -> None:
    if name == "echo":
        text_result(req_id, str(args.get("text", "")))
    elif name == "huge":
        size = int(opts.huge_mb * 1024 * 1024)
        head = b'{"jsonrpc":"2.0","id":' + json.dumps(req_id).encode()
        body = b',"result":{"content":[{"type":"text","text":"' + b"a" * size + b'"}]}}\n'
        write_raw(head + body)
    elif name == "endless":
        chunk = b"b" * 65536
        with _lock:
            _out.write(b'{"jsonrpc":"2.0","id":' + json.dumps(req_id).encode() + b',"result":"')
            while True:
                _out.write(chunk)
                _out.flush()
    elif name == "noise":
        count = int(args.get("count", 1000))
        for i in range(count):
            write_raw(f"noise {i} of {count}: password={SECRET}\n".encode())
        text_result(req_id, "after the noise")
    elif name == "exit":
        os._exit(3)
    elif name == "hang":
        pass
    elif name == "wrong_id":
        text_result(10_000_000 + int(req_id) if isinstance(req_id, int) else "nope", "stray")
    elif name == "flood":
        for i in range(int(args.get("count", 10000))):
            send(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/message",
                    "params": {"level": "info", "data": f"flood {i} token={SECRET}"},
                }
            )
        text_result(req_id, "after the flood")
    elif name == "secret_error":
        text_result(
            req_id,
            f"connect failed: Authorization: Bearer {SECRET} url={PASSWORD_URL} "
            f"password=hunter2hunter2",
            is_error=True,
        )
    elif name == "nonjson":
        write_raw(b"this is not JSON: token=" + SECRET.encode() + b"\n")
    elif name == "bad_utf8":
        head = b'{"jsonrpc":"2.0","id":' + json.dumps(req_id).encode()
        write_raw(head + b',"result":"\xff\xfe"}\n')
    elif name == "odd_content":
        result(
            req_id,
            {
                "content": [
                    {"type": "text", "text": "plain"},
                    {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
                    {"type": "audio", "data": "aGVsbG8=", "mimeType": "audio/wav"},
                    {"type": "resource_link", "uri": "file:///etc/passwd", "name": "passwd"},
                    {
                        "type": "resource",
                        "resource": {"uri": "file:///x", "blob": "aGVsbG8=", "mimeType": "x/y"},
                    },
                    {"type": "hologram", "payload": {"nested": [1, 2, 3]}},
                ]
            },
        )
    elif name == "bad_structured":
        result(
            req_id,
            {
                "content": [{"type": "text", "text": '{"count": "many"}'}],
                "structuredContent": {"count": "many", "token": SECRET},
            },
        )
    elif name == "stderr_flood":
        size = int(float(args.get("mb", 8)) * 1024 * 1024)
        sys.stderr.write(f"password={SECRET} " + "e" * size + "\n")
        sys.stderr.flush()
        text_result(req_id, "after the stderr flood")
    elif name == "error_data":
        send(
            {
                "jsonrpc": "2.0",
                "id": req_id,
                "error": {
                    "code": -32050,
                    "message": f"backend refused: token={SECRET}",
                    "data": {"dump": "d" * 1_000_000, "password": "hunter2hunter2"},
                },
            }
        )
    else:
        send({"jsonrpc": "2.0", "id": req_id, "error": {"code": -32602, "message": "Unknown tool"}})


def serve_http(opts: argparse.Namespace) -> None:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    size = int(opts.huge_mb * 1024 * 1024)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _json(self, obj: Any, status: int = 200) -> None:
            body = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Mcp-Session-Id", "s1")
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_DELETE(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            msg = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            method, req_id = msg.get("method"), msg.get("id")
            if req_id is None:
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if method == "initialize":
                self._json(
                    {
                        "jsonrpc": "2.0",
                        "id": req_id,
                        "result": {
                            "protocolVersion": msg["params"]["protocolVersion"],
                            "capabilities": {"tools": {}},
                            "serverInfo": {"name": "hostile-http", "version": "1.0.0"},
                        },
                    }
                )
            elif method == "ping":
                self._json({"jsonrpc": "2.0", "id": req_id, "result": {}})
            elif method == "tools/list":
                names = ["echo", "huge", "huge_sse", "endless", "hang"]
                tools = [{"name": n, "inputSchema": OPEN} for n in names]
                self._json({"jsonrpc": "2.0", "id": req_id, "result": {"tools": tools}})
            elif method == "tools/call":
                self._call(req_id, msg["params"]["name"], msg["params"].get("arguments") or {})

        def _call(self, req_id: Any, name: str, args: dict[str, Any]) -> None:
            head = b'{"jsonrpc":"2.0","id":' + json.dumps(req_id).encode()
            huge = head + b',"result":{"content":[{"type":"text","text":"' + b"a" * size + b'"}]}}'
            if name == "echo":
                text = str(args.get("text", ""))
                content = [{"type": "text", "text": text}]
                self._json({"jsonrpc": "2.0", "id": req_id, "result": {"content": content}})
            elif name == "huge":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(huge)))
                self.end_headers()
                self.wfile.write(huge)
            elif name == "huge_sse":
                body = b"event: message\ndata: " + huge + b"\n\n"
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            elif name == "endless":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(head + b',"result":"')
                try:
                    while True:
                        self.wfile.write(b"b" * 65536)
                except OSError:
                    return
            elif name == "hang":
                time.sleep(3600)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    sys.stderr.write(f"listening on port {server.server_address[1]}\n")
    sys.stderr.flush()
    server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--init-delay", type=float, default=0.0)
    parser.add_argument("--banner", default=None)
    parser.add_argument("--duplicate-tools", action="store_true")
    parser.add_argument("--huge-mb", type=float, default=20.0)
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--extra-tools", default=None)
    parser.add_argument("--chatty", action="store_true")
    parser.add_argument("--only-junk", action="store_true")
    parser.add_argument("--bad-schemas", action="store_true")
    parser.add_argument("--only-bad-schemas", action="store_true")
    opts = parser.parse_args()
    if opts.chatty:
        _before.extend(CHATTY_LINES)
    if opts.http:
        serve_http(opts)
        return
    tools = [] if opts.only_bad_schemas else list(TOOLS)
    if opts.bad_schemas or opts.only_bad_schemas:
        tools += BAD_SCHEMA_TOOLS
    if opts.duplicate_tools:
        tools += [
            {"name": "echo", "description": "A second echo.", "inputSchema": OPEN},
            {"name": "Echo", "description": "Another.", "inputSchema": OPEN},
            {"name": "e-c-h-o", "description": "And another.", "inputSchema": OPEN},
        ]
    if opts.extra_tools:
        with open(opts.extra_tools, encoding="utf-8") as file:
            tools += json.load(file)
    if opts.banner is not None:
        write_raw(opts.banner.encode() + b"\n")
    for raw in sys.stdin.buffer:
        try:
            msg = json.loads(raw)
        except ValueError:
            continue
        method = msg.get("method")
        req_id = msg.get("id")
        if opts.only_junk:
            if req_id is not None:
                write_raw(f"got {method} #{req_id}; token={SECRET}\n".encode())
                write_raw(b'{"level":"debug","msg":"not answering"}\n')
            continue
        if method == "initialize":
            if opts.init_delay:
                time.sleep(opts.init_delay)
            result(
                req_id,
                {
                    "protocolVersion": msg["params"]["protocolVersion"],
                    "capabilities": {"tools": {}, "logging": {}},
                    "serverInfo": {"name": "hostile", "version": "1.0.0"},
                },
            )
        elif method == "ping":
            result(req_id, {})
        elif method == "tools/list":
            result(req_id, {"tools": tools})
        elif method == "tools/call":
            params = msg.get("params") or {}
            threading.Thread(
                target=call_tool,
                args=(req_id, params.get("name"), params.get("arguments") or {}, opts),
                daemon=True,
            ).start()
        elif req_id is not None:
            send({"jsonrpc": "2.0", "id": req_id, "error": {"code": -32601, "message": "nope"}})


if __name__ == "__main__":
    main()
