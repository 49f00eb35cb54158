// Command anchors is the NATS JetStream side of scripts/bench.sh's
// nats_r1_single and nats_r3_single figures: it makes the streams of the comparison and
// drives them the way `narad bench --producers P` drives a Narad topic,
// so that the two brokers' three-copy figures are measured side by side,
// on one machine, with the same load.
//
// The load: P publishers per server URL at once, each sending 256-byte
// messages one at a time and waiting for each one's acknowledgement
// (JetStream's PubAck, sent once a majority of the stream's replicas
// stored it), the messages of each publisher spread over the streams in
// turn, one message a turn, each publisher starting at its own stream.
// (Narad's nodes place keyless records over a topic's partitions in runs
// of 64 instead, docs/replication-performance.md; a NATS publisher picks
// its subject itself, and this one does not do the same.)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

func main() {
	urls := flag.String("urls", "nats://127.0.0.1:4222", "comma-separated server URLs; the publishers are spread over them")
	create := flag.Bool("create", false, "create the streams (retrying while the cluster elects its metadata leader), then exit")
	streams := flag.Int("streams", 3, "streams bench-0 .. bench-(n-1), subjects bench.0 ..")
	replicas := flag.Int("replicas", 3, "replicas of each stream (with -create)")
	producers := flag.Int("producers", 6, "publishers per URL")
	messages := flag.Int("messages", 10000, "messages per URL")
	size := flag.Int("size", 256, "payload bytes")
	flag.Parse()
	list := strings.Split(*urls, ",")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if *create {
		if err := createStreams(ctx, list[0], *streams, *replicas); err != nil {
			fmt.Fprintln(os.Stderr, "anchors:", err)
			os.Exit(1)
		}
		return
	}
	if err := publish(ctx, list, *streams, *producers, *messages, *size); err != nil {
		fmt.Fprintln(os.Stderr, "anchors:", err)
		os.Exit(1)
	}
}

// createStreams makes the file-stored streams, retrying while the
// cluster elects its metadata leader.
func createStreams(ctx context.Context, url string, n, replicas int) error {
	nc, err := nats.Connect(url)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	for i := range n {
		cfg := jetstream.StreamConfig{Name: fmt.Sprintf("bench-%d", i), Subjects: []string{fmt.Sprintf("bench.%d", i)},
			Replicas: replicas, Storage: jetstream.FileStorage}
		for {
			_, err = js.CreateStream(ctx, cfg)
			if err == nil || ctx.Err() != nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil {
			return fmt.Errorf("create %s: %w", cfg.Name, err)
		}
	}
	return nil
}

// publish runs the publishers and prints one line of names and values:
// messages, seconds, messages_per_second, and the acknowledged publish's
// p50_us and p99_us.
func publish(ctx context.Context, urls []string, streams, producers, messages, size int) error {
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
				lat, err := publisher(ctx, url, streams, u*producers+p, n, payload)
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

// publisher sends n messages through url, each waited for, and returns
// each one's latency.
func publisher(ctx context.Context, url string, streams, id, n int, payload []byte) ([]time.Duration, error) {
	nc, err := nats.Connect(url)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	out := make([]time.Duration, 0, n)
	for i := range n {
		subject := fmt.Sprintf("bench.%d", (id+i)%streams)
		t0 := time.Now()
		if _, err := js.Publish(ctx, subject, payload); err != nil {
			return out, errors.Join(fmt.Errorf("publish to %s through %s", subject, url), err)
		}
		out = append(out, time.Since(t0))
	}
	return out, nil
}
