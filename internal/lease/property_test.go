package lease

import (
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/narad-io/narad/internal/clock"
)

// model is a deliberately naive reference implementation of the lease
// rules: per-offset maps and linear scans, no heap, cursor or free list.
// The property test runs random operation sequences against both and
// demands identical observable behaviour.
type model struct {
	limits   Limits
	clk      *clock.Fake
	hwm      uint64
	frontier uint64

	leases     map[uint64]mLease
	acked      map[uint64]bool // acked-ahead
	skipped    map[uint64]bool // skipped-corrupt above the frontier
	deliveries map[uint64]int
	settledBy  map[uint64]string // every settled offset: "ack", "skip" or "advance"

	issued  []Lease         // every lease ever handed out, for stale handles
	nonces  map[uint64]bool // every nonce issued: none may repeat
	expired int             // not yet reported by Expire
	// lowered: MaxAckedAhead was set below leases-above-frontier plus
	// acked-ahead at some point; only then may an Ack be refused.
	lowered bool

	expiredTotal, skippedTotal, retentionDropped uint64
}

type mLease struct {
	nonce  uint64
	expiry time.Time
}

func (m *model) purge() {
	now := m.clk.Now()
	for off, l := range m.leases {
		if !now.Before(l.expiry) {
			delete(m.leases, off)
			m.expired++
			m.expiredTotal++
		}
	}
}

// aboveFrontier counts live leases not on the frontier record.
func (m *model) aboveFrontier() int {
	if _, ok := m.leases[m.frontier]; ok {
		return len(m.leases) - 1
	}
	return len(m.leases)
}

func (m *model) settled(x uint64) bool { return x < m.frontier || m.acked[x] || m.skipped[x] }

func (m *model) carry() {
	for m.acked[m.frontier] || m.skipped[m.frontier] {
		delete(m.acked, m.frontier)
		delete(m.skipped, m.frontier)
		m.frontier++
	}
}

func (m *model) expectReserve(hwm uint64, want int) []uint64 {
	m.purge()
	n := min(want, m.limits.MaxInFlight-len(m.leases))
	if n <= 0 {
		return nil
	}
	if len(m.acked) >= m.limits.MaxAckedAhead {
		if _, leased := m.leases[m.frontier]; m.frontier < hwm && !leased {
			return []uint64{m.frontier}
		}
		return nil
	}
	room := m.limits.MaxAckedAhead - len(m.acked) - m.aboveFrontier()
	var out []uint64
	for x := m.frontier; x < hwm && len(out) < n; x++ {
		if _, leased := m.leases[x]; !leased && !m.settled(x) {
			if x != m.frontier {
				if room <= 0 {
					break
				}
				room--
			}
			out = append(out, x)
		}
	}
	return out
}

// liveErr returns the error Ack/Extend/Nack/Release must return for a
// handle that is not live: ErrSettled when no lease holds the offset and
// it is settled, else ErrGone; nil for a live one.
func (m *model) liveErr(off, nonce uint64) error {
	m.purge()
	l, ok := m.leases[off]
	if ok && l.nonce == nonce {
		return nil
	}
	if _, settled := m.settledBy[off]; !ok && settled {
		return ErrSettled
	}
	return ErrGone
}

func TestPropertyTableMatchesModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		limits := Limits{
			VisibilityTimeout: time.Duration(rapid.IntRange(1, 5).Draw(rt, "vt_s")) * time.Second,
			MaxInFlight:       rapid.IntRange(1, 6).Draw(rt, "max_in_flight"),
			MaxAckedAhead:     rapid.IntRange(0, 4).Draw(rt, "max_acked_ahead"),
		}
		start := rapid.Uint64Range(0, 3).Draw(rt, "frontier")
		clk := clock.NewFake(time.Time{})
		tb := New(3, start, limits, clk)
		m := &model{
			limits: limits, clk: clk, hwm: start, frontier: start,
			leases: map[uint64]mLease{}, acked: map[uint64]bool{}, skipped: map[uint64]bool{},
			deliveries: map[uint64]int{}, settledBy: map[uint64]string{}, nonces: map[uint64]bool{},
		}
		for x := uint64(0); x < start; x++ {
			m.settledBy[x] = "advance"
		}
		prevFrontier := start

		// pickHandle returns a handle to act on: mostly a live lease (so
		// that acks, extends and nacks actually change state), otherwise
		// any lease issued before (usually stale), or a forged one.
		pickHandle := func(rt *rapid.T) (uint64, uint64) {
			kind := rapid.IntRange(0, 19).Draw(rt, "handle_kind")
			switch {
			case kind < 11 && len(m.leases) > 0:
				live := make([]uint64, 0, len(m.leases))
				for off := range m.leases {
					live = append(live, off)
				}
				slices.Sort(live) // map order is random; draws must be reproducible
				off := live[rapid.IntRange(0, len(live)-1).Draw(rt, "live")]
				return off, m.leases[off].nonce
			case kind < 18 && len(m.issued) > 0:
				l := m.issued[rapid.IntRange(0, len(m.issued)-1).Draw(rt, "issued")]
				return l.Offset, l.Nonce
			default:
				return rapid.Uint64Range(0, m.hwm+2).Draw(rt, "off"), rapid.Uint64().Draw(rt, "nonce")
			}
		}

		// modelAck settles the live lease on off in the model.
		modelAck := func(off uint64) error {
			if off != m.frontier && len(m.acked) >= m.limits.MaxAckedAhead {
				if !m.lowered {
					rt.Fatalf("ack of %d would be refused, though no limit was lowered", off)
				}
				return ErrAckedAheadFull
			}
			delete(m.leases, off)
			delete(m.deliveries, off)
			m.settledBy[off] = "ack"
			m.acked[off] = true
			m.carry()
			return nil
		}

		settleOp := func(name string, do func(off, nonce uint64) error, apply func(off uint64, l mLease) error) func(*rapid.T) {
			return func(rt *rapid.T) {
				off, nonce := pickHandle(rt)
				want := m.liveErr(off, nonce)
				if want == nil {
					want = apply(off, m.leases[off])
				}
				if got := do(off, nonce); got != want { // sentinels, returned unwrapped
					rt.Fatalf("%s(%d, %d) = %v, model says %v", name, off, nonce, got, want)
				}
			}
		}

		// Lease bugs need long histories (expire, re-lease, gap, unstick),
		// so each case runs the machine several times over (rapid's
		// default is about 30 steps per Repeat).
		actions := map[string]func(*rapid.T){
			"append": func(rt *rapid.T) {
				m.hwm += rapid.Uint64Range(1, 5).Draw(rt, "n")
			},
			"reserve": func(rt *rapid.T) {
				want := rapid.IntRange(0, 8).Draw(rt, "want")
				// Occasionally reserve under a lower hwm than the true one,
				// as a lagging reader might.
				hwm := m.hwm
				if hwm > m.frontier && rapid.IntRange(0, 4).Draw(rt, "lag") == 0 {
					hwm = rapid.Uint64Range(m.frontier, m.hwm).Draw(rt, "hwm")
				}
				// Mostly the timeout; sometimes a consume's own visibility.
				v := m.limits.VisibilityTimeout
				life := rapid.SampledFrom([]time.Duration{0, 0, 0, -time.Second, time.Nanosecond, time.Second, 2 * v}).Draw(rt, "visibility")
				expect := m.expectReserve(hwm, want)
				got := tb.ReserveFor(hwm, want, life)
				if life <= 0 {
					life = v
				}
				if !slices.Equal(offsets(got), expect) {
					rt.Fatalf("Reserve(%d, %d) = %v, model says %v", hwm, want, offsets(got), expect)
				}
				for _, l := range got {
					if _, live := m.leases[l.Offset]; live {
						rt.Fatalf("offset %d handed out while a live lease holds it", l.Offset)
					}
					if m.nonces[l.Nonce] {
						rt.Fatalf("nonce %d issued twice", l.Nonce)
					}
					m.nonces[l.Nonce] = true
					m.deliveries[l.Offset]++
					if l.DeliveryCount != m.deliveries[l.Offset] {
						rt.Fatalf("offset %d delivery count %d, model says %d", l.Offset, l.DeliveryCount, m.deliveries[l.Offset])
					}
					if want := clk.Now().Add(life); !l.Expiry.Equal(want) {
						rt.Fatalf("expiry %v, want %v", l.Expiry, want)
					}
					m.leases[l.Offset] = mLease{nonce: l.Nonce, expiry: l.Expiry}
					m.issued = append(m.issued, l)
				}
			},
			"ack": settleOp("Ack", tb.Ack, func(off uint64, _ mLease) error { return modelAck(off) }),
			// A batch ack must answer each handle as Ack one at a time
			// would, in order, at one instant (repeats included).
			"ackmany": func(rt *rapid.T) {
				n := rapid.IntRange(0, 6).Draw(rt, "batch")
				rs := make([]Receipt, n)
				want := make([]error, n)
				m.purge()
				for i := range rs {
					off, nonce := pickHandle(rt)
					rs[i] = Receipt{off, nonce}
					if want[i] = m.liveErr(off, nonce); want[i] == nil {
						want[i] = modelAck(off)
					}
				}
				got := make([]error, n)
				tb.AckMany(rs, got)
				for i := range rs {
					if got[i] != want[i] {
						rt.Fatalf("AckMany: receipt %d (%d, %d) = %v, model says %v", i, rs[i].Offset, rs[i].Nonce, got[i], want[i])
					}
				}
			},
			// An extend for a duration of its own (shorter or longer than
			// the visibility timeout) or for the timeout (d <= 0).
			"extend": func(rt *rapid.T) {
				v := m.limits.VisibilityTimeout
				d := rapid.SampledFrom([]time.Duration{
					0, -time.Second, time.Nanosecond, time.Second, v - time.Nanosecond, v, 2 * v,
				}).Draw(rt, "for")
				settleOp("Extend", func(off, nonce uint64) error { return tb.Extend(off, nonce, d) }, func(off uint64, l mLease) error {
					if d <= 0 {
						d = v
					}
					l.expiry = clk.Now().Add(d)
					m.leases[off] = l
					return nil
				})(rt)
			},
			"nack": settleOp("Nack", tb.Nack, func(off uint64, _ mLease) error {
				delete(m.leases, off)
				return nil
			}),
			"release": settleOp("Release", tb.Release, func(off uint64, _ mLease) error {
				delete(m.leases, off)
				if m.deliveries[off]--; m.deliveries[off] == 0 {
					delete(m.deliveries, off)
				}
				return nil
			}),
			"expire": func(rt *rapid.T) {
				m.purge()
				if got := tb.Expire(); got != m.expired {
					rt.Fatalf("Expire() = %d, model says %d", got, m.expired)
				}
				m.expired = 0
			},
			"clock": func(rt *rapid.T) {
				v := m.limits.VisibilityTimeout
				d := rapid.SampledFrom([]time.Duration{
					0, time.Nanosecond, time.Second, v - time.Nanosecond, v, v + time.Nanosecond,
				}).Draw(rt, "advance")
				clk.Advance(d)
			},
			"skip": func(rt *rapid.T) {
				// Mostly ranges at or above the frontier, where skips matter.
				from := rapid.Uint64Range(m.frontier, max(m.frontier, m.hwm)+3).Draw(rt, "from")
				if rapid.IntRange(0, 4).Draw(rt, "below") == 0 {
					from = rapid.Uint64Range(0, m.frontier).Draw(rt, "from_low")
				}
				to := from + rapid.Uint64Range(0, 4).Draw(rt, "width")
				m.purge()
				newly := 0
				for x := max(from, m.frontier); x < to; x++ {
					delete(m.leases, x)
					delete(m.deliveries, x)
					if !m.settled(x) {
						newly++
						m.skippedTotal++
						m.settledBy[x] = "skip"
					}
					delete(m.acked, x) // absorbed into the skipped range
					m.skipped[x] = true
				}
				m.carry()
				if got := tb.MarkSkipped(from, to); got != newly {
					rt.Fatalf("MarkSkipped(%d, %d) = %d, model says %d", from, to, got, newly)
				}
			},
			"advance": func(rt *rapid.T) {
				oldest := rapid.Uint64Range(0, m.hwm+2).Draw(rt, "oldest")
				m.purge()
				for x := m.frontier; x < oldest; x++ {
					delete(m.leases, x)
					delete(m.deliveries, x)
					if !m.acked[x] && !m.skipped[x] {
						m.retentionDropped++
					}
					delete(m.acked, x)
					delete(m.skipped, x)
					if _, ok := m.settledBy[x]; !ok {
						m.settledBy[x] = "advance"
					}
				}
				if oldest > m.frontier {
					m.frontier = oldest
				}
				m.carry()
				tb.AdvanceTo(oldest)
			},
			"limits": func(rt *rapid.T) {
				m.purge()
				m.limits = Limits{
					VisibilityTimeout: time.Duration(rapid.IntRange(1, 5).Draw(rt, "vt_s")) * time.Second,
					MaxInFlight:       rapid.IntRange(1, 6).Draw(rt, "max_in_flight"),
					MaxAckedAhead:     rapid.IntRange(0, 4).Draw(rt, "max_acked_ahead"),
				}
				if len(m.acked)+m.aboveFrontier() > m.limits.MaxAckedAhead {
					m.lowered = true
				}
				tb.SetLimits(m.limits)
			},
			"": func(rt *rapid.T) {
				m.purge()
				s := tb.Stats()
				if s.Frontier < prevFrontier {
					rt.Fatalf("frontier went back from %d to %d", prevFrontier, s.Frontier)
				}
				prevFrontier = s.Frontier
				if s.Frontier != m.frontier || s.InFlight != len(m.leases) || s.AckedAhead != len(m.acked) {
					rt.Fatalf("Stats %+v; model frontier %d, in flight %d, acked-ahead %d",
						s, m.frontier, len(m.leases), len(m.acked))
				}
				if s.Expired != m.expiredTotal || s.Skipped != m.skippedTotal || s.RetentionDropped != m.retentionDropped {
					rt.Fatalf("Stats %+v; model expired %d, skipped %d, retention-dropped %d",
						s, m.expiredTotal, m.skippedTotal, m.retentionDropped)
				}
				if s.Unsticking != (len(m.acked) >= m.limits.MaxAckedAhead) {
					rt.Fatalf("Stats.Unsticking = %v with %d acked-ahead, limit %d", s.Unsticking, len(m.acked), m.limits.MaxAckedAhead)
				}
				for x := uint64(0); x < s.Frontier; x++ {
					if _, ok := m.settledBy[x]; !ok {
						rt.Fatalf("offset %d below frontier %d was never acked, skipped or advanced over", x, s.Frontier)
					}
				}
				checkInternal(rt, tb)
			},
		}
		for range 4 {
			rt.Repeat(actions)
		}

		// Liveness: once every consumer is gone (all leases expired), a
		// consumer that acks what it gets drains the partition: every
		// unsettled offset below the hwm is delivered and the frontier
		// reaches the hwm. The longest lease is twice the longest
		// timeout drawn (reserve and extend draw 2v).
		clk.Advance(2 * 5 * time.Second)
		tb.SetLimits(limits)
		pending := map[uint64]bool{}
		for x := m.frontier; x < m.hwm; x++ {
			if !m.settled(x) {
				pending[x] = true
			}
		}
		for round := 0; tb.Frontier() < m.hwm; round++ {
			if round > int(m.hwm)+10 {
				rt.Fatalf("drain stuck: frontier %d, hwm %d, still pending %v", tb.Frontier(), m.hwm, pending)
			}
			for _, l := range tb.Reserve(m.hwm, limits.MaxInFlight) {
				delete(pending, l.Offset)
				// Acking in ascending order always acks the frontier
				// record, so no ack may be refused here.
				if err := tb.Ack(l.Offset, l.Nonce); err != nil {
					rt.Fatalf("drain ack %d: %v", l.Offset, err)
				}
			}
		}
		if len(pending) != 0 {
			rt.Fatalf("never delivered although unsettled: %v", pending)
		}
	})
}
