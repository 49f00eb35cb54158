package meta

import (
	"errors"
	"strings"
	"testing"
)

func i64(v int64) *int64 { return &v }

// A user's own limits travel through Raft with the record: set at
// create, replaced whole by SetLimits, cleared by nil; every change
// moves the record's version (so a cached principal sees it), and a
// value out of range is refused naming the field, changing nothing.
func TestUserLimitsThroughRaft(t *testing.T) {
	t.Parallel()
	s := newLeader(t)
	ctx := testCtx(t)
	u := testUser("alice")
	u.Limits = &Limits{ProduceRecordsPerS: i64(5)}
	must(t, s.CreateUser(ctx, u))
	got, _ := s.User("alice")
	if got.Limits == nil || *got.Limits.ProduceRecordsPerS != 5 || got.Limits.ProduceBytesPerS != nil {
		t.Fatalf("created with %+v", got.Limits)
	}
	v1 := got.Version

	must(t, s.SetLimits(ctx, "alice", &Limits{ConsumeRequestsPerS: i64(0), ProduceBytesPerS: i64(1 << 20)}))
	got, _ = s.User("alice")
	if got.Limits.ProduceRecordsPerS != nil || *got.Limits.ConsumeRequestsPerS != 0 || *got.Limits.ProduceBytesPerS != 1<<20 || got.Version <= v1 {
		t.Fatalf("after SetLimits: %+v (version %d, was %d)", got.Limits, got.Version, v1)
	}
	v2 := got.Version

	err := s.SetLimits(ctx, "alice", &Limits{ProduceBytesPerS: i64(-1)})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "limits.produce_bytes_per_s") {
		t.Fatalf("negative limit: %v, want ErrInvalid naming the field", err)
	}
	if got, _ := s.User("alice"); got.Version != v2 {
		t.Fatal("a refused SetLimits changed the record")
	}
	bad := testUser("bob")
	bad.Limits = &Limits{ConsumeRequestsPerS: i64(MaxRate[LimitConsumeRequests] + 1)}
	if err := s.CreateUser(ctx, bad); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "limits.consume_requests_per_s") {
		t.Fatalf("absurd limit at create: %v", err)
	}

	must(t, s.SetLimits(ctx, "alice", nil))
	if got, _ := s.User("alice"); got.Limits != nil {
		t.Fatalf("cleared limits read back as %+v", got.Limits)
	}
	if err := s.SetLimits(ctx, "nobody", nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("limits of an unknown user: %v", err)
	}
}

// Resolution is field by field: a set field wins (0 too: unlimited), an
// unset one is the default.
func TestLimitsResolvePerField(t *testing.T) {
	def := Rates{ProduceRecordsPerS: 100, ProduceBytesPerS: 1000, ConsumeRequestsPerS: 10}
	var none *Limits
	if none.Resolve(def) != def || !none.Empty() {
		t.Fatal("no limits of its own: the defaults")
	}
	l := &Limits{ProduceRecordsPerS: i64(7), ConsumeRequestsPerS: i64(0)}
	want := Rates{ProduceRecordsPerS: 7, ProduceBytesPerS: 1000, ConsumeRequestsPerS: 0}
	if got := l.Resolve(def); got != want {
		t.Fatalf("Resolve = %+v, want %+v", got, want)
	}
	if d := l.Defaulted(); len(d) != 1 || d[0] != LimitProduceBytes {
		t.Fatalf("Defaulted = %v", d)
	}
}

// A user record without limits encodes as it did before limits existed,
// so an older binary's strict decoder still takes its commands.
func TestUserWithoutLimitsEncodesAsBefore(t *testing.T) {
	cmd, err := NewCommand(OpPutUser, PutUserCmd{User: testUser("alice")})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cmd.Payload), "limits") {
		t.Fatalf("payload %s names limits", cmd.Payload)
	}
}
