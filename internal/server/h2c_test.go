package server

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/config"
)

// serve runs httpServer(cfg, h) on a loopback port until the test ends and
// returns its base URL.
func serve(t *testing.T, cfg config.HTTPConfig, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpServer(cfg, h, nil)
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); <-done })
	return "http://" + ln.Addr().String()
}

// h2cClient speaks HTTP/2 from the first byte (prior knowledge), and
// nothing else.
func h2cClient(t *testing.T) *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func h1Client(t *testing.T) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

var protoEcho = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Proto) })

// With http.h2c on (the default), a client that starts with the HTTP/2
// preface is answered over HTTP/2, and an HTTP/1.1 client on the same port
// as before.
func TestH2CBesideHTTP1(t *testing.T) {
	cfg := config.Default().HTTP
	if !cfg.H2C {
		t.Fatal("http.h2c is off by default")
	}
	url := serve(t, cfg, protoEcho)
	for _, c := range []struct {
		client *http.Client
		want   string
	}{{h2cClient(t), "HTTP/2.0"}, {h1Client(t), "HTTP/1.1"}} {
		res, err := c.client.Get(url + "/")
		if err != nil {
			t.Fatalf("%s client: %v", c.want, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if string(b) != c.want || res.Proto != c.want {
			t.Errorf("served as %q, answered as %q; want %s", b, res.Proto, c.want)
		}
	}
}

// With http.h2c off, HTTP/2 without TLS is not spoken at all.
func TestH2COff(t *testing.T) {
	cfg := config.Default().HTTP
	cfg.H2C = false
	url := serve(t, cfg, protoEcho)
	if res, err := h2cClient(t).Get(url + "/"); err == nil {
		res.Body.Close()
		t.Fatalf("an h2c client was answered (%s) with http.h2c off", res.Proto)
	}
	if res, err := h1Client(t).Get(url + "/"); err != nil {
		t.Fatalf("HTTP/1.1 with http.h2c off: %v", err)
	} else {
		res.Body.Close()
	}
}

// With TLS, http.h2c changes nothing: HTTP/2 without TLS is for plain
// listeners only.
func TestH2CNotWithTLS(t *testing.T) {
	if srv := httpServer(config.Default().HTTP, protoEcho, &tls.Config{}); srv.Protocols != nil {
		t.Fatalf("protocols %v set on a TLS server", srv.Protocols)
	}
}

// The server's timeouts hold for an HTTP/2 stream: a body that stalls is
// cut at the read timeout, an answer held past the write timeout ends its
// stream — the handler learns both, neither waits forever.
func TestH2CTimeouts(t *testing.T) {
	cfg := config.Default().HTTP
	cfg.ReadTimeout = 200 * time.Millisecond
	cfg.WriteTimeout = 300 * time.Millisecond
	readErr := make(chan error, 1)
	cut := make(chan struct{})
	url := serve(t, cfg, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			_, err := io.ReadAll(r.Body)
			readErr <- err
			return
		}
		<-r.Context().Done() // the write timeout resets the stream
		close(cut)
	}))
	client := h2cClient(t)

	pr, pw := io.Pipe()
	defer pw.Close()
	go func() {
		io.WriteString(pw, "the start of a body that never ends")
		// and then nothing: the writer stays open
	}()
	go func() {
		if res, err := client.Post(url+"/", "text/plain", pr); err == nil {
			res.Body.Close()
		}
	}()
	select {
	case err := <-readErr:
		if err == nil || !strings.Contains(err.Error(), "timeout") {
			t.Errorf("a stalled HTTP/2 body read ended with %v, want a timeout", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a stalled HTTP/2 body was not cut by the read timeout")
	}

	go func() {
		if res, err := client.Get(url + "/"); err == nil {
			res.Body.Close()
		}
	}()
	select {
	case <-cut:
	case <-time.After(10 * time.Second):
		t.Fatal("an HTTP/2 answer held past the write timeout did not end its stream")
	}
}
