package peerauth

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// refusals records the Refused callback.
type refusals struct {
	mu sync.Mutex
	rs []string
	ch chan string
}

func newRefusals() *refusals { return &refusals{ch: make(chan string, 16)} }

func (r *refusals) add(reason string) {
	r.mu.Lock()
	r.rs = append(r.rs, reason)
	r.mu.Unlock()
	r.ch <- reason
}

func (r *refusals) next(t *testing.T) string {
	t.Helper()
	select {
	case reason := <-r.ch:
		return reason
	case <-time.After(10 * time.Second):
		t.Fatal("no refusal reported")
		return ""
	}
}

func listen(t *testing.T, cfg Config) *RaftLayer {
	t.Helper()
	if cfg.Plane == "" {
		cfg.Plane = "raft"
	}
	l, err := ListenRaft("127.0.0.1:0", nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// acceptOne runs Accept in the background; the channel yields the conn.
func acceptOne(l *RaftLayer) <-chan net.Conn {
	ch := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			close(ch)
			return
		}
		ch <- c
	}()
	return ch
}

func TestSameSecretConnectsBothWays(t *testing.T) {
	srv := listen(t, Config{Secret: []byte("s3cret")})
	cli := listen(t, Config{Secret: []byte("s3cret")})
	got := acceptOne(srv)
	c, err := cli.Dial(raft.ServerAddress(srv.Addr().String()), time.Second)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.Close()
	s := <-got
	if s == nil {
		t.Fatal("accept failed")
	}
	defer s.Close()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(s, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("server read %q, %v", buf, err)
	}
	if _, err := s.Write([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "pong" {
		t.Fatalf("client read %q, %v", buf, err)
	}
}

func TestWrongSecretRefusedBothWays(t *testing.T) {
	rs := newRefusals()
	srv := listen(t, Config{Secret: []byte("right"), Refused: rs.add})
	wrong := listen(t, Config{Secret: []byte("wrong")})
	got := acceptOne(srv)
	if c, err := wrong.Dial(raft.ServerAddress(srv.Addr().String()), time.Second); err == nil {
		c.Close()
		t.Fatal("a dialer with the wrong secret was let in")
	}
	if r := rs.next(t); r != ReasonProof {
		t.Fatalf("reason = %q, want %q", r, ReasonProof)
	}
	srv.Close()
	if c := <-got; c != nil {
		t.Fatal("Accept handed out a connection with the wrong secret")
	}
}

// A dialer must not trust a listener that does not know the secret: it
// would otherwise hand Raft's requests (and its votes) to an impostor.
func TestDialerRefusesImpostorListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	impostorKey := DeriveKey([]byte("guess"), "raft")
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		listenerSide(c, impostorKey)
	}()
	cli := listen(t, Config{Secret: []byte("right")})
	if c, err := cli.Dial(raft.ServerAddress(ln.Addr().String()), time.Second); err == nil {
		c.Close()
		t.Fatal("dialer accepted a listener with another key")
	}
}

// A stranger speaking hashicorp/raft's wire protocol directly — the
// attack of issue 9: an AppendEntries with a far higher term — gets no
// answer, and Raft's consumer channel sees nothing.
func TestRaftStrangerRefused(t *testing.T) {
	rs := newRefusals()
	l := listen(t, Config{Secret: []byte("cluster"), Refused: rs.add})
	victim := raft.NewNetworkTransport(l, 1, time.Second, io.Discard)
	defer victim.Close()

	stranger, err := raft.NewTCPTransport("127.0.0.1:0", nil, 1, time.Second, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer stranger.Close()
	req := &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ID: []byte("evil"), Addr: []byte(stranger.LocalAddr())},
		Term: 1 << 40}
	var resp raft.AppendEntriesResponse
	if err := stranger.AppendEntries("victim", raft.ServerAddress(l.Addr().String()), req, &resp); err == nil {
		t.Fatalf("the stranger's AppendEntries was answered: %+v", resp)
	}
	if r := rs.next(t); r != ReasonGreeting {
		t.Fatalf("reason = %q, want %q", r, ReasonGreeting)
	}
	select {
	case rpc := <-victim.Consumer():
		t.Fatalf("Raft received the stranger's RPC: %T", rpc.Command)
	default:
	}
}

// Two transports with the same secret carry a real Raft RPC.
func TestRaftPeersTalk(t *testing.T) {
	a := raft.NewNetworkTransport(listen(t, Config{Secret: []byte("k")}), 1, time.Second, io.Discard)
	defer a.Close()
	defer a.CloseStreams() // pooled connections outlive Close
	b := raft.NewNetworkTransport(listen(t, Config{Secret: []byte("k")}), 1, time.Second, io.Discard)
	defer b.Close()
	go func() {
		rpc := <-b.Consumer()
		rpc.Respond(&raft.AppendEntriesResponse{Term: 7, Success: true}, nil)
	}()
	var resp raft.AppendEntriesResponse
	req := &raft.AppendEntriesRequest{RPCHeader: raft.RPCHeader{ID: []byte("a"), Addr: []byte(a.LocalAddr())}, Term: 7}
	if err := a.AppendEntries("b", b.LocalAddr(), req, &resp); err != nil {
		t.Fatalf("AppendEntries between peers: %v", err)
	}
	if !resp.Success || resp.Term != 7 {
		t.Fatalf("resp = %+v", resp)
	}
}

// With no secret, a node's key is its own: even another node with no
// secret cannot connect.
func TestNoSecretAcceptsNobody(t *testing.T) {
	rs := newRefusals()
	a := listen(t, Config{Refused: rs.add})
	b := listen(t, Config{})
	if c, err := b.Dial(raft.ServerAddress(a.Addr().String()), time.Second); err == nil {
		c.Close()
		t.Fatal("two nodes without a secret connected")
	}
	if r := rs.next(t); r != ReasonProof {
		t.Fatalf("reason = %q, want %q", r, ReasonProof)
	}
}

// A silent connection times out, and does not stop a real peer from
// being accepted meanwhile.
func TestSilentStrangerDoesNotBlockAccept(t *testing.T) {
	rs := newRefusals()
	l := listen(t, Config{Secret: []byte("k"), HandshakeTimeout: 300 * time.Millisecond, Refused: rs.add})
	silent, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	got := acceptOne(l)
	peer := listen(t, Config{Secret: []byte("k")})
	c, err := peer.Dial(raft.ServerAddress(l.Addr().String()), time.Second)
	if err != nil {
		t.Fatalf("peer dial while a stranger is silent: %v", err)
	}
	defer c.Close()
	if s := <-got; s == nil {
		t.Fatal("peer not accepted")
	} else {
		s.Close()
	}
	if r := rs.next(t); r != ReasonTimeout {
		t.Fatalf("reason = %q, want %q", r, ReasonTimeout)
	}
}

func TestTooManyPendingRefusedAsBusy(t *testing.T) {
	rs := newRefusals()
	l := listen(t, Config{Secret: []byte("k"), MaxPending: 1, HandshakeTimeout: 5 * time.Second, Refused: rs.add})
	first, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	// The first connection holds the only slot until its handshake
	// times out; wait until the layer has taken it.
	deadline := time.Now().Add(5 * time.Second)
	for len(l.pending) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("first connection never pending")
		}
		time.Sleep(5 * time.Millisecond)
	}
	second, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if r := rs.next(t); r != ReasonBusy {
		t.Fatalf("reason = %q, want %q", r, ReasonBusy)
	}
}

// The planes' keys differ: a node-RPC dialer cannot enter the Raft port
// with the right secret.
func TestPlanesDoNotShareKeys(t *testing.T) {
	rs := newRefusals()
	l := listen(t, Config{Plane: "raft", Secret: []byte("k"), Refused: rs.add})
	d, err := NewDialer(Config{Plane: "rpc", Secret: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := d.DialContext(context.Background(), l.Addr().String()); err == nil {
		c.Close()
		t.Fatal("an rpc-plane dialer entered the raft port")
	}
	if r := rs.next(t); r != ReasonProof {
		t.Fatalf("reason = %q, want %q", r, ReasonProof)
	}
}

func TestLimiterSuppressesAndCounts(t *testing.T) {
	r := &limiter{every: 10 * time.Second}
	t0 := time.Unix(1000, 0)
	if _, ok := r.allow(t0); !ok {
		t.Fatal("first line suppressed")
	}
	for i := 1; i <= 3; i++ {
		if _, ok := r.allow(t0.Add(time.Duration(i) * time.Second)); ok {
			t.Fatalf("line %d inside the interval logged", i)
		}
	}
	n, ok := r.allow(t0.Add(11 * time.Second))
	if !ok || n != 3 {
		t.Fatalf("after the interval: ok=%v suppressed=%d, want true 3", ok, n)
	}
}
