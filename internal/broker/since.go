package broker

import (
	"errors"
	"time"

	"github.com/narad-io/narad/internal/hosted"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
)

// SincePage is one partition's share of a replay by time (docs/http-api.md,
// "Replay since a time"): records in offset order, so in commit-time order,
// and where the partition's next page starts.
type SincePage struct {
	Messages []Message
	// Next is the offset the partition's next page starts at: past the
	// last record of Messages, past a run of unreadable records, or, with
	// nothing there yet, where this read started (the first offset at or
	// after the time, on a first page).
	Next uint64
	// CaughtUp says the read reached the partition's high watermark: what
	// comes after Next was committed after this read.
	CaughtUp bool
}

// ReplaySince reads up to n records of topic/p from offset from, or,
// when from is nil, from the first record committed at or after since
// (OffsetAtTime: a bisection over the partition's segments and index,
// never a scan). Like a replay by offset it takes no lease and changes no
// queue state, and its keys and payloads fit the answer's byte budget
// (AnswerBytes; the first record always). Unlike one, a position that
// retention has deleted since (a page token kept for a while) moves up to
// the oldest retained record: a reader by time wants what is still there,
// and Next says where it now stands.
func (b *Broker) ReplaySince(topic string, p int, since time.Time, from *uint64, n int) (SincePage, error) {
	if n < 1 || n > MaxConsumeBatch {
		return SincePage{}, refusal.New(refusal.ErrInvalid, 0, "max must be 1..%d, got %d", MaxConsumeBatch, n)
	}
	var start uint64
	if from != nil {
		// OffsetAtTime's checks (topic, range, served here) without its seek.
		if err := b.servedPartition(topic, p); err != nil {
			return SincePage{}, err
		}
		start = *from
	} else {
		o, err := b.OffsetAtTime(topic, p, since)
		if err != nil {
			return SincePage{}, err
		}
		start = o
	}
	l, err := b.parts.Get(topic, p)
	if err != nil {
		return SincePage{}, hosted.StorageErr(topic, p, "be read", err)
	}
	pos := max(start, l.Oldest())
	for {
		res, err := l.Read(pos, n, b.cfg.MaxConsumeBytes, storage.NoDueLimit)
		var below *storage.BelowOldestError
		if errors.As(err, &below) {
			pos = below.Oldest // retention ran between Oldest and Read
			continue
		}
		if err != nil {
			return SincePage{}, hosted.StorageErr(topic, p, "be read", err)
		}
		if len(res.Records) == 0 && res.Skipped > 0 {
			// Unreadable records: a gap, not the end (the log counted it).
			pos = res.Next
			continue
		}
		page := SincePage{Next: res.Next, CaughtUp: res.Next >= l.HWM(), Messages: make([]Message, len(res.Records))}
		for i, r := range res.Records {
			page.Messages[i] = Message{Topic: topic, Partition: p, Offset: r.Offset, Key: r.Key, Payload: r.Payload,
				CommittedAt: r.CommittedAt, Headers: r.Headers, Origin: r.Origin, Seq: r.Seq}
		}
		if t, err := b.topic(topic); err == nil {
			identify(t, page.Messages)
		}
		return page, nil
	}
}

// AnswerBytes is the byte budget of one consume or replay answer here:
// keys and payloads up to it, except that the first record always fits.
// A replay merged from several partitions' pages keeps to it too.
func (b *Broker) AnswerBytes() int { return b.cfg.MaxConsumeBytes }

// servedPartition checks that topic exists, has partition p and that this
// node serves it, with OffsetAtTime's refusals.
func (b *Broker) servedPartition(topic string, p int) error {
	t, err := b.topic(topic)
	if err != nil {
		return err
	}
	if p < 0 || p >= t.Partitions {
		return refusal.New(refusal.ErrPartitionRange, 0, "partition %d is out of range: %q has %d partitions", p, t.Name, t.Partitions)
	}
	return b.servedHere(t, p)
}
