//go:build narad_netfault

package netfault

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pair is a wrapped dialled connection to addr key and the listener's end.
func pair(t *testing.T, key string) (*conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv := <-accepted
	if srv == nil {
		t.Fatal("accept failed")
	}
	f := newConn(raw, key)
	t.Cleanup(func() { f.Close(); srv.Close() })
	return f, srv
}

func rules(t *testing.T, m map[string]Rule) {
	t.Helper()
	set(m)
	t.Cleanup(func() { set(nil) })
}

// Delays and losses drawn per write never reorder bytes, either way.
func TestOrderPreservedUnderDelayAndLoss(t *testing.T) {
	rules(t, map[string]Rule{"peer": {DelayMinMS: 0, DelayMaxMS: 20, Loss: 0.2}})
	f, srv := pair(t, "peer")
	const n = 200
	go func() {
		for i := range n {
			fmt.Fprintf(f, "w%d\n", i)
			fmt.Fprintf(srv, "r%d\n", i)
		}
	}()
	check := func(c net.Conn, prefix string) {
		sc := bufio.NewScanner(c)
		for i := range n {
			if !sc.Scan() {
				t.Fatalf("%s: stream ended at %d: %v", prefix, i, sc.Err())
			}
			if want := fmt.Sprintf("%s%d", prefix, i); sc.Text() != want {
				t.Fatalf("read %q, want %q: bytes reordered", sc.Text(), want)
			}
		}
	}
	check(srv, "w") // written through the wrapper
	check(f, "r")   // read through the wrapper
}

// A write reaches the peer no sooner than the delay, and a round trip
// sees the delay twice (the write's and the read's); yet Write returns
// before its bytes are delivered, so delays do not add up per write.
func TestDelayAppliedBothWaysWithoutBlockingWrites(t *testing.T) {
	const delay = 300 * time.Millisecond
	rules(t, map[string]Rule{"peer": {DelayMinMS: 300, DelayMaxMS: 300}})
	f, srv := pair(t, "peer")
	firstByte := make(chan time.Time, 1)
	go func() {
		buf := make([]byte, 1)
		if _, err := io.ReadFull(srv, buf); err == nil {
			firstByte <- time.Now()
		}
		// Echo the rest of the line back.
		rest, _ := bufio.NewReader(srv).ReadString('\n')
		srv.Write(append(buf, rest...))
	}()
	start := time.Now()
	for range 10 {
		if _, err := f.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	f.Write([]byte("\n"))
	written := time.Now()
	arrived := <-firstByte
	if !arrived.After(written) {
		t.Errorf("the peer had bytes before the writes returned: Write waited for delivery")
	}
	if got := arrived.Sub(start); got < delay {
		t.Errorf("first byte arrived %v after the write; want >= %v", got, delay)
	}
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil || line != "xxxxxxxxxx\n" {
		t.Fatalf("echo %q, %v", line, err)
	}
	if got := time.Since(start); got < 2*delay {
		t.Errorf("round trip %v; want >= %v (delay on the write and on the read)", got, 2*delay)
	}
}

// A Read that times out before a chunk's release leaves it held: the next
// Read still waits for the release time.
func TestReadDeadlineKeepsTheDelay(t *testing.T) {
	const delay = 300 * time.Millisecond
	rules(t, map[string]Rule{"peer": {DelayMinMS: 300, DelayMaxMS: 300}})
	f, srv := pair(t, "peer")
	start := time.Now()
	if _, err := srv.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	f.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if n, err := f.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read %d bytes, %v before the delay; want a timeout", n, err)
	}
	f.SetReadDeadline(time.Time{})
	if _, err := f.Read(make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if got := time.Since(start); got < delay {
		t.Errorf("read %v after the peer wrote; want >= %v", got, delay)
	}
}

// A cut passes nothing either way, fails no call, and lets the held
// bytes through in order when it ends.
func TestCutBlocksAndHeals(t *testing.T) {
	rules(t, map[string]Rule{"peer": {Cut: true}})
	f, srv := pair(t, "peer")
	if _, err := f.Write([]byte("ping\n")); err != nil {
		t.Fatalf("write during a cut: %v (want it held, not failed)", err)
	}
	if _, err := srv.Write([]byte("pong\n")); err != nil {
		t.Fatal(err)
	}
	srv.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := srv.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("peer read %d bytes, %v during the cut; want a timeout", n, err)
	}
	f.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := f.Read(make([]byte, 8)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read %d bytes, %v during the cut; want a timeout", n, err)
	}
	srv.SetReadDeadline(time.Time{})
	f.SetReadDeadline(time.Time{})

	set(map[string]Rule{"peer": {}})
	got, err := bufio.NewReader(srv).ReadString('\n')
	if err != nil || got != "ping\n" {
		t.Fatalf("peer read %q, %v after the cut", got, err)
	}
	got, err = bufio.NewReader(f).ReadString('\n')
	if err != nil || got != "pong\n" {
		t.Fatalf("read %q, %v after the cut", got, err)
	}
}

// Close wakes a Read held by a cut.
func TestCloseEndsAHeldRead(t *testing.T) {
	rules(t, map[string]Rule{"peer": {Cut: true}})
	f, srv := pair(t, "peer")
	srv.Write([]byte("x"))
	done := make(chan error, 1)
	go func() {
		_, err := f.Read(make([]byte, 1))
		done <- err
	}()
	f.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read after close: %v; want net.ErrClosed", err)
	}
}

// Wrap follows the rules file as it changes.
func TestWrapFollowsTheRulesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	t.Setenv(FileEnv, path)
	write := func(s string) {
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"rules": {"peer": {"cut": true}}}`)
	t.Cleanup(func() { set(nil) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := Wrap(raw, "peer")
	defer c.Close()
	if _, ok := c.(*conn); !ok {
		t.Fatalf("Wrap returned %T with %s set; want the faulted conn", c, FileEnv)
	}
	if r, _ := rule("peer"); !r.Cut {
		t.Fatalf("rule after the first read of the file: %+v; want a cut", r)
	}
	write(`{"rules": {"peer": {"delay_min_ms": 5, "delay_max_ms": 9}}}`)
	for r, ch := rule("peer"); r.Cut; r, ch = rule("peer") {
		<-ch // the poller's next change; the test's timeout bounds it
	}
	if r, _ := rule("peer"); r.DelayMaxMS != 9 {
		t.Fatalf("rule after the change: %+v", r)
	}
}

func TestParseRefusesBadRules(t *testing.T) {
	for _, s := range []string{`{"rules": {"a": {"loss": 1}}}`, `{"rules": {"a": {"delay_min_ms": -1}}}`, `{`} {
		if _, err := parse([]byte(s)); err == nil {
			t.Errorf("parse(%s) accepted", s)
		}
	}
	r, err := parse([]byte(`{"rules": {"a": {"delay_min_ms": 50, "delay_max_ms": 200, "loss": 0.05}}}`))
	if err != nil || r["a"].DelayMaxMS != 200 || !strings.Contains(fmt.Sprint(r), "0.05") {
		t.Fatalf("parse: %v, %v", r, err)
	}
}
