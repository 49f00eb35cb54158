package broker

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/refusal"
)

// TestRefusals runs the broker's refusals — topic administration,
// produce, the local commit, consume, ack — and the rules they guard
// (partition choice) against one node, each part on topics of its own: a
// metastore's bootstrap is most of the cost.
func TestRefusals(t *testing.T) {
	disk, moves := &fakeDisk{}, &admission{}
	b := newTestBroker(t, Config{Disk: disk, Admission: moves})
	t.Run("topic admin", func(t *testing.T) { topicAdminRefusals(t, b, disk) })
	t.Run("remote child", func(t *testing.T) { remoteChildIsNotATopicHere(t, b) })
	t.Run("produce", func(t *testing.T) { produceRefusalsStoreNothing(t, b, disk) })
	t.Run("partition choice", func(t *testing.T) { producePartitionChoice(t, b) })
	t.Run("commit", func(t *testing.T) { commitRefusalsAreTyped(t, b, moves) })
	t.Run("consume", func(t *testing.T) { consumeRefusals(t, b) })
	t.Run("ack", func(t *testing.T) { ackRefusals(t, b) })
	t.Run("wait", func(t *testing.T) { waitTopicRefusesAnUnknownTopic(t, b) })
}

// refused requires err to be what a client is refused with: a typed
// refusal, the status the edge gives it, a sentence that says says, and —
// when kind is not "" — that kind (the packages that act on a refusal
// find it by kind, never by status).
// internalPrefixes are Go error prefixes of our packages (and of the
// standard library's) that must never reach a client's error body.
var internalPrefixes = []string{"lease: ", "storage: ", "wal: ", "meta: ", "broker: ", "fanout: ", "json: ", "http: ", "raft: "}

func refused(t *testing.T, what string, err error, status int, kind refusal.Kind, says string) {
	t.Helper()
	ae, ok := apierr.From(err)
	if !ok {
		t.Fatalf("%s: %v (%T), want a %d refusal", what, err, err, status)
	}
	if ae.Status != status || !strings.Contains(ae.Message, says) {
		t.Fatalf("%s: %d %q, want %d saying %q", what, ae.Status, ae.Message, status, says)
	}
	for _, pkg := range internalPrefixes {
		if strings.Contains(ae.Message, pkg) {
			t.Fatalf("%s: %q names the internal package %q: a client reads a sentence, not our layout", what, ae.Message, pkg)
		}
	}
	if kind != "" && !errors.Is(err, kind) {
		t.Fatalf("%s: %v is not a refusal of kind %s", what, err, kind)
	}
	if _, typed := refusal.As(err); !typed {
		t.Fatalf("%s: %v (%T) is not a typed refusal: below the edges every refusal is (package refusal)", what, err, err)
	}
}

// fakeDisk is the data disk's reserve, full when the test says so.
type fakeDisk struct {
	full   atomic.Bool
	checks atomic.Int32
}

func (d *fakeDisk) Full() bool { return d.full.Load() }
func (d *fakeDisk) Check()     { d.checks.Add(1) }
