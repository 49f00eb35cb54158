package broker

import (
	"time"

	"github.com/narad-io/narad/internal/refusal"
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
