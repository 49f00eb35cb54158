package cluster

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/meta/metatest"
)

// A draining member's decommission is blocked by a single-copy partition
// it owns while dead (its disk holds the only copy; a move copies from
// the source) and by one with no live, non-draining member to go to;
// not by its replicated copies (they leave by a replacement), not by a
// partition on a live draining member while a receiver exists, and
// nothing on a member that is not draining.
func TestDecommissionBlocked(t *testing.T) {
	ctx := context.Background()
	ms := metatest.Leader(t, t.TempDir(), "n1")
	for _, m := range []meta.Member{
		{ID: "n1", State: meta.MemberAlive},
		{ID: "b", State: meta.MemberDead, Draining: true},
		{ID: "c", State: meta.MemberAlive, Draining: true},
		{ID: "d", State: meta.MemberDead},
	} {
		must(t, ms.UpsertMember(ctx, m))
	}
	if got := DecommissionBlocked(ms); len(got) != 0 {
		t.Fatalf("with no partitions: %v", got)
	}
	must(t, ms.CreateTopic(ctx, meta.Topic{Name: "s", Partitions: 5}, []meta.Assignment{
		{Topic: "s", Partition: 0, Owner: "b"}, {Topic: "s", Partition: 1, Owner: "c"}, {Topic: "s", Partition: 2, Owner: "d"},
		{Topic: "s", Partition: 3, Owner: "n1"}, {Topic: "s", Partition: 4, Owner: "b"},
	}, nil))
	must(t, ms.CreateTopic(ctx, meta.Topic{Name: "r", Partitions: 1, ReplicationFactor: 3}, []meta.Assignment{
		replicated("r", 0, []string{"b", "c", "n1"}, "b", "c", "n1"),
	}, nil))
	got := DecommissionBlocked(ms)
	want := []Blocked{{"s", 0, WhyDeadOnlyCopy}, {"s", 4, WhyDeadOnlyCopy}}
	if len(got) != 1 || !slices.Equal(got["b"], want) {
		t.Fatalf("blocked = %v, want only b: %v", got, want)
	}

	// n1 drains too: nobody is left to receive c's and n1's single copies.
	n1, _ := ms.Member("n1")
	n1.Draining = true
	must(t, ms.UpsertMember(ctx, n1))
	got = DecommissionBlocked(ms)
	if !slices.Equal(got["b"], want) || !slices.Equal(got["c"], []Blocked{{"s", 1, WhyNoReceiver}}) ||
		!slices.Equal(got["n1"], []Blocked{{"s", 3, WhyNoReceiver}}) || len(got) != 3 {
		t.Fatalf("with no receiver: %v", got)
	}
}

// logged keeps what a logger was handed, as level and message.
type logged struct {
	mu    sync.Mutex
	lines []string
}

func (l *logged) Enabled(context.Context, slog.Level) bool { return true }
func (l *logged) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logged) WithGroup(string) slog.Handler            { return l }
func (l *logged) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Level.String() + " " + r.Message)
	r.Attrs(func(a slog.Attr) bool { b.WriteString(" " + a.String()); return true })
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, b.String())
	return nil
}

func (l *logged) with(s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

// The controller says once why a dead member's decommission cannot
// complete, naming it, its partitions and the reason, rather than at
// every tick or never; it keeps the partitions where they are (no move,
// no loss) and says when nothing blocks it any more.
func TestControllerLogsABlockedDecommissionOnce(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewFake(time.Time{})
	ms := metatest.Leader(t, t.TempDir(), "n1")
	must(t, ms.UpsertMember(ctx, meta.Member{ID: "c", State: meta.MemberAlive, LastHeartbeatMs: clock.Epoch.UnixMilli()}))
	must(t, ms.UpsertMember(ctx, meta.Member{ID: "b", State: meta.MemberDead, Draining: true}))
	must(t, ms.CreateTopic(ctx, meta.Topic{Name: "s", Partitions: 2}, []meta.Assignment{
		{Topic: "s", Partition: 0, Owner: "b"}, {Topic: "s", Partition: 1, Owner: "c"},
	}, nil))
	logs := &logged{}
	n := &Node{Self: meta.Member{ID: "n1", RPCAddr: "127.0.0.1:1"}, Meta: ms, Transport: &fakeTransport{}, Log: slog.New(logs), Clock: clk}
	run(t, n)
	idle(t, clk)
	const warn = "decommission cannot complete"
	for range 5 {
		must(t, n.HandleHeartbeat(ctx, meta.Member{ID: "c"}))
		clk.Advance(time.Second)
		idle(t, clk)
	}
	lines := logs.with(warn)
	if len(lines) != 1 || !strings.Contains(lines[0], "member=b") || !strings.Contains(lines[0], "first=s/0") ||
		!strings.Contains(lines[0], "only copy is on this dead node") {
		t.Fatalf("after five ticks, lines %q; want one naming b, s/0 and why", lines)
	}
	if as := ms.Assignments("s"); as[0].Owner != "b" || as[0].Target != "" {
		t.Fatalf("the dead member's only copy was moved or reassigned: %+v", as[0])
	}
	// The topic goes: nothing blocks b, and the controller says so once.
	must(t, ms.DeleteTopic(ctx, "s"))
	for range 3 {
		must(t, n.HandleHeartbeat(ctx, meta.Member{ID: "c"}))
		clk.Advance(time.Second)
		idle(t, clk)
	}
	if got := logs.with("no longer blocked"); len(got) != 1 || !strings.Contains(got[0], "member=b") || len(logs.with(warn)) != 1 {
		t.Fatalf("after the topic went: %q", logs.with(""))
	}
}
