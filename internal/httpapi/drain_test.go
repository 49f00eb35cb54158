package httpapi

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// rawExchange sends head and then the whole body on conn before it reads
// anything — as Python's urllib and most scripts do — and returns the
// answer, or the error that stopped it (a reset, a broken pipe).
func rawExchange(conn net.Conn, br *bufio.Reader, head string, body []byte) (*http.Response, error) {
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, head); err != nil {
		return nil, fmt.Errorf("writing the head: %w", err)
	}
	for len(body) > 0 { // in urllib's 8 KiB blocks: the server may answer (and close) between two
		n := min(len(body), 8<<10)
		if _, err := conn.Write(body[:n]); err != nil {
			return nil, fmt.Errorf("writing the body: %w", err)
		}
		body = body[n:]
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("reading the answer's body: %w", err)
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, nil
}

func produceHead(n int, extra string) string {
	return fmt.Sprintf("POST /v1/topics/orders/produce HTTP/1.1\r\nHost: narad\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n%s\r\n", n, extra)
}

// An oversize body is answered 413 to a client that writes all of it
// before reading (docs/security.md, "Input limits"): the server drains
// it first, so the client reads the 413 instead of a reset — every time,
// at 1 MiB + 1 and at 20 MiB — and a body drained to its end keeps the
// connection for the next request.
func TestA413ReachesAClientThatSendsEverythingFirst(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.s)
	defer srv.Close()
	for _, c := range []struct {
		size, times int
	}{{1<<20 + 1, 20}, {20 << 20, 5}} {
		body := bytes.Repeat([]byte("z"), c.size)
		failures := 0
		var last error
		for range c.times {
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(conn)
			resp, err := rawExchange(conn, br, produceHead(len(body), ""), body)
			if err != nil || resp.StatusCode != http.StatusRequestEntityTooLarge {
				failures++
				last = fmt.Errorf("%v (answer %v)", err, resp)
				conn.Close()
				continue
			}
			// Drained to the end: the connection serves the next request.
			next, err := rawExchange(conn, br, "GET /healthz HTTP/1.1\r\nHost: narad\r\n\r\n", nil)
			if err != nil || next.StatusCode != http.StatusOK {
				t.Errorf("after a drained 413 the connection does not serve on: %v %v", next, err)
			}
			conn.Close()
		}
		if failures > 0 {
			t.Errorf("%d of %d bodies of %d bytes did not get their 413; last: %v", failures, c.times, c.size, last)
		}
	}
	if m := e.rec.mutations(); len(m) > 0 {
		t.Errorf("an oversize body reached the data plane: %v", m)
	}
}

// A body of unknown length (chunked) over the cap is drained too, and so
// is the body of a request refused for another reason than its size.
func TestOtherRefusalsDrainTheBodyToo(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.s)
	defer srv.Close()
	chunked := func(n int) []byte {
		var b bytes.Buffer
		chunk := bytes.Repeat([]byte("c"), 64<<10)
		for left := n; left > 0; left -= len(chunk) {
			k := min(left, len(chunk))
			fmt.Fprintf(&b, "%x\r\n%s\r\n", k, chunk[:k])
		}
		b.WriteString("0\r\n\r\n")
		return b.Bytes()
	}
	for _, c := range []struct {
		name, head string
		body       []byte
		want       int
	}{
		{"chunked over the cap", "POST /v1/topics/orders/produce HTTP/1.1\r\nHost: narad\r\nTransfer-Encoding: chunked\r\n\r\n", chunked(3 << 20), 413},
		{"no such route", "POST /v1/topics/orders/publish HTTP/1.1\r\nHost: narad\r\nContent-Length: 2097152\r\n\r\n", bytes.Repeat([]byte("p"), 2<<20), 404},
		{"bad parameter", "POST /v1/topics/orders/produce?partition=x HTTP/1.1\r\nHost: narad\r\nContent-Length: 2097152\r\n\r\n", bytes.Repeat([]byte("p"), 2<<20), 400},
		{"batch over 16 MiB", "POST /v1/topics/orders/produce/batch HTTP/1.1\r\nHost: narad\r\nContent-Length: 25165824\r\n\r\n", bytes.Repeat([]byte(" "), 24<<20), 413},
	} {
		t.Run(c.name, func(t *testing.T) {
			for i := range 5 {
				conn, err := net.Dial("tcp", srv.Listener.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				resp, err := rawExchange(conn, bufio.NewReader(conn), c.head, c.body)
				conn.Close()
				if err != nil || resp.StatusCode != c.want {
					t.Fatalf("try %d: %v %v, want %d", i, resp, err, c.want)
				}
			}
		})
	}
}

// A client that sends "Expect: 100-continue" gets the 413 in place of the
// 100 Continue: nothing invites the body the answer is there to spare.
func TestA413AnswersExpectContinue(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.s)
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, produceHead(20<<20, "Expect: 100-continue\r\n")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer before the body: %v", err)
	}
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("answer %d before the body, want 413 (not 100 Continue)", resp.StatusCode)
	}
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), "over the cap") {
		t.Fatalf("413 body %q", b)
	}
}
