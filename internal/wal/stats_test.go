package wal

import (
	"context"
	"testing"
)

// Stats counts durable batches, records and appends; a batch of three
// records in one Append is one sync, three records and one append.
func TestStatsCountsGroupCommits(t *testing.T) {
	w := openT(t, t.TempDir(), Options{})
	if err := w.Append(context.Background(), []Record{testRecord(0), testRecord(1), testRecord(2)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(context.Background(), []Record{testRecord(3)}); err != nil {
		t.Fatal(err)
	}
	if got, want := w.Stats(), (Stats{Syncs: 2, Records: 4, Appends: 2}); got != want {
		t.Fatalf("Stats = %+v, want %+v", got, want)
	}
}
