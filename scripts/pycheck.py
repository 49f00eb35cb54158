#!/usr/bin/env python3
"""Check a running Narad node as Python's standard library sees it.

The Go tests (test/e2e) defend the same rules; this script shows them
from urllib, the client that used to get a connection reset instead of a
413. The suite runs it against a fresh node where python3 is installed
(test/e2e TestPycheckScript), so it keeps working with the server.

    python3 scripts/pycheck.py [URL]     # default http://127.0.0.1:7942

It works in a scratch topic of its own (created, then deleted) and exits 1
on the first broken rule, 0 when all hold. Authentication must be off.
"""

import json
import os
import sys
import time
import urllib.error
import urllib.request

BASE = (sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:7942").rstrip("/")
TOPIC = "pycheck-" + os.urandom(4).hex()


def call(method, path, body=None, content_type="application/octet-stream"):
    """One request; (status, headers, body bytes), errors included."""
    req = urllib.request.Request(BASE + path, data=body, method=method)
    if body is not None:
        req.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()


def check(ok, what):
    if not ok:
        print("FAIL", what)
        sys.exit(1)
    print("ok  ", what)


def is_json_error(hdrs, body):
    try:
        return hdrs.get("Content-Type", "").startswith("application/json") and "error" in json.loads(body)
    except ValueError:
        return False


def main():
    st, _, b = call("POST", "/v1/topics", json.dumps({"name": TOPIC, "partitions": 1}).encode(), "application/json")
    check(st == 201, "create %s: %d %r" % (TOPIC, st, b[:200]))
    try:
        run()
    finally:
        call("DELETE", "/v1/topics/" + TOPIC)


def run():
    # 413, not a reset: urllib writes the whole body before it reads.
    for size, tries in ((1 << 20) + 1, 20), (20 << 20, 5):
        body = b"x" * size
        for i in range(tries):
            try:
                st, hdrs, b = call("POST", "/v1/topics/%s/produce" % TOPIC, body)
            except OSError as e:  # ConnectionResetError, BrokenPipeError
                check(False, "%d-byte produce, try %d: %r instead of a 413" % (size, i, e))
            check(st == 413 and is_json_error(hdrs, b), "%d-byte produce, try %d: %d %r" % (size, i, st, b[:120]))

    # Payloads byte for byte, and text told apart from a JSON string.
    sent = [(b'{"a": 1,   "b":[1, 2]}', None), (b"hello", "text"), (b'"hello"', None)]
    for body, _ in sent:
        st, _, b = call("POST", "/v1/topics/%s/produce?partition=0" % TOPIC, body)
        check(st == 202, "produce %r: %d %r" % (body, st, b))
    # 202 means durable; a record is readable once committed: poll for all.
    deadline = time.monotonic() + 10
    while True:
        st, _, b = call("GET", "/v1/topics/%s/consume?partition=0&offset=0&max=10&wait=5s" % TOPIC)
        if st != 200:
            check(False, "replay: %d %r" % (st, b[:200]))
        msgs = json.loads(b)["messages"]
        if len(msgs) >= len(sent) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    check(len(msgs) == len(sent), "replay: %d records, want %d" % (len(msgs), len(sent)))
    check(b'"payload":{"a": 1,   "b":[1, 2]},' in b, "replay holds the JSON payload verbatim: %r" % b[:300])
    for m, (body, enc) in zip(msgs, sent):
        check(m.get("payload_encoding") == enc, "offset %d: payload_encoding %r, want %r" % (m["offset"], m.get("payload_encoding"), enc))

    # Consume and ack with the handle from the answer; a second ack says so.
    st, _, b = call("GET", "/v1/topics/%s/consume?wait=5s" % TOPIC)
    check(st == 200, "consume: %d %r" % (st, b[:200]))
    handle = json.loads(b)["receipt_handle"]
    ack = "/v1/topics/%s/ack?receipt_handle=%s" % (TOPIC, urllib.request.quote(handle))
    st, _, b = call("POST", ack)
    check(st == 204, "ack %s: %d %r" % (handle, st, b))
    st, hdrs, b = call("POST", ack)
    # The status and a JSON error are the contract; the wording is for
    # people and has changed before, so it is not matched.
    check(st == 410 and is_json_error(hdrs, b), "second ack: %d %r" % (st, b))

    # The edge answers in JSON: 405 with Allow, 404 outside /v1, no redirects.
    st, hdrs, b = call("PUT", "/v1/topics/" + TOPIC)
    check(st == 405 and hdrs.get("Allow") and is_json_error(hdrs, b), "PUT a topic: %d Allow=%r %r" % (st, hdrs.get("Allow"), b))
    st, hdrs, b = call("GET", "/favicon.ico")
    check(st == 404 and is_json_error(hdrs, b), "GET /favicon.ico: %d %r" % (st, b))
    st, hdrs, b = call("GET", "//v1//topics")
    check(st == 400 and is_json_error(hdrs, b), "GET //v1//topics: %d %r" % (st, b))


if __name__ == "__main__":
    main()
