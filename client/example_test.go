package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"time"

	"github.com/narad-io/narad/client"
)

// startNode stands in for a running node (`narad server start --dev`
// listens on http://127.0.0.1:7942): an in-process fake that answers the
// routes these examples use as a node does.
func startNode() (url string, stop func()) {
	b := newFakeBroker()
	return b.URL(), b.Close
}

// The basic cycle: create a topic, produce a record, consume it under a
// lease, acknowledge it.
func Example() {
	url, stop := startNode()
	defer stop()
	ctx := context.Background()
	c := client.New(url, "", "", nil) // security on: client.New(url, "alice", "s3cret-pw", nil)

	t, err := c.CreateTopic(ctx, client.CreateTopicRequest{Name: "orders", Partitions: 3})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("created", t.Name)

	key := "customer-42"
	if err := c.Produce(ctx, "orders", []byte(`{"order_id": 1}`), client.ProduceOptions{Key: &key}); err != nil {
		log.Fatal(err)
	}

	msgs, err := c.Consume(ctx, "orders", client.ConsumeOptions{Wait: 5 * time.Second})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		payload, _ := m.Bytes()
		fmt.Printf("%s: %s (delivery %d)\n", *m.Key, payload, m.DeliveryCount)
		if err := c.Ack(ctx, "orders", m.ReceiptHandle); err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// created orders
	// customer-42: {"order_id": 1} (delivery 1)
}

// A worker: ConsumeLoop long-polls, runs the handler, acks what it
// finished and nacks what it refused, extends leases for slow handlers,
// and stops when its context is cancelled.
func ExampleClient_ConsumeLoop() {
	url, stop := startNode()
	defer stop()
	c := client.New(url, "", "", nil)
	setup := context.Background()
	c.CreateTopic(setup, client.CreateTopicRequest{Name: "emails"})
	for _, to := range []string{"ana@example.com", "bo@example.com"} {
		c.Produce(setup, "emails", []byte(to), client.ProduceOptions{})
	}

	ctx, cancel := context.WithCancel(context.Background()) // in a program: signal.NotifyContext
	sent := 0
	err := c.ConsumeLoop(ctx, "emails", client.ConsumeLoopOptions{
		OnError: func(err error) { log.Print(err) },
	}, func(ctx context.Context, m client.Message) error {
		to, err := m.Bytes()
		if err != nil {
			return err // nacked: delivered again
		}
		fmt.Println("sending to", string(to))
		if sent++; sent == 2 {
			cancel() // done for the example
		}
		return nil // acknowledged
	})
	fmt.Println("stopped:", err)
	// Output:
	// sending to ana@example.com
	// sending to bo@example.com
	// stopped: context canceled
}

// Many records in one request; RecordFromBytes picks the encoding that
// brings each back byte for byte.
func ExampleClient_ProduceBatch() {
	url, stop := startNode()
	defer stop()
	ctx := context.Background()
	c := client.New(url, "", "", nil)
	c.CreateTopic(ctx, client.CreateTopicRequest{Name: "events"})

	key := "sensor-7"
	recs := []client.BatchRecord{
		client.RecordFromBytes([]byte(`{"temp": 21.5}`)),
		client.RecordFromBytes([]byte("plain text")),
		client.RecordFromBytes([]byte{0xff, 0x00, 0x01}),
	}
	recs[0].Key = &key
	n, err := c.ProduceBatch(ctx, "events", recs)
	if err != nil {
		if i, ok := client.RefusedIndex(err); ok {
			log.Fatalf("record %d refused: %v", i, err)
		}
		log.Fatal(err)
	}
	fmt.Println("accepted", n)

	msgs, _ := c.Consume(ctx, "events", client.ConsumeOptions{Max: 10})
	for _, m := range msgs {
		b, _ := m.Bytes()
		fmt.Printf("%q encoding=%q\n", b, m.PayloadEncoding)
	}
	// Output:
	// accepted 3
	// "{\"temp\": 21.5}" encoding=""
	// "plain text" encoding="text"
	// "\xff\x00\x01" encoding="base64"
}

// Refusals are *APIError values: the status, the server's sentence, and
// for a 503 its Retry-After. StatusOf reads the status through wrapping.
func ExampleAPIError() {
	url, stop := startNode()
	defer stop()
	c := client.New(url, "", "", nil)

	_, err := c.Consume(context.Background(), "nowhere", client.ConsumeOptions{})
	var apiErr *client.APIError
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.Status, apiErr.Message)
	}
	fmt.Println(client.StatusOf(err) == http.StatusNotFound, client.IsTransient(err))
	// Output:
	// 404 topic "nowhere" does not exist
	// true false
}

// Replay reads a partition by offset: no lease, no receipt handle, and the
// queue is not affected.
func ExampleClient_Consume_replay() {
	url, stop := startNode()
	defer stop()
	ctx := context.Background()
	c := client.New(url, "", "", nil)
	c.CreateTopic(ctx, client.CreateTopicRequest{Name: "audit", Partitions: 1})
	c.Produce(ctx, "audit", []byte("first"), client.ProduceOptions{})

	part, from := 0, uint64(0)
	msgs, err := c.Consume(ctx, "audit", client.ConsumeOptions{Partition: &part, Offset: &from, Max: 100})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range msgs {
		b, _ := m.Bytes()
		fmt.Printf("offset %d: %s (receipt handle %q)\n", m.Offset, b, m.ReceiptHandle)
	}
	// Output:
	// offset 0: first (receipt handle "")
}

// A handler slower than the visibility timeout keeps its lease by hand
// with Extend (ConsumeLoop does this by itself).
func ExampleClient_Extend() {
	url, stop := startNode()
	defer stop()
	ctx := context.Background()
	c := client.New(url, "", "", nil)
	c.CreateTopic(ctx, client.CreateTopicRequest{Name: "renders", VisibilityTimeoutMs: 30000})
	c.Produce(ctx, "renders", []byte(`{"frame": 1}`), client.ProduceOptions{})

	msgs, _ := c.Consume(ctx, "renders", client.ConsumeOptions{})
	m := msgs[0]
	for step := 0; step < 3; step++ {
		// ... a third of the visibility timeout's worth of work ...
		if err := c.Extend(ctx, "renders", m.ReceiptHandle); err != nil {
			log.Fatal(err) // a 410: the lease lapsed, someone else may have it
		}
	}
	fmt.Println(c.Ack(ctx, "renders", m.ReceiptHandle))
	// Output:
	// <nil>
}
