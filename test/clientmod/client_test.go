package clientmod_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// node is the smallest stand-in for a Narad node this module needs: one
// topic "orders" with one partition, Basic auth required, leases that
// last until settled.
type node struct {
	mu      sync.Mutex
	queue   [][]byte
	leased  map[string][]byte
	counter int
	acked   []string
}

func (n *node) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/topics/orders/produce", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		n.mu.Lock()
		n.queue = append(n.queue, body)
		n.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	})
	mux.HandleFunc("GET /v1/topics/orders/consume", func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		defer n.mu.Unlock()
		if len(n.queue) == 0 {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		p := n.queue[0]
		n.queue = n.queue[1:]
		n.counter++
		handle := fmt.Sprintf("0:%d:%d", n.counter-1, n.counter)
		n.leased[handle] = p
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"topic":"orders","partition":0,"offset":%d,"payload":%s,"timestamp":1796004226,"receipt_handle":%q,"delivery_count":1}`,
			n.counter-1, p, handle)
	})
	mux.HandleFunc("POST /v1/topics/orders/ack", func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		defer n.mu.Unlock()
		h := r.URL.Query().Get("receipt_handle")
		if _, ok := n.leased[h]; !ok {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusGone)
			io.WriteString(w, `{"error":"the lease lapsed"}`)
			return
		}
		if r.URL.Query().Get("extend") == "" {
			delete(n.leased, h)
			n.acked = append(n.acked, h)
		}
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":"topic \"elsewhere\" does not exist"}`)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "app" || p != "s3cret-pw" {
			w.Header().Set("WWW-Authenticate", `Basic realm="narad"`)
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"missing or wrong credentials"}`)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// Another module produces, consumes and acks through the public client,
// reads refusals as *client.APIError, and runs the consumer loop.
func TestAnotherModuleUsesTheClient(t *testing.T) {
	n := &node{leased: map[string][]byte{}}
	srv := httptest.NewServer(n.handler())
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	c := client.New(srv.URL, "app", "s3cret-pw", nil)
	for _, p := range []string{`{"n": 1}`, `{"n": 2}`} {
		if err := c.Produce(ctx, "orders", []byte(p), client.ProduceOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := c.Consume(ctx, "orders", client.ConsumeOptions{})
	if err != nil || len(msgs) != 1 {
		t.Fatalf("consume: %v, %v", msgs, err)
	}
	if b, _ := msgs[0].Bytes(); string(b) != `{"n": 1}` {
		t.Fatalf("payload %q", b)
	}
	if err := c.Ack(ctx, "orders", msgs[0].ReceiptHandle); err != nil {
		t.Fatal(err)
	}

	var apiErr *client.APIError
	_, err = c.Consume(ctx, "elsewhere", client.ConsumeOptions{})
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound || client.IsTransient(err) {
		t.Fatalf("a missing topic gave %v", err)
	}
	_, err = client.New(srv.URL, "app", "wrong", nil).Consume(ctx, "orders", client.ConsumeOptions{})
	if client.StatusOf(err) != http.StatusUnauthorized {
		t.Fatalf("wrong credentials gave %v", err)
	}

	loopCtx, stop := context.WithCancel(ctx)
	var got []json.RawMessage
	err = c.ConsumeLoop(loopCtx, "orders", client.ConsumeLoopOptions{Wait: 10 * time.Millisecond, ExtendEvery: time.Second},
		func(ctx context.Context, m client.Message) error {
			got = append(got, m.Payload)
			stop()
			return nil
		})
	if !errors.Is(err, context.Canceled) || len(got) != 1 || string(got[0]) != `{"n": 2}` {
		t.Fatalf("ConsumeLoop: %v, handled %s", err, got)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.acked) != 2 || len(n.leased) != 0 {
		t.Fatalf("acked %v, still leased %d", n.acked, len(n.leased))
	}
}
