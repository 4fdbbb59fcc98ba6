#!/usr/bin/env python3
"""A scripted OpenAI-compatible chat-completions server, for tests and documentation examples.

Usage: python3 chat_server.py --script SCRIPT.json [--port 0] [--port-file FILE] [--log LOG.jsonl]

It listens on 127.0.0.1, prints "listening on http://127.0.0.1:PORT/v1" and then writes PORT to
--port-file (whole, by a rename), and answers POST /v1/chat/completions (or /chat/completions).

The script:
  {"replies": [REPLY, ...],                         used one each, in arrival order
   "rules": [{"when_contains": "TEXT", "reply": REPLY}, ...],
   "default": REPLY,                                when no rule matches and no reply is left
   "api_key": "KEY"}                                optional: else 401, echoing the key given
                                                    (as OpenAI does: clients' redaction is tested)
A request gets the first rule whose TEXT occurs in any message's content (rules are reusable),
else the next unused entry of "replies", else "default", else HTTP 500.

A REPLY (every field optional):
  {"content": "...", "content_file": "PATH (read at reply time, relative to the script's folder)",
   "status": 200, "retry_after": SECONDS or an HTTP date, "delay_s": 0, "finish_reason": "stop",
   "usage": {"prompt_tokens": N, "completion_tokens": N}   (default: lengths / 4),
   "body": "raw text sent instead of the JSON answer (malformed answers)",
   "cycle": false,   true on an entry of "replies": after it, the list starts again from its first
   "fence": "c",     the content (a content_file's) wrapped in a fenced code block with this tag
   "substitute": false,   true: "@@N@@" in the content becomes the request's number (distinct replies)
   "echo": {"pattern": REGEX, "template": "...{1}..."}}   the content made from the request: the
                     template with {1}, {2}... the groups of REGEX's first match in the last user
                     message (a reply that quotes the prompt, as a SEARCH/REPLACE edit must)
A status other than 200 sends {"error": {"message": "scripted error"}}, with Retry-After if given.

--log gets one JSON line per request, written before the answer is sent: {"n", "start", "end",
"concurrent" (requests being served at its start, itself included), "model", "messages", "params"
(the other request fields), "auth_ok" (null without "api_key"), "status", "matched" ("rule TEXT",
"reply N", "default", "auth", "none" or "bad request")}.
"""

import argparse
import json
import os
import re
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Script:
    """The scripted answers and the state they share between request threads."""

    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            spec = json.load(f)
        self.folder = os.path.dirname(os.path.abspath(path))
        self.replies = spec.get("replies", [])
        self.rules = spec.get("rules", [])
        self.default = spec.get("default")
        self.api_key = spec.get("api_key")
        self.lock = threading.Lock()
        self.next_reply = 0
        self.requests = 0
        self.serving = 0

    def choose(self, messages):
        """The reply for a request and how it was matched; (None, "none") when nothing is left."""
        texts = [m.get("content") for m in messages if isinstance(m, dict)]
        texts = [t for t in texts if isinstance(t, str)]
        for rule in self.rules:
            if any(rule["when_contains"] in t for t in texts):
                return rule["reply"], "rule " + rule["when_contains"]
        with self.lock:
            if self.next_reply < len(self.replies):
                n = self.next_reply
                reply = self.replies[n]
                self.next_reply = 0 if reply.get("cycle") else n + 1
                return reply, "reply %d" % n
        if self.default is not None:
            return self.default, "default"
        return None, "none"

    def content_of(self, reply):
        if "content_file" in reply:
            with open(os.path.join(self.folder, reply["content_file"]), encoding="utf-8") as f:
                return f.read()
        return reply.get("content", "")


class Log:
    def __init__(self, path):
        self.file = open(path, "a", encoding="utf-8") if path else None
        self.lock = threading.Lock()

    def write(self, entry):
        if not self.file:
            return
        with self.lock:
            self.file.write(json.dumps(entry) + "\n")
            self.file.flush()


def completion_body(reply, content, model, messages, n):
    prompt_chars = sum(len(m.get("content") or "") for m in messages if isinstance(m, dict))
    usage = reply.get("usage") or {
        "prompt_tokens": prompt_chars // 4,
        "completion_tokens": len(content) // 4,
    }
    usage = dict(usage)
    total = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
    usage.setdefault("total_tokens", total)
    return {
        "id": "chatcmpl-scripted-%d" % n,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": reply.get("finish_reason", "stop"),
        }],
        "usage": usage,
    }


class Handler(BaseHTTPRequestHandler):
    server_version = "ScriptedChat/1"

    def log_message(self, format, *args):  # the JSON log says what matters
        pass

    def do_POST(self):
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self.send_error(404, "only /v1/chat/completions here")
            return
        script, log = self.server.script, self.server.log
        with script.lock:
            script.requests += 1
            script.serving += 1
            n, concurrent = script.requests, script.serving
        entry = {"n": n, "start": time.time(), "concurrent": concurrent}
        try:
            status, headers, body = self.answer(script, entry)
        except Exception as e:  # a broken script (a missing content_file) is an answer too
            entry.setdefault("matched", "none")
            status, headers, body = 500, {}, error_body("the script failed: %r" % e)
        finally:
            # The request stops counting before the answer leaves, so a client that starts its next
            # request on receiving this one never sees it counted twice.
            with script.lock:
                script.serving -= 1
        entry["end"] = time.time()
        entry["status"] = status
        log.write(entry)
        self.send(status, headers, body)

    def answer(self, script, entry):
        """(status, headers, body bytes) for this request; fills the log entry."""
        length = int(self.headers.get("Content-Length") or 0)
        try:
            request = json.loads(self.rfile.read(length) or b"null")
            messages = request["messages"]
            assert isinstance(messages, list)
        except (ValueError, KeyError, TypeError, AssertionError):
            entry.update(matched="bad request", auth_ok=None, model=None, messages=None)
            return 400, {}, error_body("the request is not a chat-completions JSON body")
        entry["model"] = request.get("model")
        entry["messages"] = messages
        entry["params"] = {k: v for k, v in request.items() if k not in ("model", "messages")}
        entry["auth_ok"] = None
        if script.api_key is not None:
            given = self.headers.get("Authorization", "")
            entry["auth_ok"] = given == "Bearer " + script.api_key
            if not entry["auth_ok"]:
                entry["matched"] = "auth"
                key = given[len("Bearer "):] if given.startswith("Bearer ") else given
                return 401, {}, error_body("Incorrect API key provided: " + key)
        reply, entry["matched"] = script.choose(messages)
        if reply is None:
            return 500, {}, error_body("the script has no reply left")
        time.sleep(float(reply.get("delay_s", 0)))
        return scripted_answer(script, reply, request, messages, entry["n"])

    def send(self, status, headers, body):
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its time-out): that is what some tests want


def error_body(message):
    return json.dumps({"error": {"message": message}}).encode()


def scripted_answer(script, reply, request, messages, n):
    status = int(reply.get("status", 200))
    headers = {}
    if reply.get("retry_after") is not None:
        headers["Retry-After"] = str(reply["retry_after"])
    if "body" in reply:
        return status, headers, reply["body"].encode()
    if status != 200:
        return status, headers, error_body("scripted error")
    content = script.content_of(reply)
    if reply.get("fence"):
        content = "```%s\n%s%s```\n" % (reply["fence"], content, "" if content.endswith("\n") else "\n")
    if "echo" in reply:
        content = echo(reply["echo"], messages)
    if reply.get("substitute"):
        content = content.replace("@@N@@", str(n))
    body = completion_body(reply, content, request.get("model", ""), messages, n)
    return status, headers, json.dumps(body).encode()


def echo(spec, messages):
    """The reply made from the request: spec["template"] with {1}, {2}... replaced by the groups of
    spec["pattern"]'s first match in the last user message ("" when it does not match)."""
    users = [m.get("content") or "" for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    match = re.search(spec["pattern"], users[-1] if users else "", re.S)
    if not match:
        return ""
    out = spec["template"]
    for i, group in enumerate(match.groups(), start=1):
        out = out.replace("{%d}" % i, group or "")
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file")
    parser.add_argument("--log")
    args = parser.parse_args()

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    server.daemon_threads = True  # a reply still sleeping must not hold up the exit
    server.script = Script(args.script)
    server.log = Log(args.log)
    port = server.server_address[1]

    def stop(signum, frame):
        # shutdown() waits for serve_forever to return, so it runs beside it; raising here instead
        # could land inside the server's own error handling and be swallowed.
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print("listening on http://127.0.0.1:%d/v1" % port, flush=True)
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write("%d\n" % port)
        os.replace(args.port_file + ".tmp", args.port_file)
    try:
        server.serve_forever(poll_interval=0.1)
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
