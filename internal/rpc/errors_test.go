package rpc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/storage"

	nodepb "github.com/narad-io/narad/internal/rpc/proto"
)

func TestNewServerRefusesBadConfig(t *testing.T) {
	if _, err := NewServer("", &fake{}); err == nil {
		t.Error("empty secret accepted")
	}
	if _, err := NewServer("new\nline", &fake{}); err == nil {
		t.Error("non-printable secret accepted")
	}
	if _, err := NewServer(testSecret, nil); err == nil {
		t.Error("nil handler accepted")
	}
}

// A peer with another secret never gets past the peer handshake: its
// connection fails the handshake, so gRPC parses none of its bytes, and
// the refusal is counted on the server.
func TestWrongSecretStoppedAtTheDoor(t *testing.T) {
	f := &fake{}
	var refused atomic.Int64
	addr, _ := startServer(t, f, WithRefused(func(string) { refused.Add(1) }))
	for name, secret := range map[string]string{"wrong": "not-the-secret", "none": "", "prefix": testSecret[:5]} {
		err := testPool(t, secret).Heartbeat(context.Background(), addr, Member{ID: "n9"})
		ae := asAPIErr(t, err)
		if ae.Status != http.StatusServiceUnavailable || !strings.Contains(ae.Message, "did not prove it belongs to the cluster") {
			t.Errorf("%s secret: %d %q", name, ae.Status, ae.Message)
		}
	}
	if n := f.calls.Load(); n != 0 {
		t.Fatalf("handler called %d times without the secret", n)
	}
	if refused.Load() == 0 {
		t.Fatal("no refusal counted at the door")
	}
}

// Past the peer handshake, every call is checked again: a connection is
// no proof of anything the call claims.
func TestSecretRefused(t *testing.T) {
	f := &fake{}
	addr, _ := startServer(t, f)
	ctx := context.Background()
	for name, secret := range map[string]string{"wrong": "not-the-secret", "none": "", "prefix": testSecret[:5]} {
		p := insiderPool(t, secret)
		errs := []error{
			p.Commit(ctx, addr, "t", 0, 0, []storage.Record{{Payload: []byte("x")}}, 0),
			p.Heartbeat(ctx, addr, Member{ID: "n9"}),
		}
		_, err := p.Forward(ctx, addr, ForwardRequest{Method: "GET", Path: "/v1/topics"})
		errs = append(errs, err)
		for i, err := range errs {
			ae := asAPIErr(t, err)
			if ae.Status != http.StatusUnauthorized || !strings.Contains(ae.Message, "cluster secret refused") {
				t.Errorf("%s secret, call %d: %d %q", name, i, ae.Status, ae.Message)
			}
		}
	}
	if n := f.calls.Load(); n != 0 {
		t.Fatalf("handler called %d times without the secret", n)
	}
	// The same server serves the right secret: the refusals above were the
	// secret's doing.
	if err := testPool(t, testSecret).Heartbeat(ctx, addr, Member{ID: "n1"}); err != nil || f.calls.Load() != 1 {
		t.Fatalf("right secret: %v, calls %d", err, f.calls.Load())
	}
}

func TestAPIErrRoundTrip(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		want   *apierr.Error
		logged string
	}{
		{"conflict", apierr.Conflict("x"), &apierr.Error{Status: 409, Message: "x"}, ""},
		{"unavailable keeps retry-after and its own words", apierr.Unavailable(2500*time.Millisecond, "partition frozen"),
			&apierr.Error{Status: 503, Message: "partition frozen", RetryAfter: 2500 * time.Millisecond}, ""},
		{"wrapped apierr", fmt.Errorf("broker: %w", apierr.NotFound("topic %q does not exist", "a")),
			&apierr.Error{Status: 404, Message: `topic "a" does not exist`}, ""},
		{"handler 501 is not a missing method", apierr.New(501, "children not yet"), &apierr.Error{Status: 501, Message: "children not yet"}, ""},
		{"plain error", fmt.Errorf("commit: %w", errDisk), &apierr.Error{Status: 500, Message: "internal error"}, "disk on fire"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fake{
				commit:    func(context.Context, string, uint64, int, []storage.Record, uint64) error { return c.err },
				heartbeat: func(context.Context, Member) error { return c.err },
				stats:     func(context.Context, string, []int) ([]PartitionStats, error) { return nil, c.err },
			}
			addr, logs := startServer(t, f)
			p := testPool(t, testSecret)
			ctx := context.Background()
			_, statsErr := p.Stats(ctx, addr, "t", nil, false)
			for i, err := range []error{p.Commit(ctx, addr, "t", 0, 0, nil, 0), p.Heartbeat(ctx, addr, Member{}), statsErr} {
				if got := asAPIErr(t, err); !reflect.DeepEqual(got, c.want) {
					t.Errorf("call %d: got %+v, want %+v", i, got, c.want)
				}
			}
			if c.logged != "" && !strings.Contains(logs.String(), c.logged) {
				t.Errorf("cause %q not logged on the server: %s", c.logged, logs)
			}
		})
	}
}

func TestHandlerPanicIs500AndServerSurvives(t *testing.T) {
	f := &fake{heartbeat: func(_ context.Context, m Member) error {
		if m.ID == "boom" {
			panic("nil map")
		}
		return nil
	}}
	addr, logs := startServer(t, f)
	p := testPool(t, testSecret)
	ae := asAPIErr(t, p.Heartbeat(context.Background(), addr, Member{ID: "boom"}))
	if ae.Status != 500 || ae.Message != "internal error" {
		t.Errorf("panic answered %+v", ae)
	}
	if !strings.Contains(logs.String(), "nil map") {
		t.Errorf("panic not logged: %s", logs)
	}
	if err := p.Heartbeat(context.Background(), addr, Member{ID: "ok"}); err != nil {
		t.Errorf("server after panic: %v", err)
	}
}

func TestUnreachableIs503(t *testing.T) {
	addr := freeAddr(t)
	p := testPool(t, testSecret)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	ae := asAPIErr(t, p.Commit(ctx, addr, "t", 0, 0, nil, 0))
	if took := time.Since(start); took > 1500*time.Millisecond {
		t.Errorf("took %v", took)
	}
	if ae.Status != 503 || ae.RetryAfter != time.Second || !strings.Contains(ae.Message, "node "+addr+" unreachable") {
		t.Errorf("got %+v", ae)
	}
}

// A call to a node no connection could be made to never reached it, and
// says so (a produce may then be sent to the partition's next leader);
// a call the node answered, even with a 503, does not.
func TestUndeliveredOnlyWhenNoConnectionWasMade(t *testing.T) {
	p := testPool(t, testSecret)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := p.Commit(ctx, freeAddr(t), "t", 0, 0, nil, 0)
	if !errors.Is(err, refusal.ErrUndelivered) || apierr.Status(err) != 503 {
		t.Fatalf("a refused dial: %v (status %d), want a 503 marked undelivered", err, apierr.Status(err))
	}
	addr, _ := startServer(t, &fake{commit: func(context.Context, string, uint64, int, []storage.Record, uint64) error {
		return refusal.New(refusal.ErrUnavailable, time.Second, "not on a majority yet; they may be stored")
	}})
	err = p.Commit(ctx, addr, "t", 0, 0, nil, 0)
	if err == nil || errors.Is(err, refusal.ErrUndelivered) {
		t.Fatalf("a node's own refusal: %v, want it not marked undelivered", err)
	}
}

func TestUnknownMethodIs501OnlyWithTheSecret(t *testing.T) {
	f := &fake{}
	addr, _ := startServer(t, f)
	for _, method := range []string{"/narad.v1.Node/MoveSession", "/narad.v2.Future/Call"} {
		for _, c := range []struct {
			secret string
			want   int
		}{{testSecret, 501}, {"wrong", 401}} {
			p := insiderPool(t, c.secret)
			cc, err := p.conn(addr)
			if err != nil {
				t.Fatal(err)
			}
			err = cc.Invoke(context.Background(), method, &nodepb.HeartbeatRequest{}, &nodepb.HeartbeatResponse{})
			if ae := asAPIErr(t, decodeError(addr, method, err)); ae.Status != c.want {
				t.Errorf("%s with secret %q: %+v, want %d", method, c.secret, ae, c.want)
			}
		}
	}
	if n := f.calls.Load(); n != 0 {
		t.Errorf("handler called %d times", n)
	}
}

func TestToMillisNeverLosesARetryAfter(t *testing.T) {
	for d, want := range map[time.Duration]int64{0: 0, -time.Second: 0, time.Nanosecond: 1, time.Millisecond: 1, 1500 * time.Microsecond: 2, time.Second: 1000} {
		if got := toMillis(d); got != want {
			t.Errorf("toMillis(%v) = %d, want %d", d, got, want)
		}
	}
}

// A handler's typed refusal comes back as the same refusal — kind, words,
// Retry-After — through any wrapping, so the caller classifies a remote
// commit failure exactly as it would a local one (dispatch discards and
// reroutes on errors.Is, never on a status).
func TestRefusalRoundTripKeepsItsKind(t *testing.T) {
	for _, kind := range refusal.Kinds() {
		t.Run(string(kind), func(t *testing.T) {
			retry := time.Duration(0) // only a temporary refusal says when to come back
			if apierr.Status(refusal.New(kind, 0, "")) == http.StatusServiceUnavailable {
				retry = 2500 * time.Millisecond
			}
			sent := refusal.New(kind, retry, "partition %d of %q: %s", 3, "orders", kind)
			f := &fake{
				commit: func(context.Context, string, uint64, int, []storage.Record, uint64) error {
					return fmt.Errorf("broker: %w", sent)
				},
				heartbeat: func(context.Context, Member) error { return sent },
			}
			addr, logs := startServer(t, f)
			p := testPool(t, testSecret)
			ctx := context.Background()
			for i, err := range []error{p.Commit(ctx, addr, "orders", 0, 3, nil, 0), p.Heartbeat(ctx, addr, Member{})} {
				got, ok := err.(*refusal.Error)
				if !ok || !reflect.DeepEqual(got, sent) || !errors.Is(err, kind) {
					t.Errorf("call %d: got %#v (%T), want %#v", i, err, err, sent)
				}
			}
			if strings.Contains(logs.String(), "handler failed") {
				t.Errorf("a refusal was logged as a handler failure: %s", logs)
			}
		})
	}
}

// The detail a caller decodes: a kind it knows is rebuilt typed; one it
// does not know (a newer peer's), or none (an older peer's), leaves the
// HTTP form exactly — never a guess at the kind from the status.
func TestDetailWithoutAKnownKindStaysHTTP(t *testing.T) {
	for _, kind := range []string{"", "a_kind_of_a_newer_release"} {
		err := fromDetail(&nodepb.Error{Status: 404, Message: `topic "a" does not exist`, RetryAfterMs: 0, Kind: kind})
		want := &apierr.Error{Status: 404, Message: `topic "a" does not exist`}
		if !reflect.DeepEqual(err, want) || errors.Is(err, refusal.ErrTopicNotFound) {
			t.Errorf("kind %q: got %#v, want %#v", kind, err, want)
		}
	}
}

// Every refusal kind crosses node RPC with the status apierr.From gives it
// in the detail, its kind, and the gRPC code that status reads as: the
// one table of codes (codeFor) has a line for each, none is Unknown.
func TestEveryKindHasAGRPCCode(t *testing.T) {
	want := map[refusal.Kind]codes.Code{
		refusal.ErrTopicNotFound:    codes.NotFound,
		refusal.ErrIncarnationGone:  codes.NotFound,
		refusal.ErrIncarnationAhead: codes.Unavailable,
		refusal.ErrPartitionRange:   codes.InvalidArgument,
		refusal.ErrFrozen:           codes.Unavailable,
		refusal.ErrNotOwner:         codes.Unavailable,
		refusal.ErrDiskFull:         codes.Unavailable,
		refusal.ErrFenced:           codes.Unavailable,
		refusal.ErrStaleEpoch:       codes.Unavailable,
		refusal.ErrNotLeader:        codes.Unavailable,
		refusal.ErrNotReady:         codes.Unavailable,
		refusal.ErrInvalid:          codes.InvalidArgument,
		refusal.ErrNotFound:         codes.NotFound,
		refusal.ErrConflict:         codes.Aborted,
		refusal.ErrUnavailable:      codes.Unavailable,
		refusal.ErrTooLarge:         codes.ResourceExhausted,
		refusal.ErrGone:             codes.NotFound,
		refusal.ErrForbidden:        codes.PermissionDenied,
	}
	for _, k := range refusal.Kinds() {
		code, ok := want[k]
		if !ok {
			t.Fatalf("kind %s has no gRPC code in this test: add it here (and its status to apierr.From)", k)
		}
		st := status.Convert(encodeError(fmt.Errorf("move: %w", refusal.New(k, 0, "because %d", 7))))
		if st.Code() != code || st.Message() != "because 7" {
			t.Errorf("%s: code %s %q, want %s", k, st.Code(), st.Message(), code)
		}
		var detail *nodepb.Error
		for _, d := range st.Details() {
			detail, _ = d.(*nodepb.Error)
		}
		if detail == nil || detail.GetKind() != string(k) || int(detail.GetStatus()) != apierr.Status(refusal.New(k, 0, "")) {
			t.Errorf("%s: detail %+v, want its kind and apierr's status", k, detail)
		}
	}
}

// codeFor, line by line: each HTTP status an edge answers reads as the
// closest gRPC code, and a status it does not know as Unknown.
func TestCodeFor(t *testing.T) {
	for httpStatus, want := range map[int]codes.Code{
		http.StatusBadRequest:            codes.InvalidArgument,
		http.StatusUnauthorized:          codes.Unauthenticated,
		http.StatusForbidden:             codes.PermissionDenied,
		http.StatusNotFound:              codes.NotFound,
		http.StatusGone:                  codes.NotFound,
		http.StatusConflict:              codes.Aborted,
		http.StatusRequestEntityTooLarge: codes.ResourceExhausted,
		http.StatusTooManyRequests:       codes.ResourceExhausted,
		http.StatusNotImplemented:        codes.Unimplemented,
		http.StatusServiceUnavailable:    codes.Unavailable,
		http.StatusGatewayTimeout:        codes.DeadlineExceeded,
		http.StatusInternalServerError:   codes.Internal,
		http.StatusTeapot:                codes.Unknown,
	} {
		if got := codeFor(httpStatus); got != want {
			t.Errorf("codeFor(%d) = %s, want %s", httpStatus, got, want)
		}
	}
}
