package broker

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/refusal"
)

// OffsetAtTime answers from the partition's commit times: the first
// offset at or after the time, the oldest before every record, the high
// watermark past the newest; and it refuses what is not served here.
func TestOffsetAtTimeFollowsCommitTimes(t *testing.T) {
	var now atomic.Int64
	base := time.UnixMilli(1_790_000_000_000)
	now.Store(base.UnixMilli())
	n := newTestNode(t, Config{Now: func() time.Time { return time.UnixMilli(now.Load()) }})
	n.createTopic("orders", 2)
	for i := range 4 { // offsets 0..3 at base, base+1s, base+2s, base+3s
		now.Store(base.Add(time.Duration(i) * time.Second).UnixMilli())
		if err := n.commit("orders", 1, "x"); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		at   time.Duration
		want uint64
	}{{-time.Hour, 0}, {0, 0}, {time.Millisecond, 1}, {time.Second, 1}, {2500 * time.Millisecond, 3}, {3 * time.Second, 3}, {4 * time.Second, 4}} {
		got, err := n.b.OffsetAtTime("orders", 1, base.Add(c.at))
		if err != nil || got != c.want {
			t.Errorf("at base%+v: %d, %v; want %d", c.at, got, err, c.want)
		}
	}
	if got, err := n.b.OffsetAtTime("orders", 0, base); err != nil || got != 0 {
		t.Errorf("empty partition: %d, %v", got, err)
	}
	if _, err := n.b.OffsetAtTime("orders", 2, base); !errors.Is(err, refusal.ErrPartitionRange) {
		t.Errorf("partition out of range: %v", err)
	}
	if _, err := n.b.OffsetAtTime("nope", 0, base); !errors.Is(err, refusal.ErrTopicNotFound) {
		t.Errorf("unknown topic: %v", err)
	}
}
