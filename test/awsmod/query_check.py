#!/usr/bin/python3
"""Drives a Narad node's SQS edge with Debian's botocore 1.29, which
speaks SQS's Query protocol (form-encoded Action=..., XML answers), a
client independent of the AWS SDK for Go. Usage:

    PYTHONPATH=/usr/lib/python3/dist-packages /usr/bin/python3 query_check.py http://127.0.0.1:PORT

Exits non-zero, saying what differed, on the first failed check. Run by
TestSQSQueryProtocolBotocore (query_test.go)."""

import sys

# Debian's botocore, not a newer one pip installed elsewhere: newer
# botocore speaks SQS's JSON protocol instead.
sys.path.insert(0, "/usr/lib/python3/dist-packages")

import hashlib
import struct
import time

import botocore
import botocore.config
import botocore.session

assert botocore.__version__.startswith("1.29"), (
    "want Debian's botocore 1.29 (python3-botocore), imported " + botocore.__version__ + " from " + botocore.__file__)

ENDPOINT = sys.argv[1]
PREFIX = sys.argv[2] if len(sys.argv) > 2 else "py-"

session = botocore.session.get_session()
client = session.create_client(
    "sqs", region_name="us-east-1", endpoint_url=ENDPOINT,
    aws_access_key_id="AKIDEXAMPLE", aws_secret_access_key="secret",
    config=botocore.config.Config(retries={"max_attempts": 1}))
assert client.meta.service_model.protocol == "query", client.meta.service_model.protocol

# Every request must be a Query one: a form-encoded Action, no JSON target.
sent_actions = []


def check_query(request, **kwargs):
    body = request.body or b""
    if isinstance(body, str):
        body = body.encode()
    ct = request.headers.get("Content-Type", b"")
    if isinstance(ct, bytes):
        ct = ct.decode()
    assert "X-Amz-Target" not in request.headers, "a JSON protocol request: " + str(request.headers)
    assert ct.startswith("application/x-www-form-urlencoded"), "Content-Type " + ct
    assert body.startswith(b"Action=") or b"&Action=" in body, body[:200]
    sent_actions.append(body.split(b"&")[0])


client.meta.events.register("before-send.sqs", check_query)


def fail(msg):
    raise AssertionError(msg)


def expect(cond, msg):
    if not cond:
        fail(msg)


def md5_body(body):
    return hashlib.md5(body.encode("utf-8")).hexdigest()


def md5_attrs(attrs):
    """SQS's MD5OfMessageAttributes: names sorted, each name, data type
    and value length-prefixed, the value after a transport byte."""
    h = hashlib.md5()

    def enc(b):
        h.update(struct.pack(">I", len(b)))
        h.update(b)

    for name in sorted(attrs):
        a = attrs[name]
        enc(name.encode())
        enc(a["DataType"].encode())
        if "BinaryValue" in a:
            h.update(b"\x02")
            enc(a["BinaryValue"])
        else:
            h.update(b"\x01")
            enc(a["StringValue"].encode())
    return h.hexdigest()


def expect_error(code, fn, **kw):
    try:
        fn(**kw)
    except botocore.exceptions.ClientError as e:
        got = e.response["Error"]["Code"]
        expect(got == code, "%s: error %s (%s), want %s" % (fn.__name__, got, e, code))
        return e
    fail("%s(%s) succeeded, want error %s" % (fn.__name__, kw, code))


def receive(url, n=1, wait=5, **kw):
    out = client.receive_message(QueueUrl=url, MaxNumberOfMessages=n, WaitTimeSeconds=wait,
                                 MessageAttributeNames=["All"], AttributeNames=["All"], **kw)
    msgs = out.get("Messages", [])
    for m in msgs:
        expect(m["MD5OfBody"] == md5_body(m["Body"]), "MD5OfBody of %r: %s" % (m["Body"], m["MD5OfBody"]))
        if "MessageAttributes" in m:
            expect(m["MD5OfMessageAttributes"] == md5_attrs(m["MessageAttributes"]),
                   "MD5OfMessageAttributes of %r: %s, computed %s" % (
                       m["MessageAttributes"], m["MD5OfMessageAttributes"], md5_attrs(m["MessageAttributes"])))
    return msgs


def receive_n(url, n):
    got, deadline = [], time.time() + 10
    while len(got) < n:
        expect(time.time() < deadline, "received %d of %d within 10 s" % (len(got), n))
        got += receive(url, min(10, n - len(got)), 2)
    expect(len(got) == n, "received %d, want %d" % (len(got), n))
    return got


def wait_count(url, want):
    deadline = time.time() + 10
    while True:
        a = client.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])["Attributes"]
        if a["ApproximateNumberOfMessages"] == str(want):
            return
        expect(time.time() < deadline, "ApproximateNumberOfMessages %s, want %d" % (a, want))
        time.sleep(0.05)


# Create, standard and FIFO; an existing name with the same attributes
# answers the same URL.
std = client.create_queue(QueueName=PREFIX + "std", Attributes={"VisibilityTimeout": "30"})["QueueUrl"]
expect(std == ENDPOINT + "/000000000000/" + PREFIX + "std", "QueueUrl " + std)
expect(client.create_queue(QueueName=PREFIX + "std", Attributes={"VisibilityTimeout": "30"})["QueueUrl"] == std,
       "re-create answered another URL")
expect_error("QueueAlreadyExists", client.create_queue, QueueName=PREFIX + "std", Attributes={"VisibilityTimeout": "31"})
fifo = client.create_queue(QueueName=PREFIX + "q.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
expect(client.get_queue_url(QueueName=PREFIX + "q.fifo")["QueueUrl"] == fifo, "GetQueueUrl of the FIFO queue")

# Send with String, Number and Binary attributes: the MD5s are SQS's.
attrs = {
    "Store": {"DataType": "String", "StringValue": "north é"},
    "Price": {"DataType": "Number.usd", "StringValue": "12.5"},
    "Blob": {"DataType": "Binary", "BinaryValue": b"\x00\x01\xff"},
}
body = "hello <query> & é"
out = client.send_message(QueueUrl=std, MessageBody=body, MessageAttributes=attrs)
expect(out["MD5OfMessageBody"] == md5_body(body), "MD5OfMessageBody " + out["MD5OfMessageBody"])
expect(out["MD5OfMessageAttributes"] == md5_attrs(attrs), "MD5OfMessageAttributes " + out["MD5OfMessageAttributes"])
msg_id = out["MessageId"]

# Receive: body, typed attributes, system attributes.
m = receive_n(std, 1)[0]
expect(m["Body"] == body and m["MessageId"] == msg_id, "received %r %s" % (m["Body"], m["MessageId"]))
expect(m["MessageAttributes"] == attrs, "attributes came back as %r" % m["MessageAttributes"])
expect(m["Attributes"]["ApproximateReceiveCount"] == "1", "system attributes %r" % m["Attributes"])

# Change visibility to 0: it comes back at once, received twice.
client.change_message_visibility(QueueUrl=std, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0)
m = receive_n(std, 1)[0]
expect(m["MessageId"] == msg_id and m["Attributes"]["ApproximateReceiveCount"] == "2", "after visibility 0: %r" % m)
client.delete_message(QueueUrl=std, ReceiptHandle=m["ReceiptHandle"])
wait_count(std, 0)
expect(receive(std, 10, 0) == [], "a deleted message came back")
expect_error("ReceiptHandleIsInvalid", client.delete_message, QueueUrl=std, ReceiptHandle="garbage")

# Batches, each with a failing entry.
out = client.send_message_batch(QueueUrl=std, Entries=[
    {"Id": "a", "MessageBody": "one"},
    {"Id": "b", "MessageBody": "bad \x01"},
    {"Id": "c", "MessageBody": "three", "MessageAttributes": {"K": {"DataType": "String", "StringValue": "v"}}},
])
expect(sorted(s["Id"] for s in out.get("Successful", [])) == ["a", "c"], "Successful %r" % out)
expect(len(out.get("Failed", [])) == 1 and out["Failed"][0]["Id"] == "b" and out["Failed"][0]["SenderFault"] is True and
       out["Failed"][0]["Code"] == "InvalidMessageContents", "Failed %r" % out.get("Failed"))
for s in out["Successful"]:
    expect(s["MD5OfMessageBody"] == md5_body({"a": "one", "c": "three"}[s["Id"]]), "batch MD5 %r" % s)
got = receive_n(std, 2)
expect(sorted(x["Body"] for x in got) == ["one", "three"], "batch bodies %r" % [x["Body"] for x in got])
out = client.delete_message_batch(QueueUrl=std, Entries=[
    {"Id": "x", "ReceiptHandle": got[0]["ReceiptHandle"]},
    {"Id": "y", "ReceiptHandle": got[1]["ReceiptHandle"]},
    {"Id": "z", "ReceiptHandle": "garbage"},
])
expect(sorted(s["Id"] for s in out.get("Successful", [])) == ["x", "y"], "DeleteMessageBatch %r" % out)
expect([f["Id"] for f in out.get("Failed", [])] == ["z"] and out["Failed"][0]["Code"] == "ReceiptHandleIsInvalid",
       "DeleteMessageBatch Failed %r" % out.get("Failed"))
expect_error("AWS.SimpleQueueService.EmptyBatchRequest", client.delete_message_batch, QueueUrl=std, Entries=[])
wait_count(std, 0)

# Attributes.
a = client.get_queue_attributes(QueueUrl=std, AttributeNames=["All"])["Attributes"]
expect(a["VisibilityTimeout"] == "30" and a["QueueArn"] == "arn:aws:sqs:us-east-1:000000000000:" + PREFIX + "std", "All: %r" % a)
client.set_queue_attributes(QueueUrl=std, Attributes={"VisibilityTimeout": "20", "DelaySeconds": "1"})
a = client.get_queue_attributes(QueueUrl=std, AttributeNames=["VisibilityTimeout", "DelaySeconds"])["Attributes"]
expect(a == {"VisibilityTimeout": "20", "DelaySeconds": "1"}, "after SetQueueAttributes: %r" % a)
expect_error("InvalidAttributeName", client.get_queue_attributes, QueueUrl=std, AttributeNames=["Nope"])
expect_error("InvalidAttributeValue", client.set_queue_attributes, QueueUrl=std, Attributes={"DelaySeconds": "901"})

# List.
urls = client.list_queues(QueueNamePrefix=PREFIX)["QueueUrls"]
expect(urls == sorted([std, fifo]), "ListQueues %r" % urls)
page = client.list_queues(QueueNamePrefix=PREFIX, MaxResults=1)
expect(page["QueueUrls"] == [fifo] and "NextToken" in page, "ListQueues page 1 %r" % page)
page = client.list_queues(QueueNamePrefix=PREFIX, MaxResults=1, NextToken=page["NextToken"])
expect(page["QueueUrls"] == [std] and "NextToken" not in page, "ListQueues page 2 %r" % page)

# Purge, and a second purge within 60 s. A purge settles what is below
# each partition's high watermark when it runs (docs/concepts.md); a
# message just accepted may still be on its way there from the node's
# ingress log, so the check waits until it is counted.
client.send_message(QueueUrl=std, MessageBody="to purge", DelaySeconds=0)
wait_count(std, 1)
client.purge_queue(QueueUrl=std)
wait_count(std, 0)
expect_error("AWS.SimpleQueueService.PurgeQueueInProgress", client.purge_queue, QueueUrl=std)

# FIFO: order within a group, dedupe, MessageGroupId required.
ids = []
for i in range(5):
    out = client.send_message(QueueUrl=fifo, MessageBody=str(i), MessageGroupId="g", MessageDeduplicationId="d%d" % i)
    ids.append(out["MessageId"])
dup = client.send_message(QueueUrl=fifo, MessageBody="again", MessageGroupId="g", MessageDeduplicationId="d0")
expect(dup["MessageId"] == ids[0], "a deduplicated send answered %s, the first %s" % (dup["MessageId"], ids[0]))
expect_error("MissingParameter", client.send_message, QueueUrl=fifo, MessageBody="x", MessageDeduplicationId="x")
# A group's next message comes once the one before is deleted (Narad
# answers one message of a group per receive; SQS may answer several).
got, deadline = [], time.time() + 10
while len(got) < 5:
    expect(time.time() < deadline, "received %d of 5 FIFO messages within 10 s" % len(got))
    batch = receive(fifo, 10, 2)
    got += batch
    if batch:
        out = client.delete_message_batch(QueueUrl=fifo, Entries=[
            {"Id": str(i), "ReceiptHandle": x["ReceiptHandle"]} for i, x in enumerate(batch)])
        expect(len(out.get("Successful", [])) == len(batch), "DeleteMessageBatch %r" % out)
expect([x["Body"] for x in got] == ["0", "1", "2", "3", "4"], "FIFO order %r" % [x["Body"] for x in got])
expect([x["MessageId"] for x in got] == ids, "FIFO MessageIds")
seqs = [x["Attributes"]["SequenceNumber"] for x in got]
expect(seqs == sorted(seqs) and len(set(seqs)) == 5, "SequenceNumbers %r" % seqs)
expect(receive(fifo, 10, 1) == [], "a duplicate was delivered")

# A queue that does not exist: the modelled exception.
try:
    client.get_queue_url(QueueName=PREFIX + "nope")
    fail("GetQueueUrl of a missing queue succeeded")
except client.exceptions.QueueDoesNotExist:
    pass
try:
    client.send_message(QueueUrl=ENDPOINT + "/000000000000/" + PREFIX + "nope", MessageBody="x")
    fail("SendMessage to a missing queue succeeded")
except client.exceptions.QueueDoesNotExist:
    pass

# Delete.
client.delete_queue(QueueUrl=fifo)
try:
    client.get_queue_attributes(QueueUrl=fifo, AttributeNames=["All"])
    fail("a deleted queue answered")
except client.exceptions.QueueDoesNotExist:
    pass

expect(len(sent_actions) > 30, "only %d requests checked as Query" % len(sent_actions))
print("query_check: ok, %d Query requests with botocore %s" % (len(sent_actions), botocore.__version__))
