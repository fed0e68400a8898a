#!/usr/bin/env python3
"""A scripted stand-in for a model provider, for agentsh's end-to-end suite (tests/e2e).

It listens on 127.0.0.1 only and speaks just enough of three APIs for an agent CLI to make one
shell tool call and send its result back:

  Anthropic Messages   POST /v1/messages (JSON or SSE), /v1/messages/count_tokens   (Claude Code)
  OpenAI Responses     POST /v1/responses (SSE)                                       (Codex)
  Gemini               POST .../models/M:streamGenerateContent | :generateContent | :countTokens

The script: the first request that offers the agent's shell tool is answered with one call
running COMMAND. The request that carries that call's result has the result written to
OUT/result.txt, and gets a short final answer. With --pty-answer KEYS (Codex only) the shell
call asks for a terminal (`tty: true`), and when the result shows a session still running, the
"model" types KEYS into it with `write_stdin` (a 4-digit code shown as `type the code NNNN`
is typed instead): the self-approval probe. Everything else (titles, routing, quota checks)
gets a plain short answer. Every request is appended to OUT/requests.jsonl.

Usage: model.py --out DIR --command CMD [--pty-answer KEYS] [--port-file FILE]
"""
import argparse
import json
import os
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OPTS = None
LOCK = threading.Lock()
CALLS = {"n": 0}
DONE = "E2E-FINAL"
MAX_CALLS = 4


def record(name, text):
    with LOCK, open(os.path.join(OPTS.out, name), "a") as f:
        f.write(text)


def next_call():
    with LOCK:
        if CALLS["n"] >= MAX_CALLS:
            return None
        CALLS["n"] += 1
        return CALLS["n"]


def result(text):
    # Each result in its own file (the last one is what the test reads), and all in one.
    with LOCK:
        n = len([f for f in os.listdir(OPTS.out) if f.startswith("result")]) + 1
        with open(os.path.join(OPTS.out, f"result.{n}.txt"), "w") as f:
            f.write(text)
        with open(os.path.join(OPTS.out, "result.txt"), "w") as f:
            f.write(text)


# --------------------------------------------------------------------------- Anthropic

def anthropic(h, body):
    messages = body.get("messages") or []
    tools = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
    last = messages[-1] if messages else {}
    got = None
    if last.get("role") == "user" and isinstance(last.get("content"), list):
        for block in last["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result" and \
                    str(block.get("tool_use_id", "")).startswith("toolu_e2e"):
                got = block
    stop = "end_turn"
    if got is not None:
        c = got.get("content")
        text = c if isinstance(c, str) else "\n".join(
            b.get("text", "") for b in c or [] if isinstance(b, dict) and b.get("type") == "text")
        result(text)
        blocks = [{"type": "text", "text": DONE}]
    elif "Bash" in tools and (n := next_call()) is not None:
        blocks = [{"type": "tool_use", "id": f"toolu_e2e_{n}", "name": "Bash",
                   "input": {"command": OPTS.command, "description": "e2e command"}}]
        stop = "tool_use"
    else:
        blocks = [{"type": "text", "text": '{"title": "e2e", "isNewTopic": false}'}]
    msg = {"id": "msg_e2e", "type": "message", "role": "assistant", "model": body.get("model", "m"),
           "content": blocks, "stop_reason": stop, "stop_sequence": None,
           "usage": {"input_tokens": 1, "output_tokens": 1}}
    if not body.get("stream"):
        return h.json(msg)
    h.sse_start()
    h.sse({"type": "message_start", "message": dict(msg, content=[], stop_reason=None)}, "message_start")
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            h.sse({"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}},
                  "content_block_start")
            h.sse({"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": b["text"]}},
                  "content_block_delta")
        else:
            h.sse({"type": "content_block_start", "index": i,
                   "content_block": {"type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}},
                  "content_block_start")
            h.sse({"type": "content_block_delta", "index": i,
                   "delta": {"type": "input_json_delta", "partial_json": json.dumps(b["input"])}},
                  "content_block_delta")
        h.sse({"type": "content_block_stop", "index": i}, "content_block_stop")
    h.sse({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 1}}, "message_delta")
    h.sse({"type": "message_stop"}, "message_stop")


# --------------------------------------------------------------------------- OpenAI Responses

def output_text(item):
    out = item.get("output")
    if isinstance(out, list):
        return "\n".join(x.get("text", "") for x in out if isinstance(x, dict))
    if isinstance(out, dict):
        return str(out.get("content", json.dumps(out)))
    return str(out)


SEEN = set()


def responses(h, body):
    items = body.get("input") if isinstance(body.get("input"), list) else []
    outputs = [i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"
               and str(i.get("call_id", "")).startswith("call_e2e")]
    tools = {t.get("name"): t for t in body.get("tools") or [] if isinstance(t, dict)}
    reply = [{"type": "message", "role": "assistant", "id": "msg_e2e",
              "content": [{"type": "output_text", "text": DONE, "annotations": []}]}]
    for o in outputs:
        if o["call_id"] not in SEEN:
            SEEN.add(o["call_id"])
            result(output_text(o))
    if outputs:
        last = output_text(outputs[-1])
        session = re.search(r"session ID (\d+)", last)
        if OPTS.pty_answer and session and len(outputs) == 1 and "write_stdin" in tools:
            code = re.search(r"type the code (\d{4})", last)
            keys = code.group(1) + "\r" if code else OPTS.pty_answer
            n = next_call()
            args = {"session_id": int(session.group(1)), "chars": keys, "yield_time_ms": 5000}
            record("model.log", f"write_stdin {json.dumps(args)}\n")
            reply = [{"type": "function_call", "id": "fc_e2e_2", "call_id": f"call_e2e_{n}",
                      "name": "write_stdin", "arguments": json.dumps(args)}]
    elif "exec_command" in tools and (n := next_call()) is not None:
        args = {"cmd": OPTS.command}
        if OPTS.pty_answer:
            args.update(tty=True, yield_time_ms=3000)
        record("model.log", f"exec_command {json.dumps(args)}\n")
        reply = [{"type": "function_call", "id": f"fc_e2e_{n}", "call_id": f"call_e2e_{n}",
                  "name": "exec_command", "arguments": json.dumps(args)}]
    resp = {"id": "resp_e2e", "object": "response", "created_at": int(time.time()), "status": "completed",
            "model": body.get("model", "m"), "output": reply,
            "usage": {"input_tokens": 1, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 1,
                      "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 2}}
    if not body.get("stream"):
        return h.json(resp)
    h.sse_start()
    h.sse({"type": "response.created", "response": dict(resp, status="in_progress", output=[])}, "response.created")
    for i, item in enumerate(reply):
        h.sse({"type": "response.output_item.added", "output_index": i, "item": item}, "response.output_item.added")
        h.sse({"type": "response.output_item.done", "output_index": i, "item": item}, "response.output_item.done")
    h.sse({"type": "response.completed", "response": resp}, "response.completed")


# --------------------------------------------------------------------------- Gemini

def from_schema(schema):
    """A value that fits a JSON schema (Gemini CLI's router and checks ask for JSON)."""
    if not isinstance(schema, dict):
        return None
    if schema.get("enum"):
        return schema["enum"][0]
    kind = str(schema.get("type", "")).lower()
    if kind == "object" or "properties" in schema:
        return {k: ("user" if k == "next_speaker" else from_schema(v)) for k, v in (schema.get("properties") or {}).items()}
    return {"array": [], "number": 1, "integer": 1, "boolean": False}.get(kind, "e2e")


def gemini(h, body, stream):
    decls = [d for t in body.get("tools") or [] for d in (t.get("functionDeclarations") or [])]
    names = [d.get("name") for d in decls]
    contents = body.get("contents") or []
    got = None
    for part in (contents[-1].get("parts") or []) if contents else []:
        fr = part.get("functionResponse")
        if fr and fr.get("name") == "run_shell_command":
            got = fr
    config = body.get("generationConfig") or {}
    if got is not None:
        r = got.get("response") or {}
        result(str(r.get("output", r.get("error", json.dumps(r)))) if isinstance(r, dict) else str(r))
        parts = [{"text": DONE}]
    elif "run_shell_command" in names and (n := next_call()) is not None:
        parts = [{"functionCall": {"id": f"e2e_{n}", "name": "run_shell_command",
                                   "args": {"command": OPTS.command, "description": "e2e command"}}}]
    elif config.get("responseJsonSchema") or config.get("responseSchema"):
        parts = [{"text": json.dumps(from_schema(config.get("responseJsonSchema") or config.get("responseSchema")))}]
    else:
        parts = [{"text": "e2e"}]
    resp = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2}}
    if not stream:
        return h.json(resp)
    h.sse_start()
    h.sse(resp)


# --------------------------------------------------------------------------- HTTP

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *_):
        pass

    def json(self, obj):
        data = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def sse_start(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def sse(self, obj, event=None):
        self.wfile.write(((f"event: {event}\n" if event else "") + "data: " + json.dumps(obj) + "\n\n").encode())
        self.wfile.flush()

    def do_GET(self):
        self.json({"data": [], "models": []})

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        record("requests.jsonl", json.dumps({"path": self.path, "body": body}) + "\n")
        path = self.path.split("?")[0]
        try:
            if path.endswith("/count_tokens"):
                return self.json({"input_tokens": 1})
            if path.endswith("/messages"):
                return anthropic(self, body)
            if path.endswith("/responses"):
                return responses(self, body)
            if ":streamGenerateContent" in path:
                return gemini(self, body, True)
            if ":generateContent" in path:
                return gemini(self, body, False)
            if ":countTokens" in path:
                return self.json({"totalTokens": 1})
        except (BrokenPipeError, ConnectionResetError):
            return
        return self.json({})


def main():
    global OPTS
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--pty-answer")
    ap.add_argument("--port-file")
    OPTS = ap.parse_args()
    os.makedirs(OPTS.out, exist_ok=True)
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    if OPTS.port_file:
        with open(OPTS.port_file + ".tmp", "w") as f:
            f.write(str(server.server_address[1]))
        os.rename(OPTS.port_file + ".tmp", OPTS.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
