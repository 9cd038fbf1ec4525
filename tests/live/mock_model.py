#!/usr/bin/env python3
"""A scripted OpenAI chat-completions server for tests/live_conformance.rs (stdlib only).

Usage: mock_model.py SCRIPT.json LOG.jsonl
Binds 127.0.0.1 on a free port and prints `PORT <n>` on stdout once it listens.

SCRIPT.json: {"conversations": [{"match": "TEXT", "steps": [STEP, ...]}, ...]}
A request belongs to the first conversation whose `match` occurs in its first user
message; its step is the number of assistant messages it already holds (one per tool round).
A STEP is {"tool": NAME, "args": {...}} (a tool call), {"calls": [{"tool", "args"}, ...]}
(several tool calls in one reply) or {"text": "..."} (a final answer).
Past the last step, or with no conversation matching (title generation...), the reply is
the text "done". Every request body is appended to LOG.jsonl as one JSON line, with the
conversation and step chosen, so the test reads what the model was offered and told.
"""
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SCRIPT = json.load(open(sys.argv[1]))
LOG = sys.argv[2]
LOCK = threading.Lock()


def text_of(content):
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def choose(body):
    msgs = body.get("messages") or []
    first_user = next((text_of(m.get("content")) for m in msgs if m.get("role") == "user"), "")
    rounds = sum(1 for m in msgs if m.get("role") == "assistant")
    for i, conv in enumerate(SCRIPT.get("conversations", [])):
        if conv["match"] in first_user:
            steps = conv["steps"]
            step = steps[rounds] if rounds < len(steps) else {"text": "done"}
            return i, rounds, step
    return None, rounds, {"text": "done"}


def chunk(model, delta, finish=None, usage=None):
    c = {
        "id": "chatcmpl-mock",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage is not None:
        c["usage"] = usage
    return c


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        body = json.dumps({"object": "list", "data": [{"id": "m1", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n)
        try:
            body = json.loads(raw)
        except ValueError:
            body = {"unparsed": raw.decode("utf-8", "replace")}
        conv, rounds, step = choose(body)
        with LOCK, open(LOG, "a") as f:
            f.write(json.dumps({"path": self.path, "conversation": conv, "step": rounds,
                                "reply": step, "body": body}) + "\n")
        model = body.get("model", "m1")
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        call_id = "call_%s_%s" % (conv, rounds)
        calls = step.get("calls") or ([step] if "tool" in step else [])
        if calls:
            tool_calls = [
                {"id": call_id if len(calls) == 1 else "%s_%d" % (call_id, k), "type": "function",
                 "function": {"name": c["tool"], "arguments": json.dumps(c.get("args", {}))}}
                for k, c in enumerate(calls)]
            deltas = [
                chunk(model, {"role": "assistant", "content": None, "tool_calls": [
                    dict(tc, index=k) for k, tc in enumerate(tool_calls)]}),
                chunk(model, {}, "tool_calls", usage),
            ]
            message = {"role": "assistant", "content": None, "tool_calls": tool_calls}
            finish = "tool_calls"
        else:
            deltas = [
                chunk(model, {"role": "assistant", "content": step["text"]}),
                chunk(model, {}, "stop", usage),
            ]
            message = {"role": "assistant", "content": step["text"]}
            finish = "stop"
        if body.get("stream"):
            out = b"".join(b"data: " + json.dumps(d).encode() + b"\n\n" for d in deltas)
            out += b"data: [DONE]\n\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
        else:
            out = json.dumps({"id": "chatcmpl-mock", "object": "chat.completion",
                              "created": int(time.time()), "model": model,
                              "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                              "usage": usage}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print("PORT %d" % server.server_address[1], flush=True)
server.serve_forever()
