package rpc

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/narad-io/narad/internal/apierr"
	nodepb "github.com/narad-io/narad/internal/rpc/proto"
)

// The caller's side of framed connections (framed.go). A pool keeps the
// idle connections to each node; a call takes one (or opens one), makes
// its one round trip on it and puts it back, so concurrent calls to a node
// use as many connections as there are calls at once, and a follower's
// fetch for each partition finds one waiting. A connection that failed in
// any way, or whose call ran out of budget or was cancelled, is closed,
// never reused.
//
// A node's connections are bounded (maxFramedPerNode): a call made while
// that many are busy goes through gRPC, which multiplexes, so a burst of
// calls never opens a connection per call only to close it after. A node
// whose opening does not answer framedHello (a release before framed
// connections) is called through gRPC for streamRetryOld, then asked
// again. Connecting behaves as gRPC's does: a dial gets at most
// DefaultTimeout, and after one failed, calls that need a new connection
// fail at once (503, undelivered) for a wait that grows from 100 ms to
// 1 s, so a node that is down or cut off costs its callers no connect
// each.

// maxFramedPerNode bounds a node's framed connections, idle or in a call.
const maxFramedPerNode = 128

// framedConn is one open framed connection.
type framedConn struct {
	addr   string
	c      net.Conn
	r      *frameReader
	w      frameWriter
	usedAt time.Time
	spoilt bool // ctx ended during a call: its deadline may be in the past
}

// framedConns are a pool's framed connections and the nodes without them.
type framedConns struct {
	mu      sync.Mutex
	idle    map[string][]*framedConn // by node address, the last used last
	open    map[*framedConn]struct{} // every connection, idle or in a call
	count   map[string]int           // by node address: open connections and dials under way
	oldAt   map[string]time.Time     // addr → when its opening was not answered
	down    map[string]redial        // addr → its failed dials, while they fail
	sweptAt time.Time
	closed  bool
	max     int           // maxFramedPerNode unless set (tests)
	redial  time.Duration // firstRedial unless set (tests)
	off     bool          // tests: call through gRPC only
}

// redial is how long after a failed dial the next waits: from
// firstRedial, 1.6 times longer after each failure, up to
// unreachableRetry (gRPC's reconnect backoff, pool.go). Meanwhile calls
// that need a new connection fail at once, as a gRPC call on a
// connection in reconnect backoff does, instead of each waiting out a
// connect to a node that is down or cut off.
type redial struct {
	until time.Time
	wait  time.Duration
	err   string
}

const firstRedial = 100 * time.Millisecond

// take returns an idle connection to addr; else, when addr may have one
// more, dial (a slot is then held for it: opened fills it, release or
// dialFailed frees it); else neither, and the call goes through gRPC.
// down is set instead when addr's last dial failed within its backoff.
// Connections idle past streamIdle are closed, looked for at most once
// per streamIdle.
func (fc *framedConns) take(addr string, now time.Time) (c *framedConn, dial bool, down *redial) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.off || fc.closed {
		return nil, false, nil
	}
	if at, ok := fc.oldAt[addr]; ok {
		if now.Sub(at) < streamRetryOld {
			return nil, false, nil
		}
		delete(fc.oldAt, addr)
	}
	if now.Sub(fc.sweptAt) >= streamIdle {
		fc.sweptAt = now
		for a, cs := range fc.idle {
			kept := cs[:0]
			for _, c := range cs {
				if now.Sub(c.usedAt) >= streamIdle {
					fc.forgetLocked(c)
				} else {
					kept = append(kept, c)
				}
			}
			fc.idle[a] = kept
		}
	}
	if cs := fc.idle[addr]; len(cs) > 0 {
		c = cs[len(cs)-1]
		fc.idle[addr] = cs[:len(cs)-1]
		return c, false, nil
	}
	if b, ok := fc.down[addr]; ok && now.Before(b.until) {
		return nil, false, &b
	}
	limit := fc.max
	if limit <= 0 {
		limit = maxFramedPerNode
	}
	if fc.count[addr] >= limit {
		return nil, false, nil
	}
	if fc.count == nil {
		fc.count = map[string]int{}
	}
	fc.count[addr]++
	return nil, true, nil
}

// release frees the slot of a dial that made no connection, for a
// reason that is not the node's (its answer was not framed, or refused).
func (fc *framedConns) release(addr string) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.count[addr]--
}

// dialFailed frees the slot of a dial that could not reach its node, and
// holds the next dial back.
func (fc *framedConns) dialFailed(addr string, now time.Time, err error) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.count[addr]--
	if fc.down == nil {
		fc.down = map[string]redial{}
	}
	first := fc.redial
	if first <= 0 {
		first = firstRedial
	}
	b := fc.down[addr]
	b.wait = min(max(b.wait*8/5, first), max(unreachableRetry, first))
	b.until, b.err = now.Add(b.wait), err.Error()
	fc.down[addr] = b
}

// opened registers a new connection in its slot; false (and it is
// closed) after closeAll.
func (fc *framedConns) opened(c *framedConn) bool {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.closed {
		c.c.Close()
		fc.count[c.addr]--
		return false
	}
	if fc.open == nil {
		fc.open = map[*framedConn]struct{}{}
	}
	fc.open[c] = struct{}{}
	delete(fc.down, c.addr)
	return true
}

// put returns a connection whose call was answered whole.
func (fc *framedConns) put(c *framedConn, now time.Time) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.closed {
		fc.forgetLocked(c)
		return
	}
	if fc.idle == nil {
		fc.idle = map[string][]*framedConn{}
	}
	c.usedAt = now
	fc.idle[c.addr] = append(fc.idle[c.addr], c)
}

// discard closes a connection that is not to be reused.
func (fc *framedConns) discard(c *framedConn) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.forgetLocked(c)
}

// forgetLocked closes c and frees its slot.
func (fc *framedConns) forgetLocked(c *framedConn) {
	c.c.Close()
	if _, ok := fc.open[c]; ok {
		delete(fc.open, c)
		fc.count[c.addr]--
	}
}

// markOld records that addr did not answer a framed opening.
func (fc *framedConns) markOld(addr string, now time.Time) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if fc.oldAt == nil {
		fc.oldAt = map[string]time.Time{}
	}
	fc.oldAt[addr] = now
}

// closeAll closes every connection, cutting off the calls on them.
func (fc *framedConns) closeAll() {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	fc.closed = true
	for c := range fc.open {
		c.c.Close()
	}
	fc.open, fc.idle = nil, nil
}

// CallFramed sets whether Commit, Fetch and Forward go over framed
// connections (the default) or through gRPC only; call it before the
// pool's first call.
func (p *Pool) CallFramed(on bool) {
	p.framed.mu.Lock()
	defer p.framed.mu.Unlock()
	p.framed.off = !on
}

// CallsFramed reports whether the pool calls over framed connections.
func (p *Pool) CallsFramed() bool {
	p.framed.mu.Lock()
	defer p.framed.mu.Unlock()
	return !p.framed.off
}

// errNotFramed is a node that did not answer the framed opening.
var errNotFramed = errors.New("rpc: the node does not serve framed connections")

// callFramed makes one call to addr on a framed connection within
// timeout (or ctx's earlier deadline), decoding the answer into out. ok is
// false when addr is to be called through gRPC instead; nothing was sent
// then. Errors are a Pool method's: the handler's refusal, or a 503 when
// the node could not be reached or did not answer in time, marked
// undelivered when no connection could be made.
func (p *Pool) callFramed(ctx context.Context, addr, method string, op byte, timeout time.Duration, in, out proto.Message) (err error, ok bool) {
	deadline := time.Now().Add(timeout)
	if dl, has := ctx.Deadline(); has && dl.Before(deadline) {
		deadline = dl
	}
	for attempt := 0; ; attempt++ {
		c, dial, down := p.framed.take(addr, time.Now())
		if down != nil {
			return undelivered{apierr.Unavailable(unreachableRetry, "node %s unreachable: the last connection attempt failed %v ago: %s",
				addr, (down.wait - time.Until(down.until)).Round(time.Millisecond), down.err)}, true
		}
		if c == nil && !dial {
			return nil, false
		}
		reused := c != nil
		if dial {
			if c, err = p.openFramed(ctx, addr, deadline); err != nil {
				if errors.Is(err, errNotFramed) {
					p.framed.markOld(addr, time.Now())
					return nil, false
				}
				return err, true
			}
		}
		answered, err := c.roundTrip(ctx, op, deadline, in, out)
		if answered {
			// The answer, or the handler's refusal: the connection is
			// still good unless ctx ended meanwhile.
			if c.spoilt {
				p.framed.discard(c)
			} else {
				c.c.SetDeadline(time.Time{})
				p.framed.put(c, time.Now())
			}
			return err, true
		}
		p.framed.discard(c)
		// A connection that waited idle may have been closed by its node
		// meanwhile (a restart, a stop): once, the call goes again on a
		// new one. Both operations bear a repeat (a commit that did land
		// is a duplicate the cluster accepts, as after any 503).
		if reused && attempt == 0 && connGone(err) && ctx.Err() == nil && time.Now().Before(deadline) {
			continue
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return apierr.Unavailable(unreachableRetry, "node %s unreachable: %s: %v", addr, method, err), true
	}
}

// openFramed dials addr through the peer handshake and makes the framed
// opening, then TLS when the pool has it, in the slot take held.
func (p *Pool) openFramed(ctx context.Context, addr string, deadline time.Time) (*framedConn, error) {
	// Connecting gets at most DefaultTimeout of the call's budget, as a
	// gRPC connection attempt does (MinConnectTimeout, pool.go).
	dialBy := time.Now().Add(DefaultTimeout)
	if deadline.Before(dialBy) {
		dialBy = deadline
	}
	dctx, cancel := context.WithDeadline(ctx, dialBy)
	defer cancel()
	raw, err := p.door.DialContext(dctx, addr)
	if err != nil {
		p.framed.dialFailed(addr, time.Now(), err)
		// Nothing was sent: the call may go elsewhere.
		return nil, undelivered{apierr.Unavailable(unreachableRetry, "node %s unreachable: %v", addr, err)}
	}
	conn, err := p.opening(dctx, raw, addr, dialBy)
	if err != nil {
		raw.Close()
		var u undelivered
		if errors.As(err, &u) {
			p.framed.dialFailed(addr, time.Now(), err)
		} else {
			p.framed.release(addr)
		}
		return nil, err
	}
	c := &framedConn{addr: addr, c: conn, r: newFrameReader(conn), w: frameWriter{w: conn}}
	if !p.framed.opened(c) {
		return nil, apierr.Unavailable(unreachableRetry, "node %s unreachable: this node's rpc pool is closed", addr)
	}
	return c, nil
}

func (p *Pool) opening(ctx context.Context, raw net.Conn, addr string, deadline time.Time) (net.Conn, error) {
	raw.SetDeadline(deadline)
	if _, err := raw.Write([]byte(framedHello)); err != nil {
		return nil, undelivered{apierr.Unavailable(unreachableRetry, "node %s unreachable: %v", addr, err)}
	}
	var answer [len(framedHello)]byte
	if _, err := io.ReadFull(raw, answer[:]); err != nil {
		if isTimeout(err) {
			return nil, undelivered{apierr.Unavailable(unreachableRetry, "node %s unreachable: no answer to the opening: %v", addr, err)}
		}
		return nil, errNotFramed // an older node's gRPC hung up on the opening
	}
	if string(answer[:]) != framedHello {
		return nil, errNotFramed // an older node's gRPC answered in HTTP/2
	}
	conn := raw
	if p.tlsConf != nil {
		cfg := p.tlsConf.Clone()
		if cfg.ServerName == "" {
			if host, _, err := net.SplitHostPort(addr); err == nil {
				cfg.ServerName = host
			}
		}
		tc := tls.Client(raw, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, undelivered{apierr.Unavailable(unreachableRetry, "node %s unreachable: TLS: %v", addr, err)}
		}
		conn = tc
	}
	proof := secretProof(p.secret)
	if _, err := conn.Write(proof[:]); err != nil {
		return nil, undelivered{apierr.Unavailable(unreachableRetry, "node %s unreachable: %v", addr, err)}
	}
	if _, err := io.ReadFull(conn, answer[:]); err != nil {
		return nil, undelivered{apierr.Unavailable(unreachableRetry, "node %s unreachable: no answer to the opening: %v", addr, err)}
	}
	if string(answer[:]) != framedHello {
		return nil, apierr.New(http.StatusUnauthorized, "cluster secret refused by node %s", addr)
	}
	conn.SetDeadline(time.Time{})
	return conn, nil
}

// roundTrip sends one request and reads its answer into out before
// deadline or ctx's end. answered is true when the node's answer arrived
// whole (err is then the handler's refusal, or nil); c.spoilt, when ctx
// ended meanwhile, so the connection is not to be reused.
func (c *framedConn) roundTrip(ctx context.Context, op byte, deadline time.Time, in, out proto.Message) (answered bool, err error) {
	c.c.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { c.c.SetDeadline(time.Unix(1, 0)) })
	budget := max(time.Until(deadline).Milliseconds(), 1)
	err = c.w.write(op, uint32(min(budget, 1<<32-1)), in)
	var f frame
	if err == nil {
		f, err = c.r.read()
	}
	if !stop() {
		// ctx ended, maybe as the answer came: an answer read whole
		// stands, but the connection's deadline is spoilt.
		c.spoilt = true
	}
	if err != nil {
		return false, err
	}
	switch f.kind {
	case answerOK:
		if err := proto.Unmarshal(f.msg, out); err != nil {
			return true, apierr.New(http.StatusInternalServerError, "framed answer: %v", err)
		}
		return true, nil
	case answerError:
		e := &nodepb.Error{}
		if err := proto.Unmarshal(f.msg, e); err != nil {
			return true, apierr.New(http.StatusInternalServerError, "framed answer: %v", err)
		}
		return true, fromDetail(e)
	}
	c.spoilt = true
	return true, apierr.New(http.StatusInternalServerError, "framed answer of unknown kind %d", f.kind)
}

// connGone reports an error of a connection its node closed (or reset).
func connGone(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
