package fanout

import (
	"maps"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/storage"
)

// rules delay gate, never early: on the engine's clock, a delay child
// receives nothing one millisecond before parent commit time + delay, and
// the record once due.
func TestDelayNeverEarly(t *testing.T) {
	n := newNode(t, Config{})
	n.createTopic("src", 1, 0)
	n.createTopic("later", 1, 0)
	const delay = time.Hour
	n.attach("src", "later", delay.Milliseconds())
	n.commit("src", 0, "r1")
	committedAt := n.read("src", 0)[0].CommittedAt
	// The engine's clock stands one millisecond before due: the cursor
	// finds the record not due and sleeps the millisecond.
	clk := clock.NewFake(time.UnixMilli(committedAt).Add(delay - time.Millisecond))
	n.e = n.newEngine(withClock(n.e.cfg, clk))
	n.e.Start()
	parked(t, clk, 2) // the reconciler's ticker and the cursor's sleep
	if got := len(n.read("later", 0)); got != 0 {
		t.Fatalf("delivered %d records one millisecond before due", got)
	}
	clk.Advance(time.Millisecond)
	drive(t, clk, 2, 5*time.Millisecond, "delivery once due", func() bool { return len(n.read("later", 0)) == 1 })
}

// withClock is cfg on clk.
func withClock(cfg Config, clk clock.Clock) Config {
	cfg.Clock = clk
	return cfg
}

// rule never early: with real time and a short delay, delivery lands after
// due and within a second of it.
func TestDelayLandsSoonAfterDue(t *testing.T) {
	n := newNode(t, Config{})
	n.createTopic("src", 2, 0)
	n.createTopic("soon", 2, 0)
	const delay = 300 * time.Millisecond
	n.attach("src", "soon", delay.Milliseconds())
	n.e.Start()
	for i := 0; i < 5; i++ {
		n.commit("src", i%2, "")
	}
	waitFor(t, 10*time.Second, "5 delayed copies", func() bool { return n.total("soon", 2) == 5 })
	parentAt := map[int]int64{}
	for p := 0; p < 2; p++ {
		for i, r := range n.read("src", p) {
			parentAt[p*100+i] = r.CommittedAt
		}
	}
	for p := 0; p < 2; p++ {
		for i, r := range n.read("soon", p) {
			src := parentAt[p*100+i] // keyless, equal partition counts: same index, same order
			late := time.Duration(r.CommittedAt-src)*time.Millisecond - delay
			if late < 0 {
				t.Fatalf("copy committed %v before due", -late)
			}
			if late > time.Second {
				t.Fatalf("copy committed %v after due", late)
			}
		}
	}
}

// rule sleep until due: an idle delay cursor with 100,000 pending records
// does no reads while it sleeps: it stopped at the first not-due record and
// sleeps until that one is due, whatever lies behind it — capped at 30 s
// (the due wake cap), after which it reads once and sleeps again.
func TestIdleDelayCursorDoesNoReads(t *testing.T) {
	n := newNode(t, Config{Reconcile: time.Hour})
	n.createTopic("big", 1, 0)
	n.createTopic("slow", 1, 0)
	n.attach("big", "slow", time.Hour.Milliseconds())
	l, _ := n.b.Partitions().Get("big", 0)
	batch := make([]storage.Record, 1000)
	for i := range batch {
		batch[i].Payload = []byte("pending")
	}
	for i := 0; i < 100; i++ {
		if err := commitLocal(n.b, n.ctx(), "big", 0, batch); err != nil {
			t.Fatal(err)
		}
	}
	clk := clock.NewFake(time.Now())
	n.e = n.newEngine(withClock(n.e.cfg, clk))
	n.e.Start()
	parked(t, clk, 2) // the reconciler's ticker and the cursor's sleep
	// The broker's backlog gauges read the oldest unconsumed record once
	// (then keep its commit time): wait for that read, so that every read
	// counted from here on is the cursor's.
	waitFor(t, 10*time.Second, "the backlog pass's one read", func() bool {
		_, ok := gaugeValue(t, n.m, "narad_oldest_unconsumed_message_age_seconds", map[string]string{"topic": "big", "partition": "0"})
		return ok
	})
	before := l.Reads()
	if before == 0 {
		t.Fatal("the cursor parked without reading")
	}
	clk.Advance(30*time.Second - time.Millisecond)
	parked(t, clk, 2)
	if after := l.Reads(); after != before {
		t.Fatalf("a sleeping delay cursor read %d times with 100,000 records pending", after-before)
	}
	clk.Advance(time.Millisecond) // the 30 s cap: one look, then sleep again
	waitFor(t, 10*time.Second, "the read at the cap", func() bool { return l.Reads() == before+1 })
	parked(t, clk, 2)
	if after := l.Reads(); after != before+1 {
		t.Fatalf("the wake at the cap read %d times, want once", after-before)
	}
	if got := len(n.read("slow", 0)); got != 0 {
		t.Fatalf("delivered %d records an hour early", got)
	}
}

// rule drop-behind: records retention deleted before the cursor read them
// are skipped and counted, exactly.
func TestDropBehindCounted(t *testing.T) {
	n := newNode(t, Config{})
	n.createTopic("short", 1, 3_600_000)
	n.createTopic("behind", 1, 0)
	n.attach("short", "behind", 0)
	stamps := clock.NewFake(time.Now())
	n.stamps.set(stamps)
	n.commit("short", 0, "a", "b", "c", "d")
	stamps.Advance(2 * time.Hour)
	l, _ := n.b.Partitions().Get("short", 0)
	res, err := l.ApplyRetention(3_600_000)
	if err != nil || res.Records != 4 {
		t.Fatalf("retention: %+v %v", res, err)
	}
	n.commit("short", 0, "e")
	n.e.Start()
	waitFor(t, 10*time.Second, "the surviving record copied", func() bool { return len(n.read("behind", 0)) == 1 })
	if d := n.e.droppedCounter("short", "behind").Load(); d != 4 {
		t.Fatalf("dropped counter %d, want 4", d)
	}
	waitFor(t, 10*time.Second, "listing shows the drop and no lag", func() bool {
		v, err := n.e.Children("short")
		return err == nil && len(v.Children) == 1 && v.Children[0].DroppedMessages == 4 &&
			v.Children[0].LagMessages == 0 && v.Children[0].LagComplete
	})
}

// rule due lag: narad_fanout_due_lag_seconds reports how far behind the due
// frontier a delay cursor runs while it holds an overdue record, and falls
// to 0 once it has delivered everything due and the parent went quiet.
// Before the fix it kept the last slab's value forever (a false alert).
func TestDueLagFallsToZeroAtTheFrontier(t *testing.T) {
	n := newNode(t, Config{})
	n.createTopic("src", 1, 0)
	n.createTopic("later", 1, 0)
	const delay = time.Hour
	n.attach("src", "later", delay.Milliseconds())
	n.commit("src", 0, "r1")
	committedAt := n.read("src", 0)[0].CommittedAt
	// On the reading clock the record has been due for 10 s, and the child
	// refuses it for now: the cursor holds it, 10 s behind the frontier.
	clk := clock.NewFake(time.UnixMilli(committedAt).Add(delay + 10*time.Second))
	n.e = n.newEngine(withClock(n.e.cfg, clk))
	n.fc.set("later/0", true)
	n.e.Start()
	listed := func() float64 {
		v, err := n.e.Children("src")
		if err != nil || len(v.Children) != 1 || v.Children[0].DueLagSeconds == nil {
			t.Fatalf("listing: %+v, %v", v, err)
		}
		return *v.Children[0].DueLagSeconds
	}
	// The gauge is set at the slab's last read, once the 25 ms linger is
	// over: the record is then 10.025 s past due, and the held record
	// keeps it there (no read happens while the slab is being committed).
	held := (10*time.Second + n.e.cfg.Linger).Seconds()
	drive(t, clk, 2, 5*time.Millisecond, "a due lag of 10 s while the record is held", func() bool {
		tries, _ := n.fc.count("later/0")
		return tries >= 3 && cursorGauge(t, n.m, "narad_fanout_due_lag_seconds", "src", "later", "0") == held && listed() == held
	})
	n.fc.set("later/0", false)
	drive(t, clk, 2, 5*time.Millisecond, "delivery", func() bool { return len(n.read("later", 0)) == 1 })
	drive(t, clk, 2, 5*time.Millisecond, "a due lag of 0 once caught up with a quiet parent", func() bool {
		return cursorGauge(t, n.m, "narad_fanout_due_lag_seconds", "src", "later", "0") == 0 && listed() == 0
	})
}

// cursorGauge reads a cursor's series (parent, child, partition) of a
// gauge vector from the registry; -1 when the series does not exist.
func cursorGauge(t testing.TB, m *metrics.Metrics, name, parent, child, partition string) float64 {
	t.Helper()
	v, ok := gaugeValue(t, m, name, map[string]string{"parent": parent, "child": child, "partition": partition})
	if !ok {
		return -1
	}
	return v
}

// rule skew across a move: after the parent partition moves, the records
// the old owner stamped are gated by the new owner's clock. Delivery is
// never early on the clock of the node now owning the partition, and is
// exactly as early or late as the two clocks disagree: nothing clamps the
// gate to the stamps (that would only trade lateness on one clock for
// earliness on the other). Here the broker's clock stamps commits, as the
// old owner's did, and a second engine with its own clock plays the new
// owner.
func TestDelayGateAfterAMoveIsTheNewOwnersClock(t *testing.T) {
	const delay = time.Hour
	for _, skew := range []time.Duration{10 * time.Second, -10 * time.Second} { // old owner's clock minus the new owner's
		t.Run("old owner "+skew.String(), func(t *testing.T) {
			n := newNode(t, Config{})
			n.createTopic("src", 1, 0)
			n.createTopic("later", 1, 0)
			n.attach("src", "later", delay.Milliseconds())
			trueCommit := time.UnixMilli(time.Now().UnixMilli()) // commit times are milliseconds
			n.stamps.set(clock.NewFake(trueCommit.Add(skew)))    // the old owner's clock stamps the record
			n.commit("src", 0, "r1")
			stamped := time.UnixMilli(n.read("src", 0)[0].CommittedAt)

			newOwner := clock.NewFake(stamped.Add(delay - time.Millisecond))
			e := n.newEngine(withClock(n.e.cfg, newOwner))
			t.Cleanup(e.Close)
			e.Start()
			parked(t, newOwner, 2) // the new owner's cursor found the record not due and sleeps
			if got := len(n.read("later", 0)); got != 0 {
				t.Fatalf("delivered 1 ms before due on the new owner's clock")
			}
			due := newOwner.Advance(time.Millisecond)
			drive(t, newOwner, 2, 5*time.Millisecond, "delivery once due on the new owner's clock", func() bool { return len(n.read("later", 0)) == 1 })
			// Measured against the new owner's clock at the commit, the
			// copy came exactly the skew late (or, negative, early).
			if off := due.Sub(trueCommit.Add(delay)); off != skew {
				t.Fatalf("delivered %v off due by the new owner's clock at commit, want the skew %v", off, skew)
			}
		})
	}
}

// gaugeValue reads the series of gauge or counter vector name with
// exactly labels from the registry; false when it does not exist.
func gaugeValue(t testing.TB, m *metrics.Metrics, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, s := range mf.GetMetric() {
			got := map[string]string{}
			for _, lp := range s.GetLabel() {
				got[lp.GetName()] = lp.GetValue()
			}
			if !maps.Equal(got, labels) {
				continue
			}
			if c := s.GetCounter(); c != nil {
				return c.GetValue(), true
			}
			return s.GetGauge().GetValue(), true
		}
	}
	return 0, false
}
