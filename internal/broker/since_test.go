package broker

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/refusal"
)

// pinnedNode is a node whose clock the test sets, with topic "orders" of
// two partitions: partition 1 gets records "r0".."r5" one second apart
// from base, partition 0 none.
func pinnedNode(t *testing.T, cfg Config) (*testNode, time.Time) {
	t.Helper()
	var now atomic.Int64
	base := time.UnixMilli(1_790_000_000_000)
	cfg.Now = func() time.Time { return time.UnixMilli(now.Load()) }
	n := newTestNode(t, cfg)
	n.createTopic("orders", 2)
	for i := range 6 {
		now.Store(base.Add(time.Duration(i) * time.Second).UnixMilli())
		if err := n.commit("orders", 1, fmt.Sprintf("r%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	return n, base
}

func payloads(msgs []Message) string {
	var s []string
	for _, m := range msgs {
		s = append(s, fmt.Sprintf("%s@%d", m.Payload, m.Offset))
	}
	return strings.Join(s, " ")
}

// A replay by time starts at the first record committed at or after the
// time, pages on from Next, says when it reached the end, and leaves the
// queue as it was: a consume afterwards still gets the first record.
func TestReplaySinceStartsAtTheTimeAndPages(t *testing.T) {
	n, base := pinnedNode(t, Config{})
	page, err := n.b.ReplaySince("orders", 1, base.Add(2500*time.Millisecond), nil, 2)
	if err != nil || payloads(page.Messages) != "r3@3 r4@4" || page.Next != 5 || page.CaughtUp {
		t.Fatalf("first page: %q next=%d caught_up=%v %v", payloads(page.Messages), page.Next, page.CaughtUp, err)
	}
	if page.Messages[0].CommittedAt != base.Add(3*time.Second).UnixMilli() || page.Messages[0].ReceiptHandle != "" {
		t.Fatalf("record: %+v", page.Messages[0])
	}
	next := page.Next
	page, err = n.b.ReplaySince("orders", 1, time.Time{}, &next, 2) // from wins over since
	if err != nil || payloads(page.Messages) != "r5@5" || page.Next != 6 || !page.CaughtUp {
		t.Fatalf("second page: %q next=%d caught_up=%v %v", payloads(page.Messages), page.Next, page.CaughtUp, err)
	}
	// Past every record: nothing, positioned at the end.
	page, err = n.b.ReplaySince("orders", 1, base.Add(time.Hour), nil, 10)
	if err != nil || len(page.Messages) != 0 || page.Next != 6 || !page.CaughtUp {
		t.Fatalf("after the newest: %+v %v", page, err)
	}
	// An empty partition is caught up at 0.
	if page, err = n.b.ReplaySince("orders", 0, base, nil, 10); err != nil || page.Next != 0 || !page.CaughtUp {
		t.Fatalf("empty partition: %+v %v", page, err)
	}
	msgs, err := n.consume("orders", 1, 1)
	if err != nil || payloads(msgs) != "r0@0" || msgs[0].ReceiptHandle == "" {
		t.Fatalf("the queue moved: %q %v", payloads(msgs), err)
	}
}

// The page keeps to the answer's byte budget, the first record always.
func TestReplaySinceKeepsToTheByteBudget(t *testing.T) {
	n, base := pinnedNode(t, Config{MaxConsumeBytes: 5})
	if n.b.AnswerBytes() != 5 {
		t.Fatalf("AnswerBytes %d", n.b.AnswerBytes())
	}
	page, err := n.b.ReplaySince("orders", 1, base, nil, 10)
	if err != nil || payloads(page.Messages) != "r0@0 r1@1" || page.Next != 2 || page.CaughtUp {
		t.Fatalf("%q next=%d %v", payloads(page.Messages), page.Next, err)
	}
}

// Bad input and partitions not served here are refused, the broker's way.
func TestReplaySinceRefusals(t *testing.T) {
	n, base := pinnedNode(t, Config{})
	zero := uint64(0)
	for _, c := range []struct {
		topic string
		p     int
		from  *uint64
		max   int
		want  error
	}{
		{"orders", 2, nil, 1, refusal.ErrPartitionRange},
		{"orders", 2, &zero, 1, refusal.ErrPartitionRange},
		{"nope", 0, nil, 1, refusal.ErrTopicNotFound},
		{"nope", 0, &zero, 1, refusal.ErrTopicNotFound},
	} {
		if _, err := n.b.ReplaySince(c.topic, c.p, base, c.from, c.max); !errors.Is(err, c.want) {
			t.Errorf("%s/%d from=%v: %v, want %v", c.topic, c.p, c.from, err, c.want)
		}
	}
	for _, max := range []int{0, MaxConsumeBatch + 1} {
		if _, err := n.b.ReplaySince("orders", 1, base, nil, max); err == nil || !strings.Contains(err.Error(), "max") {
			t.Errorf("max=%d: %v", max, err)
		}
	}
}
