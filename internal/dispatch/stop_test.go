package dispatch

import (
	"context"
	"log/slog"
	"testing"

	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/wal"
)

// stopAfterCommit commits like the fake, then stops the dispatcher, as a
// SIGTERM arriving right after a commit would: the stop lands inside the
// commit cycle, before the idle pass that checkpoints.
type stopAfterCommit struct {
	*fakeCommitter
	stop context.CancelFunc
}

func (s stopAfterCommit) Commit(ctx context.Context, topic string, inc uint64, p int, recs []storage.Record) error {
	err := s.fakeCommitter.Commit(ctx, topic, inc, p, recs)
	s.stop()
	return err
}

// A graceful stop checkpoints what it committed, so the next start replays
// nothing of it: a stop within a commit cycle used to leave the checkpoint
// behind, and the restart committed every record of the cycle again (the
// e2e SIGTERM test saw 39 messages for 20 produced).
func TestStopCheckpointsWhatWasCommitted(t *testing.T) {
	w, err := wal.Open(t.TempDir(), wal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	var recs []wal.Record
	for _, s := range []string{"a", "b", "c"} {
		recs = append(recs, wal.Record{Topic: "t", Partition: 1, Payload: []byte(s)})
	}
	if err := w.Append(context.Background(), recs); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fc := newFake()
	d := &Dispatcher{WAL: w, Commit: stopAfterCommit{fc, cancel}, Metrics: metrics.New(),
		Logger: slog.New(slog.DiscardHandler), Partitions: func(string) int { return 4 },
		Discard: func(context.Context, string, uint64) bool { return false }}
	d.Run(ctx) // returns once the commit has stopped it

	if got, _ := fc.snapshot(); len(got["t/1"]) != 3 {
		t.Fatalf("committed %v, want a, b, c", got)
	}
	if ck, want := w.Checkpoint(), w.LastSeq()+1; ck != want {
		t.Fatalf("after a graceful stop the checkpoint is %d, want %d: a restart would commit %d records again", ck, want, want-ck)
	}
}
