package replica

import (
	"fmt"
	"slices"
)

// checkLocked panics, in race builds, on the first of the Leader's stated
// invariants (doc.go) that its state breaks; it is called under l.mu after
// each step that moves the committed point or the view. Outside race
// builds it compiles to nothing.
//
// The committed point never passes the local durable end, never moves
// down, and readers never see past it (the visible high watermark is at
// most the committed point); the in-sync set the committed point is
// computed over holds every member of the view's set; a ready leader's
// epoch start is within its log.
func (l *Leader) checkLocked() {
	if !assertInvariants {
		return
	}
	if err := l.invariantLocked(); err != nil {
		panic(fmt.Sprintf("replica: leader of %s/%d at epoch %d: %v", l.view.Topic, l.view.Partition, l.view.Epoch, err))
	}
}

func (l *Leader) invariantLocked() error {
	end, hwm := l.log.End(), l.log.HWM()
	switch {
	case l.committed > end:
		return fmt.Errorf("committed point %d past the local end %d", l.committed, end)
	case l.committed < l.lastChecked:
		return fmt.Errorf("committed point moved down from %d to %d", l.lastChecked, l.committed)
	case hwm > l.committed:
		return fmt.Errorf("readers see up to %d, past the committed point %d", hwm, l.committed)
	}
	strict := l.strictSetLocked()
	for _, n := range l.view.InSync {
		if !slices.Contains(strict, n) {
			return fmt.Errorf("in-sync member %s missing from the set the committed point is computed over %v", n, strict)
		}
	}
	if l.ready {
		if s, ok := startOf(l.view.EpochStarts, l.view.Epoch); ok && s.Offset > end {
			return fmt.Errorf("ready with its epoch start %d past its end %d", s.Offset, end)
		}
	}
	l.lastChecked = l.committed
	return nil
}
