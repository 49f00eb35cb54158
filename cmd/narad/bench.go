package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/spf13/cobra"
)

type benchFlags struct {
	producers  int
	consumers  int
	consume    bool
	messages   int
	duration   time.Duration
	size       int
	batch      int
	consumeMax int
	partitions int
	rf         int
	json       bool
	nonempty   bool   // --allow-nonempty: produce into a named topic that holds records
	format     string // --batch-format: json, ndjson or binary
	rate       int    // --rate: records per second offered in all (0: as fast as answered)
	e2e        bool   // --e2e: produce and consume at once, measure produce-to-consumed
	viaChild   bool   // --via-child: with --e2e, consume from a child of the scratch topic
	cpuProfile string // --cpuprofile: write the bench's own CPU profile here (the client's share)
	// delay (--delay) schedules every produced record that long ahead
	// (docs/concepts.md, "Scheduled delivery"); with --e2e the figure is
	// then each record's time past its due time.
	delay time.Duration
	// keys (--keys) spreads the records over that many keys, k0..kN-1,
	// in turn; ordering (--ordering) is the scratch topic's ("group":
	// each key a message group, docs/concepts.md, "Message groups").
	keys     int
	ordering string
	// api (--api) is the protocol measured: native (/v1) or sqs (Amazon
	// SQS's JSON protocol, signed with the key pair and region below).
	api             string
	accessKeyID     string
	secretAccessKey string
	region          string
}

// Bounds of the flags, checked before anything is sent. The payload and
// batch bounds are the server's own (docs/http-api.md: a payload is 1 byte
// .. 1 MiB, a batch at most 10,000 records and 16 MiB), so a run the
// server would refuse record by record is refused here once.
const (
	benchMaxWorkers    = 1000
	benchMaxPayload    = 1 << 20
	benchMaxBatch      = 10_000
	benchMaxBatchBytes = 16 << 20
	benchMaxConsume    = 1000
)

func (a *app) benchCmd() *cobra.Command {
	var f benchFlags
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "bench [TOPIC]",
		Short: "Measure produce (and consume) throughput and latency",
		Long: `Send --messages messages (or as many as fit in --duration) of --size bytes
from --producers concurrent producers, then print messages per second and
the latency of the requests (p50, p90, p99, p99.9, max; -o json or --json:
one JSON document with every figure). --batch N sends N records per request.
--consumers N then consumes and acknowledges what was produced with N
concurrent consumers (--consume: as many consumers as producers), up to
--consume-max records per consume; one record is acknowledged alone, more
with one batch ack.

Without TOPIC the bench makes a scratch topic of its own, named
bench-<random> (--partitions sets its size), and deletes it when it ends:
on success, on error and on Ctrl-C. It never touches another topic.

With TOPIC the bench only produces into that existing topic; the records
stay there. It refuses a topic that holds records unless --allow-nonempty
is given: its records would sit among real ones, and the topic's
consumers would get them. It refuses to consume from it: a queue hands a
consumer other producers' records too, and the bench would drain them.

--api sqs sends the same load through the node's Amazon SQS JSON
protocol (docs/aws.md) with a lean client of the bench's own, signed
with --access-key-id and --secret-access-key (or AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY; neither: a placeholder pair, which a node with
security off accepts) for --region. SQS takes at most 10 messages a
request: --batch and --consume-max (default 10 there) stop at 10.

It stops at the first refusal (400, 401, 403, 404, 409, 413) instead of
repeating it; a worker gives up after 3 failed requests in a row. On a
terminal a progress bar shows the rate and the time left. Ctrl-C prints
what was measured so far and exits 130.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := out.format()
			if err != nil {
				return err
			}
			f.json = format == formatJSON
			if err := f.resolve(cmd, args); err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			d, err := a.benchData(f, c)
			if err != nil {
				return err
			}
			ctx, stop := withSignals(cmd.Context())
			defer stop()
			// After the first Ctrl-C the bench winds down (and deletes
			// its scratch topic); a second one kills it the usual way.
			go func() { <-ctx.Done(); stop() }()
			topic := ""
			if len(args) == 1 {
				topic = args[0]
			}
			if f.cpuProfile != "" {
				end, err := startCPUProfile(f.cpuProfile)
				if err != nil {
					return err
				}
				defer end()
			}
			return (&bench{a: a, c: c, d: d, f: f}).run(ctx, topic)
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&f.producers, "producers", 16, "concurrent producers")
	fs.IntVar(&f.consumers, "consumers", 0, "concurrent consumers that then consume and acknowledge what was produced (0: produce only)")
	fs.BoolVar(&f.consume, "consume", false, "consume too, with as many consumers as --producers")
	fs.IntVar(&f.messages, "messages", 10000, "messages to send")
	fs.Var(newDurationValue(&f.duration, 0), "duration", "produce for this long instead of --messages, e.g. 30s")
	fs.IntVar(&f.size, "size", 256, "payload size in bytes (1..1048576)")
	fs.IntVar(&f.batch, "batch", 1, "records per request (1..10000); above 1 uses batch produce")
	fs.IntVar(&f.consumeMax, "consume-max", 100, "records per consume (1..1000): 1 measures consume + ack one record per call, more a batch consume + batch ack")
	fs.IntVar(&f.partitions, "partitions", 0, "partitions of the scratch topic (0: the server's default)")
	fs.IntVar(&f.rf, "replication-factor", 0, "copies of each partition of the scratch topic, 1..5 (0: the server's default, one)")
	fs.StringVar(&f.format, "batch-format", "json", "batch produce body with --batch above 1: json, ndjson or binary (application/x-narad-batch)")
	fs.IntVar(&f.rate, "rate", 0, "records per second the producers offer in all, paced (0: as fast as they are answered)")
	fs.BoolVar(&f.e2e, "e2e", false, "consume while producing and report each record's latency from its produce to a waiting consumer (--consumers defaults to 1)")
	fs.BoolVar(&f.viaChild, "via-child", false, "with --e2e, consume from a scratch child attached to the scratch topic: the fan-out copy's latency")
	fs.BoolVar(&f.nonempty, "allow-nonempty", false, "produce into TOPIC even though it holds records (its consumers will get the bench's)")
	fs.IntVar(&f.keys, "keys", 0, "spread the records over this many keys in turn (0: keyless)")
	fs.StringVar(&f.ordering, "ordering", "", "the scratch topic's ordering: none or group (each key a message group)")
	fs.DurationVar(&f.delay, "delay", 0, "schedule every record this long ahead (0: none); with --e2e the end-to-end figure is the time past the due time")
	fs.StringVar(&f.api, "api", "native", "the protocol measured: native (the /v1 API) or sqs (Amazon SQS's JSON protocol, with a lean client of the bench's own)")
	fs.StringVar(&f.accessKeyID, "access-key-id", "", "with --api sqs, the access key id that signs (default: AWS_ACCESS_KEY_ID; neither: a placeholder a node with security off accepts)")
	fs.StringVar(&f.secretAccessKey, "secret-access-key", "", "with --api sqs, the key's secret (default: AWS_SECRET_ACCESS_KEY)")
	fs.StringVar(&f.region, "region", "", "with --api sqs, the region signed for, the node's aws.region (default: AWS_REGION, else us-east-1)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write the bench client's own CPU profile to this file (go tool pprof): the load generator's share of the machine")
	out = addOutputFlags(cmd)
	return cmd
}

// resolve checks the flags against each other and the server's bounds,
// before any request, and settles --consume into --consumers.
func (f *benchFlags) resolve(cmd *cobra.Command, args []string) error {
	changed := cmd.Flags().Changed
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if f.producers < 1 || f.producers > benchMaxWorkers {
		bad("--producers must be 1..%d, got %d", benchMaxWorkers, f.producers)
	}
	if f.consumers < 0 || f.consumers > benchMaxWorkers {
		bad("--consumers must be 0..%d, got %d", benchMaxWorkers, f.consumers)
	}
	if f.consume && !changed("consumers") {
		f.consumers = f.producers
	}
	if f.e2e && f.consumers == 0 {
		f.consumers = 1
	}
	if f.rate < 0 {
		bad("--rate must not be negative, got %d", f.rate)
	}
	if f.e2e && f.size < stampLen {
		bad("--e2e stamps each payload with its send time: --size must be at least %d bytes, got %d", stampLen, f.size)
	}
	if f.keys < 0 {
		bad("--keys must not be negative, got %d", f.keys)
	}
	if f.ordering != "" && f.ordering != "none" && f.ordering != "group" {
		bad("--ordering %q: want none or group", f.ordering)
	}
	if f.delay < 0 || f.delay > 365*24*time.Hour {
		bad("--delay must be 0..8760h (a year), got %s", f.delay)
	}
	if f.delay > 0 && f.consumers > 0 && !f.e2e {
		bad("--delay with consumers: they would wait out the delay after the produce phase; give --e2e to time the due records as they arrive")
	}
	if f.delay > 0 && f.format == "binary" {
		bad("--delay: the binary batch format has no field for a record's delay; use --batch-format json or ndjson")
	}
	if f.viaChild && !f.e2e {
		bad("--via-child measures the child's end-to-end latency: give --e2e too")
	}
	switch {
	case changed("duration") && changed("messages"):
		bad("give --messages or --duration, not both")
	case changed("duration") && f.duration <= 0:
		bad("--duration must be above 0, got %s", f.duration)
	case f.messages < 1:
		bad("--messages must be at least 1, got %d", f.messages)
	}
	if f.size < 1 || f.size > benchMaxPayload {
		bad("--size must be 1..%d bytes (the server's payload bounds), got %d", benchMaxPayload, f.size)
	}
	if f.batch < 1 || f.batch > benchMaxBatch {
		bad("--batch must be 1..%d records (the server's cap), got %d", benchMaxBatch, f.batch)
	} else if f.batch > 1 && f.size <= benchMaxPayload {
		if body := batchBodySize(f.batch, f.size); body > benchMaxBatchBytes {
			bad("--batch %d of --size %d makes a request of %s, over the server's 16 MiB: lower --batch or --size",
				f.batch, f.size, formatBytes(int64(body)))
		}
	}
	if f.format == "" {
		f.format = "json"
	}
	if _, err := client.ParseBatchFormat(f.format); err != nil {
		bad("--batch-format %q: want json, ndjson or binary", f.format)
	}
	if f.consumeMax < 1 || f.consumeMax > benchMaxConsume {
		bad("--consume-max must be 1..%d records (the server's cap), got %d", benchMaxConsume, f.consumeMax)
	}
	switch f.api {
	case "native", "sqs":
		f.resolveSQS(changed, bad)
	default:
		bad("--api %q: want native or sqs", f.api)
	}
	if f.partitions < 0 {
		bad("--partitions must not be negative, got %d", f.partitions)
	}
	if f.rf < 0 || f.rf > 5 {
		bad("--replication-factor must be 1..5 copies, got %d", f.rf)
	}
	if len(args) == 1 {
		if changed("partitions") {
			bad("--partitions sizes the scratch topic; %s exists already (leave out TOPIC for a scratch topic)", args[0])
		}
		if changed("replication-factor") {
			bad("--replication-factor is the scratch topic's; %s exists already (leave out TOPIC for a scratch topic)", args[0])
		}
		if changed("ordering") {
			bad("--ordering is the scratch topic's; %s exists already (leave out TOPIC for a scratch topic)", args[0])
		}
		if f.viaChild {
			bad("--via-child attaches a scratch child to the scratch topic: leave out TOPIC")
		}
		if f.consumers > 0 {
			bad("--consume/--consumers/--e2e on %s would take other producers' records from its queue: leave out TOPIC and the bench consumes from a scratch topic of its own", args[0])
		}
	} else if f.nonempty {
		bad("--allow-nonempty is for a named TOPIC; the scratch topic is always empty")
	}
	return errors.Join(errs...)
}

// batchBodySize is the JSON body of a batch of n records of size bytes:
// {"records":[{"payload":"xx…"},…]}.
func batchBodySize(n, size int) int {
	return len(`{"records":[]}`) + n*(len(`{"payload":""},`)+size)
}

type bench struct {
	a *app
	c *client.Client // topics: the scratch topic, its child, a named topic's check
	d benchData      // the measured calls, through --api's protocol
	f benchFlags

	keyTurn atomic.Int64 // the last of the --keys handed out
}

// run is one bench: the topic, the phases, the scratch topic's deletion,
// then the report. The report is printed however the phases ended, so a
// failed or interrupted run still says what it measured.
func (b *bench) run(ctx context.Context, named string) error {
	t, err := b.target(ctx, named)
	if err != nil {
		if t.scratch {
			// A create cut short may still have happened.
			err = errors.Join(err, b.dropScratchAll(ctx, t))
		}
		return b.finish(ctx, err)
	}
	for _, topic := range []string{t.name, t.consumeFrom()} {
		if err := b.d.open(ctx, topic); err != nil {
			if t.scratch {
				err = errors.Join(err, b.dropScratchAll(ctx, t))
			}
			return b.finish(ctx, err)
		}
	}
	rep := newBenchReport(b.f, t)
	if b.f.e2e {
		failed := b.runE2E(ctx, rep, t.name, t.consumeFrom())
		return b.end(ctx, rep, t, failed)
	}
	prod := b.produce(ctx, t.name)
	rep.Produce = prod.report(b.f.size)
	failed := prod.failure()
	if b.f.consumers > 0 && prod.stopped == "" && prod.ok() > 0 {
		cons := b.consume(ctx, t.name, prod.ok())
		rep.Consume = cons.report(b.f.size)
		failed = errors.Join(failed, cons.failure())
	}
	return b.end(ctx, rep, t, failed)
}

// end deletes the scratch topics and prints the report, however the
// phases ended.
func (b *bench) end(ctx context.Context, rep *benchReport, t benchTarget, failed error) error {
	rep.Interrupted = ctx.Err() != nil
	if t.scratch {
		derr := b.dropScratchAll(ctx, t)
		rep.ScratchDeleted = derr == nil
		failed = errors.Join(failed, derr)
	}
	if err := rep.print(b.a.stdout, b.f.json); err != nil {
		return err
	}
	return b.finish(ctx, failed)
}

// finish turns an interrupted run into errBenchInterrupted (exit 130),
// whatever errors the cut-short requests left.
func (b *bench) finish(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		// The one error still worth saying: what is left behind.
		if left := (*scratchLeftError)(nil); errors.As(err, &left) {
			fmt.Fprintf(b.a.stderr, "narad: %v\n", left)
		}
		return errBenchInterrupted
	}
	return err
}
