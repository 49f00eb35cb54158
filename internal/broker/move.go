package broker

import (
	"time"

	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"
)

// The broker's side of partition moves is a hook and a few services; the
// moves themselves (freezes, copies, installs, shedding) are package
// move's.

// Admission is the commit-admission hook (Config.Admission): a move
// freezes a partition by refusing its commits while it copies the last
// bytes (package move's Freezes). Admit lets one commit into topic/p
// start, or refuses it; the caller calls done when that commit has ended,
// so that a freeze can wait out the commits in flight. A refused commit
// answers 503: the dispatcher and fan-out keep their records and commit
// them at the new owner after the flip.
type Admission interface {
	Admit(topic string, p int) (done func(), ok bool)
}

// enterCommit admits a commit through the hook (every commit when there
// is none); the caller must call the returned func when the commit is done.
func (b *Broker) enterCommit(topic string, p int) (func(), error) {
	if b.cfg.Admission == nil {
		return func() {}, nil
	}
	done, ok := b.cfg.Admission.Admit(topic, p)
	if !ok {
		return nil, refusal.New(refusal.ErrFrozen, time.Second, "partition %d of %q is being moved; retry", p, topic)
	}
	return done, nil
}

// What a move asks of the data plane (move.Partitions): where a partition
// lives, its log, and the broker's own state kept right around a copy.

// PartitionDir is topic/p's directory (the topic name validated).
func (b *Broker) PartitionDir(topic string, p int) (string, error) { return b.parts.Dir(topic, p) }

// PartitionLog opens topic/p's log (creating its directory if need be).
func (b *Broker) PartitionLog(topic string, p int) (*storage.Log, error) {
	return b.parts.Get(topic, p)
}

// LogOptions are the options partition logs open with here: a staged copy
// is verified by opening it the same way.
func (b *Broker) LogOptions() storage.Options { return b.parts.Options() }

// PersistFrontier writes topic/p's consumer frontier and delivery counts
// now, if its queue is loaded: a copy taken after it carries both (the
// counts file is advisory: a failed write of it is logged, not returned).
func (b *Broker) PersistFrontier(topic string, p int) error {
	if l := b.parts.Peek(topic, p); l != nil {
		// Lazy records first, so the frontier is not held back to the
		// flushed high watermark (queue.persist) in the copy.
		if err := l.Flush(); err != nil {
			return err
		}
	}
	if q := b.parts.PeekQueue(topic, p); q != nil {
		if err := q.Persist(); err != nil {
			return err
		}
		q.PersistCounts(true)
	}
	return nil
}

// ForgetPartition closes topic/p's log and drops its queue state: its
// directory is about to be replaced by a copy or removed.
func (b *Broker) ForgetPartition(topic string, p int) {
	b.parts.Forget(topic, p)
}

// PartitionDirs lists the partition directories this node holds, by topic.
// A listing that fails is an error, not a shorter list: the move source
// loads the freezes written in these directories from it.
func (b *Broker) PartitionDirs() (map[string][]int, error) {
	out := map[string][]int{}
	topics, err := b.parts.TopicDirs()
	if err != nil {
		return nil, err
	}
	for _, t := range topics {
		td, err := b.parts.TopicDir(t)
		if err != nil {
			continue // not a topic directory name
		}
		parts, err := storage.PartitionDirs(b.parts.FS(), td)
		if err != nil {
			return nil, err
		}
		if len(parts) > 0 {
			out[t] = parts
		}
	}
	return out, nil
}
