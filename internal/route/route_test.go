package route

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/storage"
)

func TestRouterChoosesOwner(t *testing.T) {
	var local, remote []string
	rec := func(into *[]string) Committer {
		return CommitFunc(func(_ context.Context, topic string, inc uint64, p int, _ []storage.Record) error {
			*into = append(*into, fmt.Sprintf("%s@%d", topic, inc))
			return nil
		})
	}
	owners := map[string]string{"mine": "n1", "theirs": "n2"}
	loc := rec(&local)
	localFn := func(ctx context.Context, topic string, inc uint64, p int, recs []storage.Record, _ storage.Source) (storage.Flusher, error) {
		return nil, loc.Commit(ctx, topic, inc, p, recs)
	}
	r := &Router{Self: "n1", Local: localFn, Remote: rec(&remote),
		Owner: func(topic string, _ int) (string, bool) { o, ok := owners[topic]; return o, ok }}
	for i, topic := range []string{"mine", "theirs", "unknown"} {
		if err := r.Commit(context.Background(), topic, uint64(i+7), 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	// The incarnation travels with the commit, wherever it goes.
	if len(local) != 2 || local[0] != "mine@7" || local[1] != "unknown@9" || len(remote) != 1 || remote[0] != "theirs@8" {
		t.Fatalf("local %v remote %v", local, remote)
	}
	r.Remote = nil
	err := r.Commit(context.Background(), "theirs", 0, 0, nil)
	if apierr.Status(err) != http.StatusServiceUnavailable {
		t.Fatalf("remote owner without transport: %v", err)
	}
}
