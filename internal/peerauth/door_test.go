package peerauth

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"os"
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

// greet opens a raw connection to a listener and speaks the first two
// steps of the handshake by hand: the greeting with nonce nd, then the
// listener's nonce and proof, which it returns.
func greet(t *testing.T, addr string, nd []byte) (c net.Conn, nl, mac []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(append([]byte(greeting), nd...)); err != nil {
		t.Fatal(err)
	}
	reply := make([]byte, nonceSize+macSize)
	if _, err := io.ReadFull(c, reply); err != nil {
		t.Fatalf("listener's reply to a greeting: %v", err)
	}
	return c, reply[:nonceSize], reply[nonceSize:]
}

// mustNonce is a fresh nonce, drawn as the handshake draws its own.
func mustNonce(t *testing.T) []byte {
	t.Helper()
	n, err := nonce()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// randomMAC is random bytes the size of a proof.
func randomMAC(t *testing.T) []byte {
	t.Helper()
	b := make([]byte, macSize)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// flipped is b with its first bit changed: a nonce close to, but not, b.
func flipped(b []byte) []byte {
	out := append([]byte(nil), b...)
	out[0] ^= 1
	return out
}

// hungUp fails t unless the peer closed c without sending anything.
func hungUp(t *testing.T, c net.Conn) {
	t.Helper()
	n, err := c.Read(make([]byte, 1))
	if n > 0 || err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the connection was not closed without an answer: read %d bytes, err %v", n, err)
	}
}

// refusedBeforeAccept fails t unless the listener refused a connection
// for a wrong proof and Accept, started as got, handed nothing out.
func refusedBeforeAccept(t *testing.T, rs *refusals, got <-chan net.Conn) {
	t.Helper()
	select {
	case s := <-got:
		s.Close()
		t.Fatal("the listener handed a dialer with a made-up proof to the protocol above")
	case r := <-rs.ch:
		if r != ReasonProof {
			t.Fatalf("reason = %q, want %q", r, ReasonProof)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the made-up proof was neither refused nor accepted")
	}
}

// A dialer that holds the key but does not answer the listener's own
// challenge — a proof over other nonces, in the listener's role, or
// random bytes of the right size — is refused and never handed to the
// protocol above: the proof must bind this connection's listener nonce,
// else one made up in advance passes the handshake.
func TestListenerRefusesAMadeUpDialerProof(t *testing.T) {
	secret := []byte("cluster")
	key := DeriveKey(secret, "raft")
	random := randomMAC(t)
	cases := []struct {
		name  string
		proof func(nd, nl []byte) []byte
	}{
		{"over the dialer nonce alone", func(nd, _ []byte) []byte { return proof(key, "dialer", nd, nil) }},
		{"over another listener nonce", func(nd, nl []byte) []byte { return proof(key, "dialer", nd, flipped(nl)) }},
		{"over the nonces swapped", func(nd, nl []byte) []byte { return proof(key, "dialer", nl, nd) }},
		{"the listener's own proof sent back", func(nd, nl []byte) []byte { return proof(key, "listener", nd, nl) }},
		{"random bytes", func(_, _ []byte) []byte { return random }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs := newRefusals()
			l := listen(t, Config{Secret: secret, Refused: rs.add})
			got := acceptOne(l)
			nd := mustNonce(t)
			c, nl, _ := greet(t, l.Addr().String(), nd)
			// The proof, then what a Raft dialer would send next.
			if _, err := c.Write(append(tc.proof(nd, nl), "raft rpc"...)); err != nil {
				t.Fatal(err)
			}
			refusedBeforeAccept(t, rs, got)
			hungUp(t, c)
		})
	}
}

// A handshake recorded off the wire does not open a second connection:
// the same greeting gets a fresh listener nonce, so the proof that let
// the first connection in is a made-up one for the second.
func TestListenerRefusesAReplayedDialerProof(t *testing.T) {
	secret := []byte("cluster")
	key := DeriveKey(secret, "raft")
	rs := newRefusals()
	l := listen(t, Config{Secret: secret, Refused: rs.add})
	got := acceptOne(l)
	nd := mustNonce(t)
	c, nl, _ := greet(t, l.Addr().String(), nd)
	recorded := proof(key, "dialer", nd, nl)
	if _, err := c.Write(recorded); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		s.Close()
	case r := <-rs.ch:
		t.Fatalf("the first, honest connection was refused (%s)", r)
	case <-time.After(10 * time.Second):
		t.Fatal("the first, honest connection was neither refused nor accepted")
	}

	got = acceptOne(l)
	c, _, _ = greet(t, l.Addr().String(), nd)
	if _, err := c.Write(append(recorded, "raft rpc"...)); err != nil {
		t.Fatal(err)
	}
	refusedBeforeAccept(t, rs, got)
	hungUp(t, c)
}

// The same for a dialer: a listener that holds the key but does not
// answer this dialer's challenge is refused, and the dialer sends it no
// proof of its own (so it has nothing to relay to the real listener).
func TestDialerRefusesAMadeUpListenerProof(t *testing.T) {
	secret := []byte("cluster")
	key := DeriveKey(secret, "raft")
	// A real listener's answer to another greeting, for the replay.
	real := listen(t, Config{Secret: secret})
	_, oldNL, oldMAC := greet(t, real.Addr().String(), mustNonce(t))
	random := randomMAC(t)
	cases := []struct {
		name string
		// reply is the impostor's answer to greeting nonce nd; nl is a
		// fresh nonce it may use.
		reply func(nd, nl []byte) (nonce, mac []byte)
	}{
		{"over the listener nonce alone", func(_, nl []byte) ([]byte, []byte) {
			return nl, proof(key, "listener", nil, nl)
		}},
		{"over another dialer nonce", func(nd, nl []byte) ([]byte, []byte) {
			return nl, proof(key, "listener", flipped(nd), nl)
		}},
		{"over another listener nonce than sent", func(nd, nl []byte) ([]byte, []byte) {
			return nl, proof(key, "listener", nd, flipped(nl))
		}},
		{"in the dialer's role", func(nd, nl []byte) ([]byte, []byte) {
			return nl, proof(key, "dialer", nd, nl)
		}},
		{"replayed from another connection", func(_, _ []byte) ([]byte, []byte) {
			return oldNL, oldMAC
		}},
		{"random bytes", func(_, nl []byte) ([]byte, []byte) {
			return nl, random
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			nl := mustNonce(t)
			// after is what the dialer sent once the made-up reply was
			// out, up to its hang-up.
			after := make(chan []byte, 1)
			go func() {
				defer close(after)
				c, err := ln.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
					return
				}
				hello := make([]byte, len(greeting)+nonceSize)
				if _, err := io.ReadFull(c, hello); err != nil {
					return
				}
				nonce, mac := tc.reply(hello[len(greeting):], nl)
				if _, err := c.Write(append(nonce, mac...)); err != nil {
					return
				}
				rest, _ := io.ReadAll(c)
				after <- rest
			}()
			d, err := NewDialer(Config{Plane: "raft", Secret: secret})
			if err != nil {
				t.Fatal(err)
			}
			if c, err := d.DialContext(context.Background(), ln.Addr().String()); err == nil {
				c.Close()
				t.Fatal("the dialer accepted a listener with a made-up proof")
			}
			rest, ok := <-after
			if !ok {
				t.Fatal("the impostor never got to send its reply")
			}
			if len(rest) > 0 {
				t.Fatalf("the dialer sent %d bytes to a listener that did not prove itself", len(rest))
			}
		})
	}
}
