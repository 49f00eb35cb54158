package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// TestRateLimitsWithTheRealBinary: a user given a low produce limit with
// `narad user add --limit` gets 429 with Retry-After, and nothing of a
// refused produce reaches the log (the next record on the partition is
// the other user's); another user, producing meanwhile, is never refused;
// `narad user edit` lifts the limit without a restart.
func TestRateLimitsWithTheRealBinary(t *testing.T) {
	n := startSecureNode(t)
	ctx := context.Background()
	root := client.New("http://"+n.http, "admin", rootPass, nil)
	if _, err := root.CreateTopic(ctx, client.CreateTopicRequest{Name: "jobs", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	run := func(stdin string, args ...string) cliRun {
		t.Helper()
		cmd := append([]string{}, args...)
		r := runCLIAs(t, n.http, "admin", rootPass, stdin, cmd...)
		if r.code != 0 {
			t.Fatalf("narad %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		return r
	}
	run("slow-password\n", "user", "add", "slow", "--grant", "produce:jobs", "--limit", "produce_records_per_s=2", "--password-stdin")
	run("fast-password\n", "user", "add", "fast", "--grant", "produce:jobs", "--password-stdin")
	slow := client.New("http://"+n.http, "slow", "slow-password", nil)
	fast := client.New("http://"+n.http, "fast", "fast-password", nil)

	admitted := 0
	var refused error
	for range 50 {
		err := slow.Produce(ctx, "jobs", []byte("slow"), client.ProduceOptions{})
		if err != nil {
			refused = err
			break
		}
		admitted++
	}
	retry, limited := client.RateLimited(refused)
	if !limited || !errors.Is(refused, client.ErrRateLimited) || retry < time.Second {
		t.Fatalf("after %d produces at 2/s: %v (Retry-After %s), want a 429 with Retry-After", admitted, refused, retry)
	}
	for i := range 20 {
		if err := fast.Produce(ctx, "jobs", []byte("fast"), client.ProduceOptions{}); err != nil {
			t.Fatalf("the other user's produce %d beside a limited one: %v", i, err)
		}
	}
	if err := fast.Produce(ctx, "jobs", []byte("marker"), client.ProduceOptions{}); err != nil {
		t.Fatal(err)
	}
	// One partition, committed in WAL order: were the refused record in
	// the WAL, it would sit before the other user's records.
	var got []string
	eventually(t, 10*time.Second, "every admitted record is readable", func() bool {
		p, off := 0, uint64(0)
		msgs, err := root.Consume(ctx, "jobs", client.ConsumeOptions{Partition: &p, Offset: &off, Max: 1000})
		if err != nil {
			return false
		}
		got = got[:0]
		for _, m := range msgs {
			var s string
			json.Unmarshal(m.Payload, &s)
			got = append(got, s)
		}
		return len(got) > 0 && got[len(got)-1] == "marker"
	})
	want := strings.Repeat("slow ", admitted) + strings.Repeat("fast ", 20) + "marker"
	if strings.Join(got, " ") != want {
		t.Fatalf("the log holds %v, want %d slow, 20 fast and the marker (nothing of the refused produce)", got, admitted)
	}
	if v := n.metric(`narad_rate_limited_requests_total{limit="produce_records_per_s",user="slow"}`); v < 1 {
		t.Fatalf("narad_rate_limited_requests_total for slow = %v", v)
	}

	// Lifted live: the next produces all pass.
	run("", "user", "edit", "slow", "--limit", "produce_records_per_s=unlimited")
	for i := range 20 {
		if err := slow.Produce(ctx, "jobs", []byte("slow"), client.ProduceOptions{}); err != nil {
			t.Fatalf("produce %d after the limit was lifted: %v", i, err)
		}
	}
	if r := run("", "user", "show", "slow"); !strings.Contains(r.stdout, "produce_records_per_s:   unlimited\n") {
		t.Fatalf("user show:\n%s", r.stdout)
	}
	if st := asUser(t, n, "admin", rootPass, http.MethodPatch, "/v1/users/slow", map[string]any{"limits": map[string]any{"produce_bytes_per_s": -1}}); st.status != http.StatusBadRequest {
		t.Fatalf("a negative limit: %d %s", st.status, st.body)
	}
}

// runCLIAs is runCLI signed in as user.
func runCLIAs(t *testing.T, addr, user, pass, stdin string, args ...string) cliRun {
	t.Helper()
	t.Setenv("NARAD_USER", user)
	t.Setenv("NARAD_PASS", pass)
	return startCLIIn(t, addr, stdin, args...).wait(t, 60*time.Second)
}
