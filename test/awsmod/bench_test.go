package awsmod

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/narad-io/narad/client"
)

// SQS and /v1 side by side (docs/aws.md; docs/performance.md): the same
// node, the same queue shape, the same clients count, each protocol's own
// client — the AWS SDK for Go v2 through SQS, Narad's Go client through
// /v1. Each reports messages a second and the node's CPU per message
// (its user and system time, from /proc, over the run), and the
// clients' (this process's). Run with
//
//	cd test/awsmod && go test -run '^$' -bench . -benchtime 20000x
//
// The clients run in this process, on the same machine as the node: the
// figures compare the two protocols with each other, not with a network.

const benchClients = 16

// benchNode is the node of one top-level benchmark; NARAD_BENCH_ENV
// adds settings (NARAD_HTTP_PPROF_ADDR=... to profile it).
func benchNode(b *testing.B) *node {
	var extra []string
	if e := os.Getenv("NARAD_BENCH_ENV"); e != "" {
		extra = strings.Fields(e)
	}
	return startNode(b, extra...)
}

// cpuTicks is the node's user+system time in clock ticks (1/100 s).
func cpuTicks(b *testing.B, n *node) int64 {
	n.mu.Lock()
	pid := n.cmd.Process.Pid
	n.mu.Unlock()
	return procTicks(b, strconv.Itoa(pid))
}

// procTicks is a process's user+system time in clock ticks.
func procTicks(b *testing.B, pid string) int64 {
	raw, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return u + st
}

// run spreads b.N messages over benchClients goroutines, each calling
// do with how many messages it moves at once, and reports the rate and
// the node's CPU per message.
func run(b *testing.B, n *node, per int, do func(ctx context.Context, i int) error) {
	ctx := context.Background()
	var next atomic.Int64
	t0, c0, me0 := time.Now(), cpuTicks(b, n), procTicks(b, "self")
	b.ResetTimer()
	var wg sync.WaitGroup
	errs := make(chan error, benchClients)
	for w := 0; w < benchClients; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(int64(per)) - int64(per)
				if i >= int64(b.N) {
					return
				}
				if err := do(ctx, int(i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	el := time.Since(t0)
	ticks, mine := cpuTicks(b, n)-c0, procTicks(b, "self")-me0
	b.ReportMetric(float64(b.N)/el.Seconds(), "msg/s")
	b.ReportMetric(float64(ticks)*1e4/float64(b.N), "server-cpu-µs/msg")
	b.ReportMetric(float64(mine)*1e4/float64(b.N), "client-cpu-µs/msg")
	b.ReportMetric(0, "ns/op")
}

func sqsBench(b *testing.B, n *node, name string) (*sqs.Client, *string) {
	c := sqsClient(n, "test", "test")
	c = sqs.New(c.Options(), func(o *sqs.Options) {
		o.HTTPClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchClients}}
	})
	q, err := c.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String(name)})
	if err != nil {
		b.Fatal(err)
	}
	return c, q.QueueUrl
}

// runs numbers the queues of a benchmark's runs: -count and b.N repeat.
var runs atomic.Int64

func nativeBench(b *testing.B, n *node, name string) *client.Client {
	c := client.New(n.url(), "", "", &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: benchClients}})
	if _, err := c.CreateTopic(context.Background(), client.CreateTopicRequest{Name: name}); err != nil {
		b.Fatal(err)
	}
	return c
}

var (
	body   = strings.Repeat("x", 256)
	body64 = base64.StdEncoding.EncodeToString([]byte(body))
)

func BenchmarkSend(b *testing.B) {
	n := benchNode(b)
	for _, per := range []int{1, 10} {
		b.Run(fmt.Sprintf("native/%d", per), func(b *testing.B) {
			name := fmt.Sprintf("bn-send-%d-%d-%d", per, b.N, runs.Add(1))
			c := nativeBench(b, n, name)
			run(b, n, per, func(ctx context.Context, _ int) error {
				if per == 1 {
					return c.Produce(ctx, name, []byte(body), client.ProduceOptions{})
				}
				recs := make([]client.BatchRecord, per)
				for i := range recs {
					recs[i] = client.BatchRecord{PayloadBase64: body64}
				}
				_, err := c.ProduceBatch(ctx, name, recs)
				return err
			})
		})
		b.Run(fmt.Sprintf("sqs/%d", per), func(b *testing.B) {
			c, q := sqsBench(b, n, fmt.Sprintf("bs-send-%d-%d-%d", per, b.N, runs.Add(1)))
			run(b, n, per, func(ctx context.Context, _ int) error {
				if per == 1 {
					_, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: q, MessageBody: aws.String(body)})
					return err
				}
				es := make([]types.SendMessageBatchRequestEntry, per)
				for i := range es {
					es[i] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(body)}
				}
				_, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: q, Entries: es})
				return err
			})
		})
	}
}

// BenchmarkReceiveDelete fills a queue with b.N messages through its own
// protocol, then times taking and settling them all.
func BenchmarkReceiveDelete(b *testing.B) {
	n := benchNode(b)
	for _, per := range []int{1, 10} {
		b.Run(fmt.Sprintf("native/%d", per), func(b *testing.B) {
			name := fmt.Sprintf("bn-recv-%d-%d-%d", per, b.N, runs.Add(1))
			c := nativeBench(b, n, name)
			fill(b, func(ctx context.Context, k int) error {
				recs := make([]client.BatchRecord, k)
				for i := range recs {
					recs[i] = client.BatchRecord{PayloadBase64: body64}
				}
				_, err := c.ProduceBatch(ctx, name, recs)
				return err
			})
			run(b, n, per, func(ctx context.Context, _ int) error {
				ms, err := c.Consume(ctx, name, client.ConsumeOptions{Max: per, Wait: time.Second})
				if err != nil {
					return err
				}
				if per == 1 {
					for _, m := range ms {
						if err := c.Ack(ctx, name, m.ReceiptHandle); err != nil {
							return err
						}
					}
					return nil
				}
				hs := make([]string, len(ms))
				for i, m := range ms {
					hs[i] = m.ReceiptHandle
				}
				if len(hs) > 0 {
					_, err = c.AckBatch(ctx, name, hs)
				}
				return err
			})
		})
		b.Run(fmt.Sprintf("sqs/%d", per), func(b *testing.B) {
			c, q := sqsBench(b, n, fmt.Sprintf("bs-recv-%d-%d-%d", per, b.N, runs.Add(1)))
			fill(b, func(ctx context.Context, k int) error {
				es := make([]types.SendMessageBatchRequestEntry, k)
				for i := range es {
					es[i] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(body)}
				}
				_, err := c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: q, Entries: es})
				return err
			})
			run(b, n, per, func(ctx context.Context, _ int) error {
				out, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q, MaxNumberOfMessages: int32(per), WaitTimeSeconds: 1})
				if err != nil {
					return err
				}
				if per == 1 {
					for _, m := range out.Messages {
						if _, err := c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: q, ReceiptHandle: m.ReceiptHandle}); err != nil {
							return err
						}
					}
					return nil
				}
				if len(out.Messages) == 0 {
					return nil
				}
				es := make([]types.DeleteMessageBatchRequestEntry, len(out.Messages))
				for i, m := range out.Messages {
					es[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle}
				}
				_, err = c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: q, Entries: es})
				return err
			})
		})
	}
}

// fill puts b.N messages in, ten at a time, before the timer starts.
func fill(b *testing.B, send func(ctx context.Context, k int) error) {
	ctx := context.Background()
	for done := 0; done < b.N; done += 10 {
		if err := send(ctx, min(10, b.N-done)); err != nil {
			b.Fatal(err)
		}
	}
}
