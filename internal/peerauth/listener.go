package peerauth

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"
)

// Config configures a Listener or a Dialer.
type Config struct {
	// Plane names what the port carries ("raft", "rpc"): it labels the
	// key, so the planes' keys differ, and the refusal log lines.
	Plane string
	// Secret is the cluster secret. Empty: a random key of this process,
	// so no other process can connect (a node with no peers).
	Secret []byte
	// TLSServer (accepting) and TLSClient (dialing), when set, wrap every
	// connection in mutual TLS before the handshake.
	TLSServer, TLSClient *tls.Config
	// HandshakeTimeout bounds a handshake, each way. Zero: 5 s.
	HandshakeTimeout time.Duration
	// MaxPending bounds handshakes in progress on a listener. Zero: 64.
	MaxPending int
	// Refused is called once per refused incoming connection with its
	// reason (a Reason* constant). May be nil.
	Refused func(reason string)
	// Logger receives the rate-limited refusal lines. Nil discards.
	Logger *slog.Logger
	// LogEvery is the least time between two refusal log lines. Zero: 10 s.
	LogEvery time.Duration
}

func (c Config) withDefaults() (Config, []byte, error) {
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = 5 * time.Second
	}
	if c.MaxPending <= 0 {
		c.MaxPending = 64
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.LogEvery <= 0 {
		c.LogEvery = 10 * time.Second
	}
	secret := c.Secret
	if len(secret) == 0 {
		secret = make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return c, nil, fmt.Errorf("peerauth: random key: %w", err)
		}
	}
	return c, DeriveKey(secret, c.Plane), nil
}

// Listener is a net.Listener whose Accept returns only authenticated
// connections.
type Listener struct {
	ln      net.Listener
	cfg     Config
	key     []byte
	ready   chan net.Conn
	pending chan struct{} // a slot per handshake in progress
	done    chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
	logs    *limiter
}

var _ net.Listener = (*Listener)(nil)

// Listen binds bind and starts accepting.
func Listen(bind string, cfg Config) (*Listener, error) {
	ln, err := net.Listen("tcp", bind)
	if err != nil {
		return nil, err
	}
	l, err := Wrap(ln, cfg)
	if err != nil {
		ln.Close()
	}
	return l, err
}

// Wrap puts the peer handshake in front of an already bound listener; the
// Listener owns ln from then on.
func Wrap(ln net.Listener, cfg Config) (*Listener, error) {
	cfg, key, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	l := &Listener{ln: ln, cfg: cfg, key: key,
		ready:   make(chan net.Conn),
		pending: make(chan struct{}, cfg.MaxPending),
		done:    make(chan struct{}),
		logs:    &limiter{every: cfg.LogEvery}}
	l.wg.Add(1)
	go l.acceptLoop()
	return l, nil
}

func (l *Listener) acceptLoop() {
	defer l.wg.Done()
	for {
		conn, err := l.ln.Accept()
		if err != nil {
			select {
			case <-l.done:
				return
			default:
			}
			// A transient accept error (EMFILE): back off briefly
			// rather than spin.
			select {
			case <-l.done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		select {
		case l.pending <- struct{}{}:
		default:
			conn.Close()
			l.refuse(conn, ReasonBusy, errors.New("too many handshakes pending"))
			continue
		}
		l.wg.Add(1)
		go l.admit(conn)
	}
}

// admit authenticates one accepted connection and hands it to Accept.
func (l *Listener) admit(raw net.Conn) {
	defer l.wg.Done()
	defer func() { <-l.pending }()
	conn, reason, err := l.serverHandshake(raw)
	if err != nil {
		raw.Close()
		l.refuse(raw, reason, err)
		return
	}
	select {
	case l.ready <- conn:
	case <-l.done:
		conn.Close()
	}
}

func (l *Listener) serverHandshake(raw net.Conn) (net.Conn, string, error) {
	deadline := time.Now().Add(l.cfg.HandshakeTimeout)
	if err := raw.SetDeadline(deadline); err != nil {
		return nil, ReasonTimeout, err
	}
	conn := raw
	if l.cfg.TLSServer != nil {
		tc := tls.Server(raw, l.cfg.TLSServer)
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			return nil, reasonOf(err, ReasonTLS), err
		}
		conn = tc
	}
	if reason, err := listenerSide(conn, l.key); err != nil {
		return nil, reasonOf(err, reason), err
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		return nil, ReasonTimeout, err
	}
	return conn, "", nil
}

// reasonOf classifies a handshake failure: timeouts first, else the
// reason the failing step gave.
func reasonOf(err error, otherwise string) string {
	var ne net.Error
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) ||
		(errors.As(err, &ne) && ne.Timeout()) {
		return ReasonTimeout
	}
	return otherwise
}

func (l *Listener) refuse(conn net.Conn, reason string, err error) {
	if l.cfg.Refused != nil {
		l.cfg.Refused(reason)
	}
	if n, ok := l.logs.allow(time.Now()); ok {
		l.cfg.Logger.Warn("refused a connection to the cluster port: it did not prove it belongs to the cluster "+
			"(check NARAD_CLUSTER_SECRET and the cluster TLS settings on the dialing node)",
			"plane", l.cfg.Plane, "remote", conn.RemoteAddr().String(), "reason", reason, "err", err,
			"refused_since_last_line", n)
	}
}

// Accept returns the next authenticated connection.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ready:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops accepting and waits for pending handshakes to end.
func (l *Listener) Close() error {
	var err error
	l.once.Do(func() {
		close(l.done)
		err = l.ln.Close()
		l.wg.Wait()
	})
	return err
}

// Addr is the bound address.
func (l *Listener) Addr() net.Addr { return l.ln.Addr() }

// limiter lets one log line through per interval and counts the rest.
type limiter struct {
	mu         sync.Mutex
	every      time.Duration
	last       time.Time
	suppressed int
}

// allow reports whether to log now, and how many were suppressed since
// the last line that was.
func (r *limiter) allow(now time.Time) (int, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.last.IsZero() && now.Sub(r.last) < r.every {
		r.suppressed++
		return 0, false
	}
	n := r.suppressed
	r.last, r.suppressed = now, 0
	return n, true
}
