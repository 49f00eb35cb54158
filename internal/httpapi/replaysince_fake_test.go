package httpapi

import (
	"fmt"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
)

// sinceLogs are the fake data plane's partitions for a replay by time:
// per partition its records' commit times (Unix ms, never decreasing),
// the record at index i having offset i and payload "p<partition>o<i>";
// budget is AnswerBytes (0: a megabyte).
type sinceLogs struct {
	times  map[int][]int64
	budget int
}

// ReplaySince reads the fake's partitions as the broker does: from from,
// or from the first record at or after since; up to n records within the
// budget.
func (f *fakePlane) ReplaySince(topic string, p int, since time.Time, from *uint64, n int) (broker.SincePage, error) {
	start := "-"
	if from != nil {
		start = fmt.Sprint(*from)
	}
	if err := f.note(false, "ReplaySince", "%s %d since=%d from=%s max=%d", topic, p, since.UnixMilli(), start, n); err != nil {
		return broker.SincePage{}, err
	}
	if n < 1 || n > broker.MaxConsumeBatch {
		return broker.SincePage{}, apierr.BadRequest("max must be 1..%d, got %d", broker.MaxConsumeBatch, n)
	}
	times := f.since.times[p]
	o := uint64(0)
	if from != nil {
		o = min(*from, uint64(len(times)))
	} else {
		for o < uint64(len(times)) && times[o] < since.UnixMilli() {
			o++
		}
	}
	page := broker.SincePage{}
	used := 0
	for ; o < uint64(len(times)) && len(page.Messages) < n; o++ {
		m := broker.Message{Topic: topic, Partition: p, Offset: o, Payload: []byte(fmt.Sprintf("p%do%d", p, o)), CommittedAt: times[o]}
		if len(page.Messages) > 0 && used+len(m.Payload) > f.AnswerBytes() {
			break
		}
		used += len(m.Payload)
		page.Messages = append(page.Messages, m)
	}
	page.Next, page.CaughtUp = o, o == uint64(len(times))
	return page, nil
}

func (f *fakePlane) AnswerBytes() int {
	if f.since.budget > 0 {
		return f.since.budget
	}
	return 1 << 20
}
