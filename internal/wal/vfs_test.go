package wal

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/narad-io/narad/internal/vfs"
	"github.com/narad-io/narad/internal/vfs/errorfs"
)

// Every kind of file call the WAL makes goes through Options.FS: a fault
// injected there for that call reaches the caller. Each case fails one
// kind of call and checks that the WAL operation making it reports it.
func TestEveryFileCallGoesThroughTheFS(t *testing.T) {
	cases := []struct {
		name string
		rule errorfs.Rule
		// op, when set, runs on a WAL opened through the FS before the rule
		// is injected; otherwise the rule is in force for Open itself.
		op func(w *WAL) error
	}{
		{"LOCK at open", errorfs.Rule{Ops: errorfs.OpLock, Path: lockName}, nil},
		{"checkpoint read at open", errorfs.Rule{Ops: errorfs.OpRead, Path: checkpointName}, nil},
		{"segment listing at open", errorfs.Rule{Ops: errorfs.OpStat, Path: "ingress"}, nil},
		{"recovery scan", errorfs.Rule{Ops: errorfs.OpRead, Path: segmentSuffix}, nil},
		{"checkpoint rename", errorfs.Rule{Ops: errorfs.OpRename, Path: checkpointName},
			func(w *WAL) error { return w.SetCheckpoint(3) }},
		{"reader", errorfs.Rule{Ops: errorfs.OpRead, Path: segmentSuffix},
			func(w *WAL) error { _, err := w.Read(1, 10, 0); return err }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ingress")
			seed := openT(t, dir, Options{})
			appendRange(t, seed, 0, 5, 1)
			if err := seed.SetCheckpoint(2); err != nil {
				t.Fatal(err)
			}
			seed.Close()

			efs := errorfs.New(vfs.Default)
			rule := tc.rule
			rule.Err = syscall.EIO
			var err error
			var in *errorfs.Injection
			if tc.op == nil {
				in = efs.Inject(rule)
				var w *WAL
				if w, err = Open(dir, Options{FS: efs}); err == nil {
					w.Close()
				}
			} else {
				w := openT(t, dir, Options{FS: efs})
				in = efs.Inject(rule)
				err = tc.op(w)
			}
			if !errors.Is(err, syscall.EIO) || in.Fired() == 0 {
				t.Fatalf("error %v (rule fired %d times), want the injected EIO", err, in.Fired())
			}
		})
	}
}
