package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"
)

// TestH2CAgainstTheBinary: the real node answers a prior-knowledge h2c
// client (http.h2c is on by default) — a produce over HTTP/2 is 202 and
// comes back byte for byte to a consume over HTTP/2 — and with
// NARAD_HTTP_H2C=false the same client gets no answer while HTTP/1.1
// still works.
func TestH2CAgainstTheBinary(t *testing.T) {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p}
	defer tr.CloseIdleConnections()
	h2 := &http.Client{Transport: tr, Timeout: 30 * time.Second}

	n := startNode(t)
	biWantStatus(t, biDo(t, n, "POST", "/v1/topics", "application/json", []byte(`{"name":"h2","partitions":1}`)), http.StatusCreated)
	payload := []byte("over HTTP/2 without TLS")
	res, err := h2.Post(n.url("/v1/topics/h2/produce"), "application/octet-stream", bytes.NewReader(payload))
	if err != nil {
		t.Fatalf("produce over h2c: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusAccepted || res.ProtoMajor != 2 {
		t.Fatalf("produce over h2c: %d over %s, want 202 over HTTP/2", res.StatusCode, res.Proto)
	}
	res, err = h2.Get(n.url("/v1/topics/h2/consume?wait=5s"))
	if err != nil {
		t.Fatalf("consume over h2c: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	var msg struct {
		Payload         json.RawMessage `json:"payload"`
		PayloadEncoding string          `json:"payload_encoding"`
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(body, &msg) != nil {
		t.Fatalf("consume over h2c: %d %q", res.StatusCode, body)
	}
	var text string
	if json.Unmarshal(msg.Payload, &text) != nil || text != string(payload) || msg.PayloadEncoding != "text" {
		t.Fatalf("consumed %q (%s), want %q as text", msg.Payload, msg.PayloadEncoding, payload)
	}

	off := startNode(t, "NARAD_HTTP_H2C=false")
	if res, err := h2.Get(off.url("/healthz")); err == nil {
		res.Body.Close()
		t.Fatalf("a node with NARAD_HTTP_H2C=false answered h2c (%s)", res.Proto)
	}
	biWantStatus(t, biDo(t, off, "GET", "/healthz", "", nil), http.StatusOK)
}
