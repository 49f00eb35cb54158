package ratelimit

import (
	"fmt"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"pgregory.net/rapid"
)

var epoch = time.Unix(1_800_000_000, 0)

func records(n int64) Rates { return Rates{ProduceRecords: n} }

// The burst is one second's worth: a fresh bucket takes exactly rate
// tokens at once, then refuses; it refills at the rate on the clock.
func TestBurstAndRefill(t *testing.T) {
	clk := clock.NewFake(epoch)
	l := New(clk)
	rates := records(10)
	for i := range 10 {
		if d := l.Take("alice", 1, rates, records(1)); !d.Allowed {
			t.Fatalf("take %d of the burst refused: %+v", i, d)
		}
	}
	d := l.Take("alice", 1, rates, records(1))
	if d.Allowed || d.Limit != ProduceRecords || d.RetryAfter != time.Second {
		t.Fatalf("past the burst: %+v, want refused by produce records, Retry-After 1s", d)
	}
	clk.Advance(100 * time.Millisecond) // one token's worth
	if d := l.Take("alice", 1, rates, records(1)); !d.Allowed {
		t.Fatalf("after one token's refill: %+v", d)
	}
	if d := l.Take("alice", 1, rates, records(1)); d.Allowed {
		t.Fatal("a second token out of one refill")
	}
	clk.Advance(time.Hour) // refill stops at the burst
	n := 0
	for l.Take("alice", 1, rates, records(1)).Allowed {
		n++
	}
	if n != 10 {
		t.Fatalf("after an hour idle the bucket held %d, want the burst of 10", n)
	}
	// A rate whose token is no whole number of nanoseconds has a burst
	// of the whole rate, and rounding lets at most a nanosecond's worth
	// of a token more through per request.
	for _, rate := range []int64{3, 7, 999_983} {
		n := int64(0)
		for l.Take(fmt.Sprint("r", rate), 1, records(rate), records(1)).Allowed {
			n++
		}
		if slack := rate / (int64(time.Second) / rate); n < rate || n > rate+slack+1 {
			t.Fatalf("rate %d: a burst of %d", rate, n)
		}
	}
}

// Retry-After comes from the deficit: whole seconds, rounded up, at
// least 1; and waiting that long is enough.
func TestRetryAfterArithmetic(t *testing.T) {
	for _, tc := range []struct {
		rate, burn, want int64 // rate/s, tokens taken first, then a request of want tokens
		after            time.Duration
	}{
		{rate: 1, burn: 1, want: 1, after: time.Second},           // exactly 1 s short
		{rate: 10, burn: 10, want: 1, after: time.Second},         // 0.1 s short: rounds up to 1
		{rate: 10, burn: 10, want: 10, after: time.Second},        // a whole burst: 1 s
		{rate: 4, burn: 4, want: 3, after: time.Second},           // 0.75 s: 1
		{rate: 10, burn: 35, want: 1, after: 3 * time.Second},     // debt of 2.5 s + 0.1 s: 3
		{rate: 1000, burn: 5000, want: 1, after: 5 * time.Second}, // debt 4 s + 1 ms: 5
	} {
		t.Run(fmt.Sprintf("rate%d_burn%d_want%d", tc.rate, tc.burn, tc.want), func(t *testing.T) {
			clk := clock.NewFake(epoch)
			l := New(clk)
			rates := records(tc.rate)
			if d := l.Take("u", 1, rates, records(tc.burn)); !d.Allowed {
				t.Fatalf("first take into a full bucket refused: %+v", d)
			}
			d := l.Take("u", 1, rates, records(tc.want))
			if d.Allowed || d.RetryAfter != tc.after {
				t.Fatalf("got %+v, want refused with Retry-After %s", d, tc.after)
			}
			clk.Advance(d.RetryAfter)
			if d := l.Take("u", 1, rates, records(tc.want)); !d.Allowed {
				t.Fatalf("refused again after waiting its Retry-After: %+v", d)
			}
		})
	}
}

// A request is all or nothing: refused by one limit, it takes nothing
// from the others.
func TestAllOrNothing(t *testing.T) {
	clk := clock.NewFake(epoch)
	l := New(clk)
	rates := Rates{ProduceRecords: 100, ProduceBytes: 1000}
	if d := l.Take("u", 1, rates, Rates{ProduceRecords: 1, ProduceBytes: 900}); !d.Allowed {
		t.Fatal(d)
	}
	// 200 bytes do not fit the 100 left: refused by bytes, and the
	// record it would have cost stays.
	d := l.Take("u", 1, rates, Rates{ProduceRecords: 1, ProduceBytes: 200})
	if d.Allowed || d.Limit != ProduceBytes {
		t.Fatalf("got %+v, want refused by bytes", d)
	}
	for i := range 99 {
		if d := l.Take("u", 1, rates, Rates{ProduceRecords: 1, ProduceBytes: 1}); !d.Allowed {
			t.Fatalf("record %d: %+v (the refused request took tokens)", i, d)
		}
	}
}

// A batch larger than the burst waits for a full bucket and leaves it in
// debt: it passes, and what follows waits the debt out.
func TestLargerThanBurstRunsIntoDebt(t *testing.T) {
	clk := clock.NewFake(epoch)
	l := New(clk)
	rates := records(10)
	l.Take("u", 1, rates, records(1))
	if d := l.Take("u", 1, rates, records(50)); d.Allowed {
		t.Fatal("a batch of 5 s admitted into a bucket not full")
	}
	clk.Advance(100 * time.Millisecond)
	if d := l.Take("u", 1, rates, records(50)); !d.Allowed {
		t.Fatalf("a batch of 5 s refused by a full bucket: %+v", d)
	}
	if d := l.Take("u", 1, rates, records(1)); d.Allowed || d.RetryAfter != 5*time.Second {
		t.Fatalf("after the debt: %+v, want Retry-After 5s", d)
	}
}

// Would answers as Take would and takes nothing.
func TestWouldTakesNothing(t *testing.T) {
	l := New(clock.NewFake(epoch))
	rates := records(2)
	for range 5 {
		if d := l.Would("u", 1, rates, records(1)); !d.Allowed {
			t.Fatal(d)
		}
	}
	l.Take("u", 1, rates, records(2))
	if d := l.Would("u", 1, rates, records(1)); d.Allowed {
		t.Fatal("Would admitted what Take would refuse")
	}
}

// Users do not share buckets; a new incarnation of a name starts full; a
// rate of 0 is unlimited; Retain drops the gone.
func TestUsersApart(t *testing.T) {
	clk := clock.NewFake(epoch)
	l := New(clk)
	rates := records(1)
	l.Take("alice", 1, rates, records(1))
	if d := l.Take("alice", 1, rates, records(1)); d.Allowed {
		t.Fatal("alice past her limit")
	}
	for i := range 100 {
		if d := l.Take("bob", 2, Rates{}, records(1)); !d.Allowed {
			t.Fatalf("unlimited bob refused at %d", i)
		}
	}
	if d := l.Take("bob", 2, rates, records(1)); !d.Allowed {
		t.Fatal("bob refused while alice is out")
	}
	if d := l.Take("alice", 9, rates, records(1)); !d.Allowed {
		t.Fatal("a re-created alice inherited the old one's bucket")
	}
	l.Retain(func(user string, _ uint64) bool { return user != "alice" })
	if l.Len() != 1 {
		t.Fatalf("%d users after dropping alice, want 1", l.Len())
	}
}

// The table stays bounded: buckets full again are forgotten (the sweep),
// and past MaxUsers arbitrary ones go.
func TestTableBounded(t *testing.T) {
	clk := clock.NewFake(epoch)
	l := New(clk)
	l.max = 64
	rates := records(1)
	for i := range 200 {
		l.Take(fmt.Sprint("u", i), 1, rates, records(1))
		if l.Len() > l.max {
			t.Fatalf("%d entries, bound %d", l.Len(), l.max)
		}
	}
	clk.Advance(sweepEvery)
	l.Take("last", 1, rates, records(1))
	if l.Len() != 1 {
		t.Fatalf("%d entries after the sweep, want only the one in use", l.Len())
	}
}

// Over any sequence of takes, what a bucket admits in a span of T
// seconds is at most rate·(T+1) (the burst plus the refill), debt
// included, and a refused request's Retry-After is always enough.
func TestRateHoldsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		clk := clock.NewFake(epoch)
		l := New(clk)
		rate := rapid.Int64Range(1, 1000).Draw(t, "rate")
		rates := records(rate)
		var admitted, debt int64
		start := clk.Now()
		for range rapid.IntRange(1, 200).Draw(t, "n") {
			clk.Advance(time.Duration(rapid.Int64Range(0, int64(2*time.Second)).Draw(t, "gap")))
			n := rapid.Int64Range(1, 3*rate).Draw(t, "cost")
			d := l.Take("u", 1, rates, records(n))
			if d.Allowed {
				admitted += n
				debt = max(debt, n-rate)
				continue
			}
			if d.RetryAfter < time.Second {
				t.Fatalf("Retry-After %s", d.RetryAfter)
			}
			if !l.Would("u", 1, rates, records(n)).Allowed {
				clk.Advance(d.RetryAfter)
				if !l.Would("u", 1, rates, records(n)).Allowed {
					t.Fatalf("refused again after its Retry-After %s", d.RetryAfter)
				}
			}
		}
		elapsed := clk.Now().Sub(start).Seconds()
		if limit := float64(rate)*(elapsed+1) + float64(debt) + 1; float64(admitted) > limit {
			t.Fatalf("admitted %d in %.2fs at %d/s (bound %.0f)", admitted, elapsed, rate, limit)
		}
	})
}
