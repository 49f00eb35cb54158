// Command anchors is the other brokers' side of scripts/bench.sh's anchor
// figures: NATS JetStream (nats_r1_single, nats_r3_single) and RabbitMQ
// quorum queues (rabbitmq_r3_single). It makes the streams or queues of
// the comparison and drives them the way `narad bench --producers P`
// drives a Narad topic, so that the brokers' three-copy figures are
// measured side by side, on one machine, with the same load.
//
// The load: P publishers per server URL at once, each sending 256-byte
// messages one at a time and waiting for each one's acknowledgement
// (JetStream's PubAck, RabbitMQ's publisher confirm: each sent once a
// majority of the replicas stored the message), the messages of each
// publisher spread over the streams (queues) in turn, one message a turn,
// each publisher starting at its own. (Narad's nodes place keyless
// records over a topic's partitions in runs of 64 instead,
// docs/replication-performance.md; a NATS or AMQP publisher picks its
// subject or queue itself, and these do not do the same.)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A broker is one anchor: how to make its n streams (queues) and how to
// open one publisher on a server.
type broker interface {
	create(ctx context.Context, urls []string, n, replicas int) error
	// open connects a publisher to url; its send publishes payload to
	// stream s and returns once the broker acknowledged it.
	open(ctx context.Context, url string) (publisher, error)
}

type publisher interface {
	send(ctx context.Context, s int, payload []byte) error
	close()
}

func main() {
	kind := flag.String("broker", "nats", "nats (JetStream streams) or rabbitmq (quorum queues)")
	urls := flag.String("urls", "nats://127.0.0.1:4222", "comma-separated server URLs; the publishers are spread over them")
	create := flag.Bool("create", false, "create the streams or queues (retrying while the cluster forms), then exit")
	streams := flag.Int("streams", 3, "streams bench-0 .. bench-(n-1) (NATS subjects bench.0 ..), or queues of those names")
	replicas := flag.Int("replicas", 3, "replicas of each stream or queue (with -create)")
	producers := flag.Int("producers", 6, "publishers per URL")
	messages := flag.Int("messages", 10000, "messages per URL")
	size := flag.Int("size", 256, "payload bytes")
	flag.Parse()
	var b broker
	switch *kind {
	case "nats":
		b = jetStream{}
	case "rabbitmq":
		b = rabbitMQ{}
	default:
		fmt.Fprintf(os.Stderr, "anchors: -broker %q: want nats or rabbitmq\n", *kind)
		os.Exit(2)
	}
	list := strings.Split(*urls, ",")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var err error
	if *create {
		err = b.create(ctx, list, *streams, *replicas)
	} else {
		err = publish(ctx, b, list, *streams, *producers, *messages, *size)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "anchors:", err)
		os.Exit(1)
	}
}

// retry calls f until it succeeds or ctx ends, every 200 ms: a cluster
// that is still electing its leaders refuses for a while.
func retry(ctx context.Context, f func() error) error {
	for {
		err := f()
		if err == nil || ctx.Err() != nil {
			return err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// publish runs the publishers and prints one line of names and values:
// messages, seconds, messages_per_second, and the acknowledged publish's
// p50_us and p99_us.
func publish(ctx context.Context, b broker, urls []string, streams, producers, messages, size int) error {
	payload := make([]byte, size)
	var (
		wg      sync.WaitGroup
		failed  atomic.Pointer[error]
		mu      sync.Mutex
		latency []time.Duration
	)
	start := time.Now()
	for u, url := range urls {
		for p := range producers {
			n := messages / producers
			if p < messages%producers {
				n++
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				lat, err := run(ctx, b, url, streams, u*producers+p, n, payload)
				if err != nil {
					failed.CompareAndSwap(nil, &err)
				}
				mu.Lock()
				latency = append(latency, lat...)
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := failed.Load(); err != nil {
		return *err
	}
	slices.Sort(latency)
	q := func(f float64) time.Duration { return latency[int(f*float64(len(latency)-1))] }
	fmt.Printf("messages %d seconds %.3f messages_per_second %.0f p50_us %d p99_us %d\n", len(latency), elapsed.Seconds(),
		float64(len(latency))/elapsed.Seconds(), q(0.5).Microseconds(), q(0.99).Microseconds())
	return nil
}

// run is publisher id: n messages through url, each waited for, the
// stream turning with every message; it returns each one's latency.
func run(ctx context.Context, b broker, url string, streams, id, n int, payload []byte) ([]time.Duration, error) {
	p, err := b.open(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", url, err)
	}
	defer p.close()
	out := make([]time.Duration, 0, n)
	for i := range n {
		s := (id + i) % streams
		t0 := time.Now()
		if err := p.send(ctx, s, payload); err != nil {
			return out, fmt.Errorf("publish to bench-%d through %s: %w", s, url, err)
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}
