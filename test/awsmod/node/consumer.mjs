// sqs-consumer and the AWS SDK for JavaScript v3 against a Narad node, as
// a team's worker would use them: run by TestSQSConsumer
// (test/awsmod/tools_test.go) with NARAD_URL and a name prefix of its
// own. It prints "ok ..." and exits 0, or says what went wrong and exits 1.
import { Consumer } from "sqs-consumer";
import {
  SQSClient, CreateQueueCommand, SendMessageCommand, SendMessageBatchCommand,
  GetQueueAttributesCommand, ReceiveMessageCommand, GetQueueUrlCommand,
} from "@aws-sdk/client-sqs";
import { SNSClient, CreateTopicCommand, SubscribeCommand, PublishCommand, PublishBatchCommand } from "@aws-sdk/client-sns";

const endpoint = process.env.NARAD_URL;
const prefix = process.argv[2] ?? "node-";
const config = { endpoint, region: "us-east-1", credentials: { accessKeyId: "test", secretAccessKey: "test" } };
const sqs = new SQSClient(config);
const sns = new SNSClient(config);

function fail(msg) {
  console.error("FAIL: " + msg);
  process.exit(1);
}

const timer = setTimeout(() => fail("not done within 30s"), 30000);

// consume runs a consumer on queueUrl until want messages were handled
// and deleted, calling each(m) on every one, then stops it; it answers
// how often each body was handled. batch: handleMessageBatch (deleted
// with DeleteMessageBatch) instead of handleMessage (DeleteMessage).
function consume(queueUrl, want, { batch = false, each = () => {} } = {}) {
  return new Promise((resolve, reject) => {
    const seen = new Map();
    const handle = (m) => {
      seen.set(m.Body, (seen.get(m.Body) ?? 0) + 1);
      each(m);
    };
    const options = {
      queueUrl, sqs, batchSize: 10, waitTimeSeconds: 1,
      messageAttributeNames: ["All"], messageSystemAttributeNames: ["All"],
    };
    if (batch) {
      options.handleMessageBatch = async (ms) => { ms.forEach(handle); return ms; };
    } else {
      options.handleMessage = async (m) => { handle(m); return m; };
    }
    const consumer = Consumer.create(options);
    for (const ev of ["error", "processing_error", "timeout_error"]) {
      consumer.on(ev, (err) => { consumer.stop(); reject(new Error(`${ev}: ${err.message}`)); });
    }
    let processed = 0;
    consumer.on("message_processed", () => {
      if (++processed === want) {
        consumer.on("stopped", () => resolve(seen));
        consumer.stop();
      }
    });
    consumer.start();
  });
}

// empty fails unless the queue has no message left, visible or not.
async function empty(queueUrl) {
  const { Attributes: a } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl,
    AttributeNames: ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"] }));
  if (a.ApproximateNumberOfMessages !== "0" || a.ApproximateNumberOfMessagesNotVisible !== "0") {
    fail(`${queueUrl} not empty after the consumer: ${JSON.stringify(a)}`);
  }
  const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 1, VisibilityTimeout: 0 }));
  if (Messages.length) fail(`${queueUrl} still gives ${Messages.length} message(s) after the consumer`);
}

// Twenty messages, ten sent one by one and ten in a batch, each handled
// once and deleted: first by handleMessage, then by handleMessageBatch.
for (const batch of [false, true]) {
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `${prefix}work-${batch ? "batch" : "single"}` }));
  const want = [];
  for (let i = 0; i < 10; i++) {
    const Body = `one ${i}`;
    want.push(Body);
    await sqs.send(new SendMessageCommand({ QueueUrl, MessageBody: Body,
      MessageAttributes: { N: { DataType: "Number", StringValue: String(i) } } }));
  }
  const entries = [];
  for (let i = 0; i < 10; i++) {
    entries.push({ Id: `e${i}`, MessageBody: `batch ${i}` });
    want.push(`batch ${i}`);
  }
  const out = await sqs.send(new SendMessageBatchCommand({ QueueUrl, Entries: entries }));
  if ((out.Successful ?? []).length !== 10 || (out.Failed ?? []).length) fail(`SendMessageBatch: ${JSON.stringify(out)}`);
  const seen = await consume(QueueUrl, 20, { batch });
  for (const b of want) {
    if (seen.get(b) !== 1) fail(`message ${JSON.stringify(b)} handled ${seen.get(b) ?? 0} times, want once`);
  }
  if (seen.size !== 20) fail(`handled ${seen.size} distinct messages, want 20`);
  await empty(QueueUrl);
}

// SNS: a topic with a raw SQS subscription; what is published, one by one
// and in a batch, reaches the consumer with its attributes.
const { TopicArn } = await sns.send(new CreateTopicCommand({ Name: `${prefix}events` }));
const { QueueUrl: subUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `${prefix}events-sub` }));
const { Attributes: { QueueArn } } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: subUrl, AttributeNames: ["QueueArn"] }));
await sns.send(new SubscribeCommand({ TopicArn, Protocol: "sqs", Endpoint: QueueArn, Attributes: { RawMessageDelivery: "true" } }));
await sns.send(new PublishCommand({ TopicArn, Message: "published 0",
  MessageAttributes: { Kind: { DataType: "String", StringValue: "single" } } }));
const pb = await sns.send(new PublishBatchCommand({ TopicArn, PublishBatchRequestEntries: [1, 2].map((i) => ({
  Id: `p${i}`, Message: `published ${i}`, MessageAttributes: { Kind: { DataType: "String", StringValue: "batch" } } })) }));
if ((pb.Successful ?? []).length !== 2) fail(`PublishBatch: ${JSON.stringify(pb)}`);
const kinds = new Map();
const seen = await consume(subUrl, 3, { each: (m) => kinds.set(m.Body, m.MessageAttributes?.Kind?.StringValue) });
for (const [b, kind] of [["published 0", "single"], ["published 1", "batch"], ["published 2", "batch"]]) {
  if (seen.get(b) !== 1) fail(`${b} handled ${seen.get(b) ?? 0} times, want once`);
  if (kinds.get(b) !== kind) fail(`${b} has attribute Kind ${kinds.get(b)}, want ${kind}`);
}
await empty(subUrl);
// A subscription without RawMessageDelivery: the consumer gets SNS's JSON
// envelope and reads the message and its attributes out of it, as a
// worker behind SNS does.
const { QueueUrl: envUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `${prefix}events-env` }));
const { Attributes: { QueueArn: envArn } } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: envUrl, AttributeNames: ["QueueArn"] }));
await sns.send(new SubscribeCommand({ TopicArn, Protocol: "sqs", Endpoint: envArn }));
const published = await sns.send(new PublishCommand({ TopicArn, Message: "wrapped", Subject: "News",
  MessageAttributes: { Kind: { DataType: "String", StringValue: "envelope" } } }));
const envelopes = [];
await consume(envUrl, 1, { each: (m) => envelopes.push(JSON.parse(m.Body)) });
const [e] = envelopes;
if (e.Type !== "Notification" || e.TopicArn !== TopicArn || e.Message !== "wrapped" || e.Subject !== "News" ||
  e.MessageId !== published.MessageId || e.MessageAttributes?.Kind?.Value !== "envelope" || !e.Timestamp) {
  fail(`envelope ${JSON.stringify(e)}, want the notification of ${published.MessageId}`);
}
await empty(envUrl);

// The queue's URL as GetQueueUrl answers it is the one CreateQueue did.
const { QueueUrl: again } = await sqs.send(new GetQueueUrlCommand({ QueueName: `${prefix}events-sub` }));
if (again !== subUrl) fail(`GetQueueUrl ${again}, CreateQueue ${subUrl}`);

clearTimeout(timer);
console.log("ok: 40 messages consumed once each and deleted; 3 published through SNS consumed raw, 1 in its envelope");
