package hosted

import (
	"testing"

	"github.com/narad-io/narad/internal/schedule"
	"github.com/narad-io/narad/internal/storage"
)

// A move copies a partition's small files whole, in name order; a copy is
// whole only if the consumer frontier comes first, then the schedule's
// journal, then its buckets (package schedule, files.go).
func TestScheduleFilesSortAfterTheFrontier(t *testing.T) {
	for _, m := range []string{"0", "29000000", "99999999999"} {
		bucket := schedule.BucketPrefix + m
		if !(storage.ConsumerOffsetFile < schedule.JournalName && schedule.JournalName < bucket) {
			t.Fatalf("names sort %q, %q, %q: want the frontier, the journal, then the bucket", storage.ConsumerOffsetFile, schedule.JournalName, bucket)
		}
	}
}
