package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/storage"
)

// logLines keeps the records a slog.Logger was handed.
type logLines struct {
	mu    sync.Mutex
	lines []slog.Record
}

func (l *logLines) Enabled(context.Context, slog.Level) bool { return true }
func (l *logLines) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logLines) WithGroup(string) slog.Handler            { return l }
func (l *logLines) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, r.Clone())
	return nil
}

// at returns the lines of level lv and each one's value of attribute key.
func (l *logLines) at(lv slog.Level, key string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.lines {
		if r.Level != lv {
			continue
		}
		v := ""
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == key {
				v = a.Value.String()
			}
			return true
		})
		out = append(out, v)
	}
	return out
}

// A follower whose log keeps refusing the leader's records does not retry
// in silence: every refusal is counted with its reason, the first is
// logged at once, the rest at most once a minute (with how many there
// were), and the end of the run is logged when records append again.
func TestFollowerReportsRefusedAppends(t *testing.T) {
	r := newLeaderRig(t, 3)
	flog := newMemLog()
	flog.state.LastEpoch = 1 // the epoch mark is written: only Append fails
	flog.fails = fmt.Errorf("test: %w", storage.ErrAppendMismatch)
	var mu sync.Mutex
	counted := map[string]int{}
	count := func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return map[string]int{AppendMismatch: counted[AppendMismatch], "all": len(counted)}
	}
	logs := &logLines{}
	const backoff = 10 * time.Second
	f, err := NewFollower(FollowerConfig{Self: "b", View: r.md.view(), Log: flog, Transport: &directTransport{l: r.l}, Clock: r.clk,
		MinBackoff: backoff, MaxBackoff: backoff, Logger: slog.New(logs),
		OnAppendFailure: func(reason string) { mu.Lock(); counted[reason]++; mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	runFollower(t, f)
	parked := func() {
		t.Helper()
		if !r.clk.BlockUntil(1, 5*time.Second) {
			t.Fatal("the follower did not back off on the clock")
		}
	}

	// The first refusal, at once; then five more within the minute, quiet.
	parked()
	if c, warns := count(), logs.at(slog.LevelWarn, "reason"); c[AppendMismatch] != 1 || len(warns) != 1 || warns[0] != AppendMismatch {
		t.Fatalf("after the first refusal: counted %v, warnings %v; want 1 and one line naming %q", c, warns, AppendMismatch)
	}
	for range 5 {
		r.clk.Advance(backoff)
		parked()
	}
	if c, warns := count(), logs.at(slog.LevelWarn, "reason"); c[AppendMismatch] != 6 || len(warns) != 1 {
		t.Fatalf("six refusals within a minute: counted %v, %d warnings; want 6 counted, 1 line", c, len(warns))
	}
	// A minute after the first line, the next refusal is logged with the
	// six since it.
	r.clk.Advance(backoff)
	parked()
	if c, n := count(), logs.at(slog.LevelWarn, "failures_since_last_line"); c[AppendMismatch] != 7 || c["all"] != 1 || len(n) != 2 || n[1] != "6" {
		t.Fatalf("a minute on: counted %v, failures per line %v; want 7 mismatches, lines [1 6]", c, n)
	}

	// The log takes the records again: one line says so.
	flog.mu.Lock()
	flog.fails = nil
	flog.mu.Unlock()
	r.clk.Advance(backoff)
	waitFor(t, func() bool { return flog.End() == 3 && len(logs.at(slog.LevelInfo, "")) == 1 })
	if c := count(); c[AppendMismatch] != 7 {
		t.Fatalf("counted %v after the records appended, want still 7", c)
	}
}

// The reasons are told apart by the log's errors.
func TestRefusedAppendReasons(t *testing.T) {
	for err, want := range map[error]string{
		fmt.Errorf("append: %w: offset", storage.ErrAppendMismatch): AppendMismatch,
		fmt.Errorf("x: %w", storage.ErrFenced):                      AppendFenced,
		storage.ErrClosed:                                           AppendOther,
	} {
		var ae *appendError
		if got := refusedAppend(err, 1); !errors.As(got, &ae) || ae.reason != want || !errors.Is(got, err) {
			t.Errorf("%v: %v, want reason %q wrapping it", err, got, want)
		}
	}
}
