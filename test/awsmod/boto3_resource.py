"""boto3's resource API for SQS against a Narad node, as a new user would
write it: run by TestBoto3Resource (tools_test.go) as
`python3 boto3_resource.py <endpoint> <name prefix>` with whichever boto3
the interpreter imports (pip's speaks SQS's JSON protocol, Debian's 1.26
its Query protocol). Prints "ok boto3 <version> ..." or raises."""

import sys

import boto3
import botocore

endpoint, prefix = sys.argv[1], sys.argv[2]
session = boto3.session.Session(aws_access_key_id="test", aws_secret_access_key="test", region_name="us-east-1")
sqs = session.resource("sqs", endpoint_url=endpoint)

queue = sqs.create_queue(QueueName=prefix + "res", Attributes={"VisibilityTimeout": "40"})
assert queue.url.endswith("/000000000000/" + prefix + "res"), queue.url
assert queue.attributes["VisibilityTimeout"] == "40", queue.attributes
assert queue.attributes["QueueArn"] == "arn:aws:sqs:us-east-1:000000000000:" + prefix + "res", queue.attributes

# The same queue, found by name and listed by prefix.
assert sqs.get_queue_by_name(QueueName=prefix + "res").url == queue.url
assert [q.url for q in sqs.queues.filter(QueueNamePrefix=prefix + "res")] == [queue.url]

one = queue.send_message(MessageBody="single", MessageAttributes={
    "Lang": {"DataType": "String", "StringValue": "python"},
    "Blob": {"DataType": "Binary", "BinaryValue": b"\x00\x01\xff"},
})
assert one["MessageId"], one
out = queue.send_messages(Entries=[{"Id": str(i), "MessageBody": "batch %d" % i} for i in range(5)])
assert len(out.get("Successful", [])) == 5 and not out.get("Failed"), out

want = {"single"} | {"batch %d" % i for i in range(5)}
got = {}
for _ in range(10):
    for m in queue.receive_messages(MaxNumberOfMessages=10, WaitTimeSeconds=1,
                                    MessageAttributeNames=["All"], AttributeNames=["All"]):
        got[m.body] = got.get(m.body, 0) + 1
        assert m.attributes["ApproximateReceiveCount"] == "1", m.attributes
        if m.body == "single":
            assert m.message_id == one["MessageId"], (m.message_id, one)
            assert m.message_attributes["Lang"]["StringValue"] == "python", m.message_attributes
            assert m.message_attributes["Blob"]["BinaryValue"] == b"\x00\x01\xff", m.message_attributes
        m.delete()
    if len(got) == len(want):
        break
assert got == {b: 1 for b in want}, got

queue.reload()
assert queue.attributes["ApproximateNumberOfMessages"] == "0", queue.attributes
assert queue.attributes["ApproximateNumberOfMessagesNotVisible"] == "0", queue.attributes
assert queue.receive_messages(WaitTimeSeconds=1) == []

# A message's visibility, and a batch delete through the resource.
queue.send_message(MessageBody="again")
(m,) = queue.receive_messages(WaitTimeSeconds=1)
m.change_visibility(VisibilityTimeout=0)
(m,) = queue.receive_messages(WaitTimeSeconds=1, AttributeNames=["ApproximateReceiveCount"])
assert m.attributes["ApproximateReceiveCount"] == "2", m.attributes
res = queue.delete_messages(Entries=[{"Id": "x", "ReceiptHandle": m.receipt_handle}])
assert [e["Id"] for e in res.get("Successful", [])] == ["x"], res

queue.set_attributes(Attributes={"DelaySeconds": "0", "MaximumMessageSize": "4096"})
queue.reload()
assert queue.attributes["MaximumMessageSize"] == "4096", queue.attributes
queue.purge()
queue.delete()
try:
    sqs.get_queue_by_name(QueueName=prefix + "res")
    raise AssertionError("the deleted queue is still found")
except botocore.exceptions.ClientError as e:
    code = e.response["Error"]["Code"]
    assert code in ("AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"), e.response
    assert isinstance(e, sqs.meta.client.exceptions.QueueDoesNotExist), type(e)

print("ok boto3 %s botocore %s" % (boto3.__version__, botocore.__version__))
