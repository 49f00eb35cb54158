package httpapi

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/narad-io/narad/internal/apierr"
)

// A produce refused after its body was read whole (and closed, so that
// net/http does not read it again) keeps its connection: there is nothing
// left to drain, and the drain must not take the closed body for one it
// could not finish.
func TestARefusedProduceKeepsItsConnection(t *testing.T) {
	e := newEnv(t)
	srv := httptest.NewServer(e.s)
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	body := bytes.Repeat([]byte("q"), 300)
	e.rec.failWith("Produce", apierr.NotFound("topic %q not found", "orders"))
	resp, err := rawExchange(conn, br, produceHead(len(body), ""), body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusNotFound || resp.Close {
		t.Fatalf("refused produce: %d, Connection: close %v; want 404 on a connection kept open", resp.StatusCode, resp.Close)
	}
	e.rec.failWith("Produce", nil)
	if resp, err = rawExchange(conn, br, produceHead(len(body), ""), body); err != nil || resp.StatusCode != http.StatusAccepted {
		t.Fatalf("the next produce on the same connection: %v %v", resp, err)
	}
}

// A single produce allocates, on our side of net/http, the exchange, the
// request copy that carries it, and what the mux allocates for its path
// wildcards — no metric label lookups, no maps for an absent query, no body
// buffer (pooled), and with security on only net/http's Basic decoding on
// top (the credential cache answers without allocating).
func TestProduceAllocations(t *testing.T) {
	for _, c := range []struct {
		name   string
		secure bool
		allocs float64
	}{
		{"security off", false, 3},
		{"security on", true, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := benchServer(t, c.secure)
			payload := strings.Repeat("p", 256)
			w := &nullWriter{h: http.Header{}}
			// AllocsPerRun counts all of its function: the requests are
			// built beforehand, one per run and one for its warm-up.
			const runs = 100
			reqs := make([]*http.Request, runs+2)
			for i := range reqs {
				reqs[i] = httptest.NewRequest("POST", "/v1/topics/orders/produce", strings.NewReader(payload))
				if c.secure {
					reqs[i].SetBasicAuth("producer", "bench-password")
				}
			}
			s.ServeHTTP(w, reqs[0]) // binds the metric series, fills the pool, caches the credentials
			if w.status != http.StatusAccepted {
				t.Fatalf("produce: %d", w.status)
			}
			next := 1
			got := testing.AllocsPerRun(runs, func() {
				w.status = 0
				s.ServeHTTP(w, reqs[next])
				next++
			})
			if w.status != http.StatusAccepted {
				t.Fatalf("produce: %d", w.status)
			}
			if got > c.allocs {
				t.Errorf("a produce allocates %.1f objects on the server's side, want at most %.0f", got, c.allocs)
			}
		})
	}
}

// The bound series count like the vector they come from: per method,
// route and status, whatever the order statuses first appear in, and from
// many goroutines at once.
func TestBoundSeriesCountEveryStatus(t *testing.T) {
	e := newEnv(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				target := "/v1/topics/orders/produce"
				if (g+i)%2 == 1 {
					target += "?nope=1" // 400
				}
				e.s.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", target, strings.NewReader("x")))
			}
		})
	}
	wg.Wait()
	body := scrapeOf(t, e)
	for _, want := range []string{
		`narad_http_requests_total{method="POST",route="POST /v1/topics/{topic}/produce",status="202"} 200`,
		`narad_http_requests_total{method="POST",route="POST /v1/topics/{topic}/produce",status="400"} 200`,
		`narad_http_request_duration_seconds_count{method="POST",route="POST /v1/topics/{topic}/produce"} 400`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("exposition lacks %s:\n%s", want, grepLines(body, "produce"))
		}
	}
}

// Every method label has its index, and the index its label.
func TestMethodIndex(t *testing.T) {
	for i, m := range methodLabels[:len(methodLabels)-1] {
		if got := methodIndex(m); got != i {
			t.Errorf("methodIndex(%q) = %d, want %d", m, got, i)
		}
	}
	if got := methodLabels[methodIndex("BREW")]; got != "other" {
		t.Errorf("BREW is labelled %q, want other", got)
	}
}

// checkPath walks the path in place; it refuses exactly what splitting it
// into segments refused (the oracle below is the code it replaced).
func FuzzCheckPathMatchesSplit(f *testing.F) {
	for _, seed := range []string{"/", "//", "/v1/topics", "/v1/topics/", "/v1//x", "/./", "/v1/..", "/v1/.x", "/a/b/./c", "*", "", "/%2e%2e/x"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, path string) {
		u := &url.URL{Path: path}
		oracle := func() bool {
			rest, ok := strings.CutPrefix(u.EscapedPath(), "/")
			if !ok {
				return true
			}
			segs := strings.Split(rest, "/")
			for i, seg := range segs {
				if seg == "." || seg == ".." || (seg == "" && i < len(segs)-1) {
					return false
				}
			}
			return true
		}
		if got, want := checkPath(u) == nil, oracle(); got != want {
			t.Fatalf("checkPath(%q) accepts=%v, the split check accepts=%v", path, got, want)
		}
	})
}
