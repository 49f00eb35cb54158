package rpc

import (
	"context"
	"crypto/subtle"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/narad-io/narad/internal/apierr"
)

const (
	// openingWait bounds how long an authenticated connection may take to
	// send its first bytes (gRPC's preface, a TLS hello or framedHello,
	// all sent at once by a caller).
	openingWait = 10 * time.Second
	// framedIdle closes a framed connection that sent no request for this
	// long (its caller closes it after streamIdle; this one is for a
	// caller that vanished without closing).
	framedIdle = 2*streamIdle + time.Minute
)

// framedServer serves the framed connections of one Server (framed.go)
// and hands the node port's other connections to gRPC.
type framedServer struct {
	svc  *service
	want [32]byte    // secretProof of the cluster secret
	tls  *tls.Config // the server's mutual TLS, when set
	log  *slog.Logger

	base   context.Context // every handler's, cancelled when Stop gives up waiting
	cancel context.CancelFunc

	mu      sync.Mutex
	conns   map[net.Conn]bool // the connections not handed to gRPC; true while serving a call
	closing bool
	wg      sync.WaitGroup
}

func newFramedServer(svc *service, want [32]byte, tc *tls.Config, log *slog.Logger) *framedServer {
	fs := &framedServer{svc: svc, want: want, tls: tc, log: log, conns: map[net.Conn]bool{}}
	fs.base, fs.cancel = context.WithCancel(context.Background())
	return fs
}

// portMux is the listener gRPC serves: the authenticated connections
// that did not open as framed ones.
type portMux struct {
	authed net.Listener // the peer handshake's listener: authenticated connections
	fs     *framedServer
	grpc   chan net.Conn
	done   chan struct{}
	once   sync.Once
}

// listen starts sorting authed's connections; gRPC serves the returned
// listener.
func (fs *framedServer) listen(authed net.Listener) *portMux {
	m := &portMux{authed: authed, fs: fs, grpc: make(chan net.Conn), done: make(chan struct{})}
	fs.wg.Add(1)
	go m.acceptLoop()
	return m
}

func (m *portMux) acceptLoop() {
	defer m.fs.wg.Done()
	for {
		c, err := m.authed.Accept()
		if err != nil {
			m.Close()
			return
		}
		if !m.fs.track(c) {
			c.Close()
			continue
		}
		m.fs.wg.Add(1)
		go m.sort(c)
	}
}

// sort reads a connection's opening: framed connections are served
// here, every other one is gRPC's, its first bytes put back.
func (m *portMux) sort(c net.Conn) {
	defer m.fs.wg.Done()
	var head [len(framedHello)]byte
	c.SetDeadline(time.Now().Add(openingWait))
	if _, err := io.ReadFull(c, head[:]); err != nil {
		m.fs.drop(c)
		return
	}
	if string(head[:]) == framedHello {
		m.fs.serve(c)
		return
	}
	c.SetDeadline(time.Time{})
	m.fs.untrack(c)
	select {
	case m.grpc <- &prefixedConn{Conn: c, prefix: append([]byte(nil), head[:]...)}:
	case <-m.done:
		c.Close()
	}
}

func (m *portMux) Accept() (net.Conn, error) {
	select {
	case c := <-m.grpc:
		return c, nil
	case <-m.done:
		return nil, net.ErrClosed
	}
}

func (m *portMux) Close() error {
	m.once.Do(func() {
		close(m.done)
		m.authed.Close()
	})
	return nil
}

func (m *portMux) Addr() net.Addr { return m.authed.Addr() }

// prefixedConn is a connection whose first bytes were already read.
type prefixedConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixedConn) Read(b []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(b, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}

// serve finishes a framed connection's opening and answers its calls,
// one at a time, until the caller closes it or the server stops.
func (fs *framedServer) serve(raw net.Conn) {
	defer fs.drop(raw)
	if _, err := raw.Write([]byte(framedHello)); err != nil {
		return
	}
	c := raw
	if fs.tls != nil {
		tc := tls.Server(raw, fs.tls)
		if err := tc.Handshake(); err != nil { // within openingWait
			return
		}
		c = tc
	}
	var proof [32]byte
	if _, err := io.ReadFull(c, proof[:]); err != nil {
		return
	}
	if subtle.ConstantTimeCompare(proof[:], fs.want[:]) != 1 {
		c.Write([]byte(framedRefused))
		return
	}
	if _, err := c.Write([]byte(framedHello)); err != nil {
		return
	}
	fr, fw := newFrameReader(c), &frameWriter{w: c}
	for {
		c.SetDeadline(time.Now().Add(framedIdle))
		f, err := fr.read()
		if err != nil {
			return
		}
		if !fs.begin(raw) {
			return // stopping: the call is not started, the caller sees the connection end
		}
		// The answer is written within the call's budget and framedIdle
		// more, so a caller that vanished cannot hold the writer forever.
		c.SetDeadline(time.Now().Add(time.Duration(f.aux)*time.Millisecond + framedIdle))
		ctx, cancel := context.WithCancel(fs.base)
		var gone func() bool
		if f.kind != opFetch {
			gone = watch(c, fr, cancel)
		}
		kind, ans := fs.call(ctx, f)
		cancel()
		if gone != nil && gone() {
			fs.end(raw)
			return
		}
		err = fw.write(kind, 0, ans)
		if !fs.end(raw) || err != nil {
			return
		}
	}
}

// watch cancels a commit's or a forwarded request's handler when its
// caller hangs up (or breaks the protocol by sending during a call), as
// gRPC cancels a call whose caller went away: a forwarded consume must
// not lease records for a client that is no longer there, and a commit
// its caller gave up on must not wait out the rest of its 30 s budget
// for copies that are cut off. A follower's fetch is not watched: it ends
// by its long-poll wait (500 ms). The returned function ends the watch
// and reports whether the connection is done for.
func watch(c net.Conn, fr *frameReader, cancel context.CancelFunc) (gone func() bool) {
	done := make(chan bool, 1)
	go func() {
		_, err := fr.r.ReadByte()
		hungUp := err == nil || !isTimeout(err)
		if hungUp {
			cancel()
		}
		done <- hungUp
	}()
	return func() bool {
		c.SetReadDeadline(time.Unix(1, 0)) // ends the read, if the caller did not
		return <-done
	}
}

// call runs one request's handler under the budget it carries and
// returns the answer's kind and message. A handler's failure is answered
// as a gRPC call's is (Server.finish, Server.recoverInto): its refusal
// verbatim, anything else a logged 500.
func (fs *framedServer) call(ctx context.Context, f frame) (kind byte, ans proto.Message) {
	method := "Framed"
	budget := time.Duration(f.aux) * time.Millisecond
	if budget <= 0 {
		budget = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	var err error
	func() {
		defer func() {
			if p := recover(); p != nil {
				fs.log.Error("node rpc handler panicked", "method", method, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		switch f.kind {
		case opCommit:
			method = "Commit"
			ans, err = decodeAndServe(ctx, "commit", f.msg, fs.svc.Commit)
		case opFetch:
			method = "Fetch"
			ans, err = decodeAndServe(ctx, "fetch", f.msg, fs.svc.fetch)
		case opForward:
			method = "Forward"
			ans, err = decodeAndServe(ctx, "forward", f.msg, fs.svc.Forward)
		default:
			err = apierr.New(http.StatusNotImplemented, "unknown framed operation %d", f.kind)
		}
	}()
	if err != nil {
		if !isClientErr(err) && ctx.Err() != nil {
			// Out of budget: the caller has given up, and answers 503
			// itself (as a gRPC call past its deadline does).
			err = apierr.Unavailable(unreachableRetry, "%s: %v", method, ctx.Err())
		}
		fs.svc.failed(method, err)
		return answerError, errorDetail(err)
	}
	return answerOK, ans
}

// decodeAndServe decodes msg as a request of type R and serves it with
// h; a request that does not decode is refused (400) before h sees it.
func decodeAndServe[R any, PR interface {
	*R
	proto.Message
}, A proto.Message](ctx context.Context, op string, msg []byte, h func(context.Context, PR) (A, error)) (proto.Message, error) {
	req := PR(new(R))
	if err := proto.Unmarshal(msg, req); err != nil {
		return nil, apierr.BadRequest("%s: undecodable request: %v", op, err)
	}
	return h(ctx, req)
}

// track notes an accepted connection; false once stopping.
func (fs *framedServer) track(c net.Conn) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.closing {
		return false
	}
	fs.conns[c] = false
	return true
}

// untrack forgets a connection handed to gRPC.
func (fs *framedServer) untrack(c net.Conn) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	delete(fs.conns, c)
}

// drop closes and forgets a connection.
func (fs *framedServer) drop(c net.Conn) {
	c.Close()
	fs.untrack(c)
}

// begin marks a connection as serving a call; false once stopping.
func (fs *framedServer) begin(c net.Conn) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.closing {
		return false
	}
	fs.conns[c] = true
	return true
}

// end marks a connection's call as answered; false once stopping.
func (fs *framedServer) end(c net.Conn) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.conns[c] = false
	return !fs.closing
}

// stop closes the connections waiting for a request and waits, at most
// grace, for the calls in progress to be answered; then it cancels them
// and closes everything. When it returns no connection is left open and
// no goroutine of the server is running.
func (fs *framedServer) stop(grace time.Duration) {
	fs.mu.Lock()
	fs.closing = true
	for c, busy := range fs.conns {
		if !busy {
			c.Close()
		}
	}
	fs.mu.Unlock()
	done := make(chan struct{})
	go func() {
		fs.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		fs.cancel()
		fs.mu.Lock()
		for c := range fs.conns {
			c.Close()
		}
		fs.mu.Unlock()
		<-done
	}
	fs.cancel()
}
