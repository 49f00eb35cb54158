package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/auth"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/narad-io/narad/internal/ratelimit"
)

// silentPlane takes single produces and does nothing with them: the
// benchmarks below measure the HTTP side of a produce (net/http's parsing,
// the edge, authentication, metrics, reading the body, the answer), not
// the WAL.
type silentPlane struct{ fakePlane }

func (*silentPlane) ProduceWithID(context.Context, string, broker.ProduceRecord) (broker.Accepted, error) {
	return broker.Accepted{ID: "w0000000000000000000000000g", Partition: 0}, nil
}

// benchServer is the API as a node builds it, security on (a real
// Authenticator over one user with a bcrypt hash: the credential cache is
// what a request pays once warm) or off.
func benchServer(tb testing.TB, secure bool) *Server {
	tb.Helper()
	return benchServerLimited(tb, secure, false)
}

// benchServerLimited is benchServer with the node's rate limiter, as a
// node has it: with limited, the producer (or, security off, everyone)
// has limits far above what the benchmark sends (every request is
// admitted, and pays for its bucket); without, nobody has any (the
// default), and the limiter costs what an unlimited request pays.
func benchServerLimited(tb testing.TB, secure, limited bool) *Server {
	tb.Helper()
	high := int64(10_000_000)
	var own *meta.Limits
	opts := Options{Limiter: ratelimit.New(nil)}
	if limited {
		own = &meta.Limits{ProduceRecordsPerS: &high, ProduceBytesPerS: ptrTo[int64](10 << 30)}
		if !secure {
			opts.DefaultLimits = meta.Rates{ProduceRecordsPerS: high, ProduceBytesPerS: 10 << 30}
		}
	}
	var authn Authenticator
	if secure {
		hash, err := auth.Hash("bench-password")
		if err != nil {
			tb.Fatal(err)
		}
		users := userStore{"producer": {Name: "producer", ID: 9, Version: 1, Hash: hash,
			Grants: []meta.Grant{{Action: meta.ActionProduce, Patterns: []string{"orders*"}}}, Limits: own}}
		authn = auth.NewAuthenticator(users, nil)
		opts.UserStore = users
	}
	plane := &silentPlane{fakePlane{recorder: &recorder{}, topics: map[string]meta.Topic{
		"orders": {Name: "orders", Partitions: 3}}}}
	return New(plane, nil, metrics.New(), authn, func() (bool, string) { return true, "" },
		slog.New(slog.DiscardHandler), opts)
}

// produceRequest is one single-record produce of a 256-byte payload, as
// bytes on the wire (what narad bench sends).
func produceRequest(secure bool) []byte { return produceRequestHeaders(secure, false) }

// benchHeaders are three record headers as a producer would send them.
const benchHeaders = "Narad-Header-Trace-Id: 4bf92f3577b34da6a3ce929d\r\nNarad-Header-Content-Type: application/json\r\nNarad-Header-Tenant: acme\r\n"

// produceRequestHeaders is produceRequest, with benchHeaders when headers.
func produceRequestHeaders(secure, headers bool) []byte {
	var b bytes.Buffer
	payload := strings.Repeat("p", 256)
	b.WriteString("POST /v1/topics/orders/produce HTTP/1.1\r\nHost: bench\r\nUser-Agent: narad-bench\r\n")
	if headers {
		b.WriteString(benchHeaders)
	}
	b.WriteString("Content-Type: application/octet-stream\r\nContent-Length: " + strconv.Itoa(len(payload)) + "\r\n")
	if secure {
		b.WriteString("Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("producer:bench-password")) + "\r\n")
	}
	b.WriteString("\r\n")
	b.WriteString(payload)
	return b.Bytes()
}

// wireClient sends pre-built requests on one keep-alive connection and
// reads the answers without allocating, so that -benchmem's allocs/op are
// the server's: net/http's and ours.
type wireClient struct {
	conn net.Conn
	r    *bufio.Reader
}

func dialWire(tb testing.TB, addr string) *wireClient {
	tb.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return &wireClient{conn: c, r: bufio.NewReaderSize(c, 4096)}
}

// roundTrip writes req and reads one answer; it returns the status.
func (c *wireClient) roundTrip(req []byte) (int, error) {
	if _, err := c.conn.Write(req); err != nil {
		return 0, err
	}
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if len(line) < 12 {
		return 0, fmt.Errorf("status line %q", line)
	}
	status := int(line[9]-'0')*100 + int(line[10]-'0')*10 + int(line[11]-'0')
	length := 0
	for {
		h, err := c.r.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		if len(h) <= 2 {
			break
		}
		if v, ok := bytes.CutPrefix(h, []byte("Content-Length: ")); ok {
			for _, d := range bytes.TrimSpace(v) {
				length = length*10 + int(d-'0')
			}
		}
	}
	if _, err := c.r.Discard(length); err != nil {
		return 0, err
	}
	return status, nil
}

// BenchmarkProduceWire is one single-record produce through the whole
// server side of the HTTP/1.1 stack on loopback: net/http's connection
// loop, the edge, authentication, the handler and the answer. allocs/op
// and B/op are the server's (the client reuses its buffers).
func BenchmarkProduceWire(b *testing.B) {
	for _, c := range []struct{ secure, limited bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		name := map[bool]string{false: "security=off", true: "security=on"}[c.secure]
		if c.limited {
			name += ",limits=on"
		}
		secure := c.secure
		b.Run(name, func(b *testing.B) {
			srv := httptest.NewServer(benchServerLimited(b, secure, c.limited))
			defer srv.Close()
			c := dialWire(b, srv.Listener.Addr().String())
			req := produceRequest(secure)
			if st, err := c.roundTrip(req); err != nil || st != http.StatusAccepted {
				b.Fatalf("warm-up: %d %v", st, err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if st, err := c.roundTrip(req); err != nil || st != http.StatusAccepted {
					b.Fatalf("%d %v", st, err)
				}
			}
		})
	}
}

// BenchmarkProduceWireHeaders is BenchmarkProduceWire (security off)
// with and without three Narad-Header-* request headers: what reading
// them costs the edge (net/http parses them either way; the rules are
// the broker's, measured by the header package's BenchmarkCheck).
func BenchmarkProduceWireHeaders(b *testing.B) {
	for _, with := range []bool{false, true} {
		b.Run(fmt.Sprintf("headers=%v", with), func(b *testing.B) {
			srv := httptest.NewServer(benchServer(b, false))
			defer srv.Close()
			c := dialWire(b, srv.Listener.Addr().String())
			req := produceRequestHeaders(false, with)
			if st, err := c.roundTrip(req); err != nil || st != http.StatusAccepted {
				b.Fatalf("warm-up: %d %v", st, err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if st, err := c.roundTrip(req); err != nil || st != http.StatusAccepted {
					b.Fatalf("%d %v", st, err)
				}
			}
		})
	}
}

// BenchmarkProduceHandler is the same produce handed straight to the
// Server (no connection): our share of the work alone.
func BenchmarkProduceHandler(b *testing.B) {
	for _, c := range []struct{ secure, limited bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		name := map[bool]string{false: "security=off", true: "security=on"}[c.secure]
		if c.limited {
			name += ",limits=on"
		}
		secure := c.secure
		b.Run(name, func(b *testing.B) {
			s := benchServerLimited(b, secure, c.limited)
			payload := strings.Repeat("p", 256)
			w := &nullWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer() // the request is the client's, not counted
				req := httptest.NewRequest("POST", "/v1/topics/orders/produce", strings.NewReader(payload))
				if secure {
					req.SetBasicAuth("producer", "bench-password")
				}
				b.StartTimer()
				clear(w.h)
				w.status = 0
				s.ServeHTTP(w, req)
				if w.status != http.StatusAccepted {
					b.Fatalf("%d", w.status)
				}
			}
		})
	}
}

// nullWriter is a ResponseWriter that keeps only the status.
type nullWriter struct {
	h      http.Header
	status int
}

func (w *nullWriter) Header() http.Header { return w.h }
func (w *nullWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *nullWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return len(p), nil
}

// BenchmarkProduceParallel is single produces from parallel clients over
// HTTP/1.1 (a connection each) and over h2c (streams on one connection),
// Go's client and server both in the process: the figure compares the two
// protocols' whole cost per request, not the server's alone.
func BenchmarkProduceParallel(b *testing.B) {
	for _, proto := range []string{"http1", "h2c"} {
		b.Run(proto, func(b *testing.B) {
			srv := httptest.NewUnstartedServer(benchServer(b, false))
			var sp, cp http.Protocols
			sp.SetHTTP1(true)
			sp.SetUnencryptedHTTP2(true)
			srv.Config.Protocols = &sp
			srv.Start()
			defer srv.Close()
			tr := &http.Transport{MaxIdleConnsPerHost: 256}
			if proto == "h2c" {
				cp.SetUnencryptedHTTP2(true)
				tr.Protocols = &cp
			}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr}
			payload := []byte(strings.Repeat("p", 256))
			url := srv.URL + "/v1/topics/orders/produce"
			b.ReportAllocs()
			b.SetParallelism(8) // 16 clients on 2 cores
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					res, err := client.Post(url, "application/octet-stream", bytes.NewReader(payload))
					if err != nil {
						b.Error(err)
						return
					}
					res.Body.Close()
					if res.StatusCode != http.StatusAccepted {
						b.Errorf("%d", res.StatusCode)
						return
					}
				}
			})
		})
	}
}
