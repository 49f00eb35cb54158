// Package client is the Go client of Narad's HTTP API (/v1): topics,
// produce, queue consume with leases, acks, replay by offset, fan-out
// children, users and cluster operations. It owns the wire contract from
// the caller's side (paths, bodies, the answers' JSON, non-2xx answers as
// *APIError) and depends on the standard library only; the narad CLI, the
// end-to-end tests and remote fan-out children use it too.
//
//	import "github.com/narad-io/narad/client"
//
//	c := client.New("http://127.0.0.1:7942", "alice", "s3cret-pw", nil)
//
// # Connecting
//
// New takes the node's base URL (any node of a cluster serves any
// request), the HTTP Basic credentials (an empty user sends none: a node
// started with --dev needs none) and an optional *http.Client. Pass your
// own *http.Client for TLS with a private CA (its Transport's
// TLSClientConfig.RootCAs), a proxy or a client-wide timeout. A Client is
// safe for concurrent use; make one per node and share it.
//
// Every call takes a context.Context first: cancel it, or give it a
// deadline, to bound a call. A long-poll consume waits up to its
// ConsumeOptions.Wait (capped by the server) unless the context ends
// sooner.
//
// # Producing
//
// Produce sends one record; the payload is the request body, byte for
// byte. A nil error means the record is durable (the node answered 202
// after fsync). ProduceOptions.Key keeps records of one key in one
// partition (and so in order); ProduceOptions.Partition pins a partition.
// ProduceBatch sends up to 10,000 records in one request, all or none;
// RecordFromBytes builds a BatchRecord that comes back exactly as given.
//
// ProduceOptions.Delay or DeliverAt (in a batch, BatchRecord.WithDelay or
// WithDeliverAt) schedules a record: it is durable at once, but queue
// consumers are offered it only when it falls due (Message.DeliverAt);
// replay returns it at once. A topic's DeliveryDelayMs schedules every
// record that names no delay of its own.
//
// # Consuming
//
// Consume leases the next available record: nobody else receives it until
// its visibility timeout lapses (the topic's visibility_timeout_ms, 30 s by
// default). Settle each delivery with its Message.ReceiptHandle:
//
//   - Ack: done, never delivered again.
//   - Extend: restart the visibility timeout, for work that takes longer.
//   - ExtendFor: end the lease a given time from now, shorter or longer
//     than the timeout (1 ms .. 12 h).
//   - Nack: hand it back now; it is delivered again at once.
//
// A lease that lapsed answers 410 (StatusOf(err) == http.StatusGone): the
// record may be with another consumer. Delivery is at least once, so
// handlers should be idempotent; Message.DeliveryCount counts deliveries.
// ConsumeOptions.Max takes up to 1,000 records per call, and AckBatch
// settles many handles in one request.
//
// ConsumeLoop is the worker loop most programs want: it long-polls, calls
// a Handler per message, acks on a nil return and nacks on an error,
// extends leases while a handler runs long, retries transient failures
// with a short backoff, and on cancellation hands back (nacks) what it
// still holds:
//
//	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
//	defer stop()
//	err := c.ConsumeLoop(ctx, "orders", client.ConsumeLoopOptions{},
//		func(ctx context.Context, m client.Message) error {
//			return process(ctx, m) // nil: acked; an error: nacked
//		})
//
// # Replay
//
// Consume with both ConsumeOptions.Partition and ConsumeOptions.Offset
// reads records by offset without any lease or effect on the queue: the
// messages carry no receipt handle. Message.Bytes returns a payload's
// original bytes whichever way the server encoded it (JSON as itself,
// text as a JSON string, other bytes as base64; Message.PayloadEncoding
// says which).
//
// Reading by time: OffsetsAt gives each partition's first offset at or
// after a time; ReplaySince reads the records committed since a time, of
// one partition or of every partition merged in commit-time order, a page
// at a time (SincePage.NextPageToken continues), and ReplaySinceAll ranges
// over them page after page until caught up:
//
//	for m, err := range c.ReplaySinceAll(ctx, "orders", client.SinceOptions{Since: "10m"}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(m.Time(), m.Partition, m.Offset)
//	}
//
// # Administration
//
// CreateTopic, ListTopics, GetTopic (with partition statistics),
// AlterTopic and DeleteTopic manage topics; Attach, Children and Detach
// manage fan-out children; CreateUser, ListUsers, GetUser, SetGrants,
// SetLimits, SetPassword and DeleteUser the users API; Members, Moves, Decommission
// and CancelDecommission the cluster; Healthz and Readyz the probes.
//
// # Errors
//
// A non-2xx answer is an *APIError with the HTTP status, the server's
// sentence, Retry-After for a 503 or 429, and for a refused batch the index of
// the record refused (RefusedIndex). StatusOf reads the status through
// wrapping; IsTransient reports whether an error is worth retrying (429,
// 5xx, no answer at all — never a cancelled context). A request over the
// caller's rate limit is a 429 that errors.Is(err, ErrRateLimited), and
// RateLimited returns its Retry-After; nothing of it was stored. Other errors
// (connection refused, a context that ended) come back as they are.
//
// # Retries
//
// A Client retries nothing unless given a RetryPolicy (WithRetry): then a
// call is repeated, for a bounded time and honouring Retry-After, when no
// connection could be made, on 503 and 429, and after a lost answer only
// for calls safe to repeat — produce among them, so with a policy produce
// is at least once (see RetryPolicy). Backoff is the one pause schedule of
// every retry loop here and in the CLI.
//
// # Raw JSON
//
// Topic, TopicDetail, Child, AttachResult and Message keep the server's
// own bytes (Raw), so a tool printing JSON prints the API's JSON: fields
// this client does not know, timestamps and payload bytes as they came.
//
// # Compatibility
//
// The package follows the module's version. Response types may gain
// fields as the server does, and the client ignores fields it does not
// know; where the wire contract leaves a detail open (whether a timestamp
// is seconds, milliseconds or text), the types accept every spelling
// rather than fail a whole answer over one field. The document of the
// whole API is served by every node at GET /v1/openapi.json.
package client
