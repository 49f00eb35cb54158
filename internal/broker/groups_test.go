package broker

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/narad-io/narad/internal/storage"
)

func ptr[T any](v T) *T { return &v }

// commitKeyed commits one record per "key:seq" string, keyed by key.
func commitKeyed(t *testing.T, b *Broker, topic string, p int, recs ...string) {
	t.Helper()
	out := make([]storage.Record, len(recs))
	for i, r := range recs {
		key, _, _ := strings.Cut(r, ":")
		out[i] = storage.Record{Key: []byte(key), Payload: []byte(r)}
	}
	if err := commitLocal(b, testCtx(t), topic, p, out); err != nil {
		t.Fatal(err)
	}
}

func createGrouped(t *testing.T, b *Broker, name string, partitions int) {
	t.Helper()
	req := CreateTopicRequest{Name: name, Partitions: partitions, Ordering: ptr("group")}
	if _, err := b.CreateTopic(testCtx(t), req, ""); err != nil {
		t.Fatal(err)
	}
}

// consumeOne leases at most one record of p and returns its payload ("" for
// none) and handle.
func consumeOne(t *testing.T, n *testNode, topic string, p int) (string, string) {
	t.Helper()
	msgs, err := n.consume(topic, p, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) == 0 {
		return "", ""
	}
	return string(msgs[0].Payload), msgs[0].ReceiptHandle
}

func expectOne(t *testing.T, n *testNode, topic, want string) string {
	t.Helper()
	got, h := consumeOne(t, n, topic, 0)
	if got != want {
		t.Fatalf("consumed %q, want %q", got, want)
	}
	return h
}

func ack(t *testing.T, n *testNode, topic, handle string, op AckOp) {
	t.Helper()
	if err := n.b.Ack(testCtx(t), topic, handle, op); err != nil {
		t.Fatal(err)
	}
}

// TestGroupOrderingManyConsumers: consumers of random batch sizes, some
// batches nacked, over records of many keys in two partitions: every
// key's records are delivered in offset order, a record only after the
// one before it was acked, and no key is out twice at once.
func TestGroupOrderingManyConsumers(t *testing.T) {
	n := newTestNode(t, Config{})
	createGrouped(t, n.b, "orders", 2)
	const keys, perKey = 40, 15
	rng := rand.New(rand.NewPCG(1, 2))
	seq := make([]int, keys)
	var batch [2][]string
	for range keys * perKey {
		k := rng.IntN(keys)
		for seq[k] == perKey {
			k = (k + 1) % keys
		}
		p := k % 2
		batch[p] = append(batch[p], fmt.Sprintf("k%d:%d", k, seq[k]))
		seq[k]++
	}
	for p := range 2 {
		commitKeyed(t, n.b, "orders", p, batch[p]...)
	}

	var mu sync.Mutex
	next := map[string]int{} // the next sequence each key must deliver
	out := map[string]bool{} // keys with a record leased
	acked := 0
	var failed []error // under mu; any failure stops every consumer
	fail := func(err error) {
		failed = append(failed, err)
	}
	var wg sync.WaitGroup
	for c := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 7))
			for {
				mu.Lock()
				done := acked == keys*perKey || len(failed) > 0
				mu.Unlock()
				if done {
					return
				}
				msgs, err := n.b.Consume(context.Background(), ConsumeRequest{Topic: "orders", Max: 1 + rng.IntN(5)})
				mu.Lock()
				if err != nil {
					fail(err)
					mu.Unlock()
					return
				}
				seen := map[string]int{}
				for _, m := range msgs {
					key, s, _ := strings.Cut(string(m.Payload), ":")
					var got int
					fmt.Sscan(s, &got)
					if out[key] && seen[key] == 0 {
						fail(fmt.Errorf("%s delivered while %s had a record out", m.Payload, key))
					}
					if want := next[key] + seen[key]; got != want {
						fail(fmt.Errorf("%s delivered, want %s:%d next", m.Payload, key, want))
					}
					seen[key]++
					out[key] = true
				}
				// Settle in the books first: the next record of a key may
				// come the moment the broker has the ack.
				nack := rng.IntN(10) == 0
				for key, k := range seen {
					delete(out, key)
					if !nack {
						next[key] += k
						acked += k
					}
				}
				mu.Unlock()
				op := Settle
				if nack {
					op = Nack
				}
				for _, m := range msgs {
					if err := n.b.Ack(context.Background(), "orders", m.ReceiptHandle, op); err != nil {
						mu.Lock()
						fail(err)
						mu.Unlock()
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range failed[:min(len(failed), 5)] {
		t.Error(err)
	}
}

// TestGroupOrderingOneAtATime: a key's next record waits for the ack of
// the one before; a nack makes it next again; other keys go on meanwhile.
func TestGroupOrderingOneAtATime(t *testing.T) {
	n := newTestNode(t, Config{})
	createGrouped(t, n.b, "jobs", 1)
	commitKeyed(t, n.b, "jobs", 0, "a:0", "a:1", "b:0", "a:2", "b:1", "c:0")
	a0 := expectOne(t, n, "jobs", "a:0")
	b0 := expectOne(t, n, "jobs", "b:0")
	c0 := expectOne(t, n, "jobs", "c:0")
	expectOne(t, n, "jobs", "")
	ack(t, n, "jobs", a0, Nack)
	a0 = expectOne(t, n, "jobs", "a:0") // redelivered before a:1
	ack(t, n, "jobs", a0, Settle)
	ack(t, n, "jobs", c0, Settle)
	a1 := expectOne(t, n, "jobs", "a:1")
	ack(t, n, "jobs", b0, Settle)
	expectOne(t, n, "jobs", "b:1")
	ack(t, n, "jobs", a1, Settle)
	expectOne(t, n, "jobs", "a:2")
}

// TestGroupOrderingSurvivesRestart: after a restart (leases gone, settled
// records kept) a group's unacked record comes before its later ones, and
// the topic is still grouped.
func TestGroupOrderingSurvivesRestart(t *testing.T) {
	n := newTestNode(t, Config{})
	createGrouped(t, n.b, "jobs", 1)
	commitKeyed(t, n.b, "jobs", 0, "a:0", "b:0", "a:1", "b:1")
	ack(t, n, "jobs", expectOne(t, n, "jobs", "a:0"), Settle)
	expectOne(t, n, "jobs", "b:0") // leased, never acked
	n.restart(nil)
	b0 := expectOne(t, n, "jobs", "b:0")
	expectOne(t, n, "jobs", "a:1")
	expectOne(t, n, "jobs", "") // b:1 waits behind b:0
	ack(t, n, "jobs", b0, Settle)
	expectOne(t, n, "jobs", "b:1")
}

// TestGroupOrderingPatch: ordering can be turned on and off by PATCH; it
// applies to leases granted after the change.
func TestGroupOrderingPatch(t *testing.T) {
	n := newTestNode(t, Config{})
	n.createTopic("jobs", 1)
	commitKeyed(t, n.b, "jobs", 0, "a:0", "a:1", "a:2", "a:3")
	h0 := expectOne(t, n, "jobs", "a:0")
	h1 := expectOne(t, n, "jobs", "a:1") // "none": a key is no group
	v, err := n.b.AlterTopic(testCtx(t), "jobs", AlterTopicRequest{Ordering: ptr("group")})
	if err != nil {
		t.Fatal(err)
	}
	if v.Ordering != "group" {
		t.Fatalf("PATCH answered ordering %q, want group", v.Ordering)
	}
	ack(t, n, "jobs", h0, Settle)
	ack(t, n, "jobs", h1, Settle)
	expectOne(t, n, "jobs", "a:2")
	expectOne(t, n, "jobs", "") // a:3 waits behind a:2
	if _, err := n.b.AlterTopic(testCtx(t), "jobs", AlterTopicRequest{Ordering: ptr("none")}); err != nil {
		t.Fatal(err)
	}
	expectOne(t, n, "jobs", "a:3")
	v, err = n.b.DescribeTopic("jobs")
	if err != nil {
		t.Fatal(err)
	}
	if v.Ordering != "none" {
		t.Fatalf("describe shows ordering %q, want none", v.Ordering)
	}
}

func TestGroupOrderingRefusesBadValues(t *testing.T) {
	n := newTestNode(t, Config{})
	_, err := n.b.CreateTopic(testCtx(t), CreateTopicRequest{Name: "x", Partitions: 1, Ordering: ptr("fifo")}, "")
	if err == nil || !strings.Contains(err.Error(), "ordering") {
		t.Fatalf("create with ordering fifo: %v, want an error naming ordering", err)
	}
	if _, err := n.b.DescribeTopic("x"); err == nil {
		t.Fatal("refused create stored the topic")
	}
	n.createTopic("y", 1)
	_, err = n.b.AlterTopic(testCtx(t), "y", AlterTopicRequest{Ordering: ptr("")})
	if err == nil || !strings.Contains(err.Error(), "ordering") {
		t.Fatalf("PATCH ordering \"\": %v, want an error naming ordering", err)
	}
	if v, _ := n.b.DescribeTopic("y"); v.Ordering != "none" {
		t.Fatalf("after a refused PATCH ordering is %q, want none", v.Ordering)
	}
}

// TestGroupStuckDoesNotBlockAnother: a key whose first record is out (a
// consumer that keeps failing it) holds back only its own records, also
// when many of them lie before another key's.
func TestGroupStuckDoesNotBlockAnother(t *testing.T) {
	n := newTestNode(t, Config{})
	createGrouped(t, n.b, "jobs", 1)
	recs := make([]string, 0, 301)
	for i := range 300 {
		recs = append(recs, fmt.Sprintf("a:%d", i))
	}
	commitKeyed(t, n.b, "jobs", 0, append(recs, "b:0")...)
	h := expectOne(t, n, "jobs", "a:0")
	for range 3 { // a:0 keeps failing
		ack(t, n, "jobs", h, Nack)
		h = expectOne(t, n, "jobs", "a:0")
	}
	expectOne(t, n, "jobs", "b:0")
	expectOne(t, n, "jobs", "")
}

// TestGroupOrderingWithinTheByteBudget: a consume of a grouped topic
// stops at the answer's byte budget, and the records it leased but could
// not hold are given back at once, so the next consume gets them in
// order (not after their visibility timeout).
func TestGroupOrderingWithinTheByteBudget(t *testing.T) {
	n := newTestNode(t, Config{MaxConsumeBytes: 100})
	createGrouped(t, n.b, "jobs", 1)
	recs := make([]storage.Record, 6)
	for i := range recs {
		recs[i] = storage.Record{Key: []byte("a"), Payload: []byte(fmt.Sprintf("a:%d:%s", i, strings.Repeat("x", 36)))}
	}
	if err := commitLocal(n.b, testCtx(t), "jobs", 0, recs); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for len(seen) < 6 {
		msgs, err := n.consume("jobs", 0, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 || len(msgs) > 2 {
			t.Fatalf("consume of 10 at 100 bytes answered %d records of 40 bytes, want 1 or 2", len(msgs))
		}
		for _, m := range msgs {
			seen = append(seen, string(m.Payload[:3]))
			ack(t, n, "jobs", m.ReceiptHandle, Settle)
		}
	}
	if want := []string{"a:0", "a:1", "a:2", "a:3", "a:4", "a:5"}; !slices.Equal(seen, want) {
		t.Fatalf("delivered %v, want %v", seen, want)
	}
}
