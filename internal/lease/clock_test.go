package lease

import (
	"testing"
	"time"
)

func TestFakeClock(t *testing.T) {
	c := NewFakeClock(time.Time{})
	if !c.Now().Equal(FakeEpoch) {
		t.Fatalf("zero start: Now() = %v, want %v", c.Now(), FakeEpoch)
	}
	if got := c.Advance(1500 * time.Millisecond); !got.Equal(FakeEpoch.Add(1500 * time.Millisecond)) {
		t.Fatalf("Advance returned %v", got)
	}
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c.Set(at)
	if !c.Now().Equal(at) {
		t.Fatalf("after Set: Now() = %v, want %v", c.Now(), at)
	}
	start := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	if !NewFakeClock(start).Now().Equal(start) {
		t.Fatal("explicit start not honoured")
	}
}

func TestRealClockMoves(t *testing.T) {
	var c Clock = RealClock{}
	a := c.Now()
	b := c.Now()
	if b.Before(a) {
		t.Fatalf("RealClock went backwards: %v then %v", a, b)
	}
}
