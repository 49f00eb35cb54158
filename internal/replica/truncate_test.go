package replica

import (
	"testing"

	"github.com/narad-io/narad/internal/meta"
)

func TestTruncationPoint(t *testing.T) {
	starts := []meta.EpochStart{{Epoch: 1, Offset: 0}, {Epoch: 2, Offset: 10}, {Epoch: 4, Offset: 25}}
	for _, c := range []struct {
		name                          string
		last, end, committed, current uint64
		starts                        []meta.EpochStart
		want                          uint64
	}{
		{"wrote in the current epoch: nothing to cut", 4, 40, 30, 4, starts, 40},
		{"view behind the replica: nothing to cut", 5, 40, 30, 4, starts, 40},
		{"old leader of 1 with a divergent tail cuts at 2's start", 1, 17, 5, 4, starts, 10},
		{"tail of epoch 2 cut at 4's start (epoch 3 never started)", 2, 30, 20, 4, starts, 25},
		{"epoch 3 (no start of its own) cuts at the next start", 3, 30, 20, 4, starts, 25},
		{"shorter than the cut: nothing to cut", 1, 8, 5, 4, starts, 8},
		{"never below the committed checkpoint", 1, 17, 12, 4, starts, 12},
		{"checkpoint past the end: nothing to cut", 1, 8, 9, 4, starts, 8},
		{"empty disk, zero state", 0, 0, 0, 4, starts, 0},
		{"history from before replication (never wrote in an epoch): kept", 0, 7, 0, 1, []meta.EpochStart{{Epoch: 1, Offset: 0}}, 7},
		{"no start after the last epoch yet: nothing known to cut", 4, 30, 20, 5, starts, 30},
		{"no history at all: nothing known to cut", 1, 30, 20, 2, nil, 30},
		{"trimmed history: cut at the checkpoint", 1, 30, 12, 9, []meta.EpochStart{{Epoch: 6, Offset: 40}, {Epoch: 9, Offset: 50}}, 12},
		{"trimmed history, empty disk", 0, 0, 0, 9, []meta.EpochStart{{Epoch: 6, Offset: 40}}, 0},
		{"oldest kept start is the next epoch: not trimmed for this replica", 5, 45, 30, 9, []meta.EpochStart{{Epoch: 6, Offset: 40}, {Epoch: 9, Offset: 50}}, 40},
		{"a later leader began lower than the first after last: the lowest start", 1, 1, 0, 3, []meta.EpochStart{{Epoch: 1, Offset: 0}, {Epoch: 2, Offset: 1}, {Epoch: 3, Offset: 0}}, 0},
		{"the lowest start, still never below the checkpoint", 1, 9, 4, 3, []meta.EpochStart{{Epoch: 1, Offset: 0}, {Epoch: 2, Offset: 8}, {Epoch: 3, Offset: 2}}, 4},
		{"history older than last, start of a later epoch", 7, 60, 30, 9, []meta.EpochStart{{Epoch: 6, Offset: 40}, {Epoch: 9, Offset: 50}}, 50},
	} {
		if got := TruncationPoint(c.last, c.end, c.committed, c.current, c.starts); got != c.want {
			t.Errorf("%s: TruncationPoint(last %d, end %d, committed %d, current %d) = %d, want %d",
				c.name, c.last, c.end, c.committed, c.current, got, c.want)
		}
	}
}
