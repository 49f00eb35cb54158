//go:build narad_netfault

package netfault

import (
	"net"
	"os"
	"sync"
	"time"
)

// Wrap returns conn faulted by the rules for addr, or conn itself when no
// rules file is configured (FileEnv unset).
func Wrap(conn net.Conn, addr string) net.Conn {
	if !watching() {
		return conn
	}
	return newConn(conn, addr)
}

// queued bounds the chunks held per direction: a writer past it waits,
// as it would on a full send buffer.
const queued = 256

// chunk is bytes held until at.
type chunk struct {
	b  []byte
	at time.Time
}

// conn holds each write and each read chunk until its release time (and
// past the end of a cut). Writes are released in order by a goroutine;
// reads by a goroutine that stamps what it reads from the network.
type conn struct {
	net.Conn
	addr string

	closed    chan struct{}
	closeOnce sync.Once

	wmu  sync.Mutex // one Write queues at a time, so chunks keep its order
	wq   chan chunk
	werr error // the first failed delivery; guarded by wmu
	wdl  deadline

	rq   chan chunk // closed after the network read fails; rerr then says why
	rerr error
	next *chunk // taken from rq, not yet released; guarded by rmu
	rest []byte // a released chunk's part not yet read; guarded by rmu
	rmu  sync.Mutex
	rdl  deadline
}

func newConn(c net.Conn, addr string) *conn {
	f := &conn{Conn: c, addr: addr, closed: make(chan struct{}),
		wq: make(chan chunk, queued), rq: make(chan chunk, queued)}
	f.wdl.init()
	f.rdl.init()
	go f.deliver()
	go f.receive()
	return f
}

// Write queues a copy of p for release after the rule's hold and returns:
// like a send buffer, it waits only when too much is queued already.
func (f *conn) Write(p []byte) (int, error) {
	f.wmu.Lock()
	defer f.wmu.Unlock()
	if f.werr != nil {
		return 0, f.werr
	}
	r, _ := rule(f.addr)
	// deliver takes chunks in queue order, so a chunk drawn a shorter
	// hold still waits for the one before it, as TCP's later bytes wait
	// for a retransmitted segment.
	c := chunk{b: append([]byte(nil), p...), at: time.Now().Add(r.hold())}
	for {
		t, moved := f.wdl.get()
		if expired(t) {
			return 0, os.ErrDeadlineExceeded
		}
		timer := timerFor(t)
		select {
		case f.wq <- c:
			timer.Stop()
			return len(p), nil
		case <-f.closed:
			timer.Stop()
			return 0, net.ErrClosed
		case <-moved:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// deliver writes queued chunks to the network at their release times,
// holding them while the link is cut.
func (f *conn) deliver() {
	var none deadline
	none.init()
	for {
		var c chunk
		select {
		case c = <-f.wq:
		case <-f.closed:
			return
		}
		if f.hold(c.at, &none) != nil {
			return
		}
		if _, err := f.Conn.Write(c.b); err != nil {
			// Close first: a Write waiting on a full queue holds wmu
			// and wakes only at the close.
			f.Close()
			f.wmu.Lock()
			f.werr = err
			f.wmu.Unlock()
			return
		}
	}
}

// receive reads the network and queues what it reads, stamped with its
// release time.
func (f *conn) receive() {
	for {
		buf := make([]byte, 32<<10)
		n, err := f.Conn.Read(buf)
		if n > 0 {
			r, _ := rule(f.addr)
			select {
			case f.rq <- chunk{b: buf[:n], at: time.Now().Add(r.hold())}:
			case <-f.closed:
				err = net.ErrClosed
			}
		}
		if err != nil {
			f.rerr = err
			close(f.rq)
			return
		}
	}
}

// Read returns bytes read from the network once released.
func (f *conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	f.rmu.Lock()
	defer f.rmu.Unlock()
	for len(f.rest) == 0 {
		if f.next == nil {
			c, err := f.take()
			if err != nil {
				return 0, err
			}
			f.next = &c
		}
		// A Read that gives up at its deadline leaves the chunk, still
		// held until its release time, to the next.
		if err := f.hold(f.next.at, &f.rdl); err != nil {
			return 0, err
		}
		f.rest, f.next = f.next.b, nil
	}
	n := copy(p, f.rest)
	f.rest = f.rest[n:]
	return n, nil
}

// take is the next chunk read from the network, waited for until the read
// deadline.
func (f *conn) take() (chunk, error) {
	for {
		t, moved := f.rdl.get()
		if expired(t) {
			return chunk{}, os.ErrDeadlineExceeded
		}
		timer := timerFor(t)
		select {
		case c, ok := <-f.rq:
			timer.Stop()
			if !ok {
				return chunk{}, f.rerr
			}
			return c, nil
		case <-f.closed:
			timer.Stop()
			return chunk{}, net.ErrClosed
		case <-moved:
		case <-timer.C:
		}
		timer.Stop()
	}
}

// hold waits until at and then while the link is cut, giving up at dl or
// when the connection closes.
func (f *conn) hold(at time.Time, dl *deadline) error {
	for {
		r, ruled := rule(f.addr)
		t, moved := dl.get()
		if expired(t) {
			return os.ErrDeadlineExceeded
		}
		wait := time.Until(at)
		if wait <= 0 && !r.Cut {
			return nil
		}
		timer := timerFor(t)
		due := time.NewTimer(max(wait, 0))
		if wait <= 0 {
			due.Stop() // cut: only a change of rules ends the wait
		}
		select {
		case <-due.C:
		case <-ruled:
		case <-moved:
		case <-timer.C:
		case <-f.closed:
		}
		due.Stop()
		timer.Stop()
		select {
		case <-f.closed:
			return net.ErrClosed
		default:
		}
	}
}

// Close closes the network connection; queued writes are dropped.
func (f *conn) Close() error {
	err := net.ErrClosed
	f.closeOnce.Do(func() {
		close(f.closed)
		err = f.Conn.Close()
	})
	return err
}

// Deadlines apply to the wrapper's waits; the network connection keeps
// none, since its reader and writer run ahead of the caller.
func (f *conn) SetDeadline(t time.Time) error {
	f.rdl.set(t)
	f.wdl.set(t)
	return nil
}

func (f *conn) SetReadDeadline(t time.Time) error  { f.rdl.set(t); return nil }
func (f *conn) SetWriteDeadline(t time.Time) error { f.wdl.set(t); return nil }
