package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/narad-io/narad/internal/config"
	"github.com/narad-io/narad/internal/server"
)

// realNode runs a whole node in this process, with security on, on a
// loopback port in a temporary data directory, until the test ends. It
// returns a cli pointed at it as the admin.
func realNode(t *testing.T) (cli, *client.Client) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	cfg := config.Default()
	cfg.NodeID = "n1"
	cfg.DataDir = t.TempDir()
	cfg.HTTP.Addr = addr
	cfg.HTTP.ShutdownGrace = 2 * time.Second
	cfg.Cluster.Addr = "127.0.0.1:0"
	cfg.Security.AdminPassword = "a-password-for-the-test"
	cfg.Storage.DiskReserveBytes = 1 << 20
	cfg.Log.Level = "error"
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- server.Run(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("the node did not stop within 30 s")
		}
	})
	hc := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(20 * time.Second); ; {
		res, err := hc.Get("http://" + addr + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-done:
			t.Fatalf("the node stopped before it was ready: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the node was not ready within 20 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	url := "http://" + addr
	c := cli{env: map[string]string{"NARAD_ADDR": url, "NARAD_USER": "admin", "NARAD_PASS": cfg.Security.AdminPassword}}
	return c, client.New(url, "admin", cfg.Security.AdminPassword, nil)
}

// with is c with more environment.
func (c cli) with(kv ...string) cli {
	env := map[string]string{}
	for k, v := range c.env {
		env[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		env[kv[i]] = kv[i+1]
	}
	c.env = env
	return c
}

// accessKey is an access key and its secret.
type accessKey struct {
	ID     string `json:"access_key_id"`
	Secret string `json:"secret_access_key"`
}

// adminKey adds an access key to node's admin, with the CLI.
func adminKey(t *testing.T, node cli) accessKey {
	t.Helper()
	r := node.run(t, "user", "keys", "add", "admin", "-o", "json")
	mustOK(t, r)
	var key accessKey
	if err := json.Unmarshal([]byte(r.stdout), &key); err != nil || key.ID == "" || key.Secret == "" {
		t.Fatalf("user keys add: %v %q", err, r.stdout)
	}
	return key
}

// --api sqs produces, consumes and deletes through SQS's JSON protocol on
// a real node whose security is on, so every request's signature is
// checked: every message is produced and consumed, and the scratch queue
// is gone afterwards. A wrong secret is refused, and the bench says why.
func TestBenchSQSAgainstARealNode(t *testing.T) {
	node, admin := realNode(t)
	key := adminKey(t, node)
	signed := node.with("AWS_ACCESS_KEY_ID", key.ID, "AWS_SECRET_ACCESS_KEY", key.Secret)

	for _, batch := range []string{"1", "10"} {
		r := signed.run(t, "bench", "--api", "sqs", "--messages", "200", "--producers", "4", "--consume", "--batch", batch, "--json")
		mustOK(t, r)
		var rep benchReport
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("--batch %s: stdout is not the report: %v\n%s", batch, err, r.stdout)
		}
		if rep.Settings.API != "sqs" || rep.Settings.ConsumeMax != sqsMaxBatch || rep.Produce == nil || rep.Consume == nil {
			t.Fatalf("--batch %s: report %+v", batch, rep)
		}
		wantReqs := int64(200)
		if batch == "10" {
			wantReqs = 20
		}
		if p := rep.Produce; p.Messages != 200 || p.Errors != 0 || p.Requests != wantReqs {
			t.Errorf("--batch %s: produce %+v, want 200 messages in %d requests", batch, p, wantReqs)
		}
		if c := rep.Consume; c.Messages != 200 || c.Errors != 0 {
			t.Errorf("--batch %s: consume %+v, want 200 messages", batch, c)
		}
		if !rep.ScratchDeleted {
			t.Errorf("--batch %s: the scratch queue %s was not deleted", batch, rep.Topic)
		}
		if _, err := admin.GetTopic(context.Background(), rep.Topic); client.StatusOf(err) != http.StatusNotFound {
			t.Errorf("--batch %s: the scratch queue %s after the bench: %v, want 404", batch, rep.Topic, err)
		}
	}

	// --e2e reads each message's send time back from its body.
	r := signed.run(t, "bench", "--api", "sqs", "--e2e", "--messages", "50", "--producers", "2", "--json")
	mustOK(t, r)
	var e2e benchReport
	if err := json.Unmarshal([]byte(r.stdout), &e2e); err != nil || e2e.EndToEnd == nil || e2e.Consume == nil || e2e.Consume.Messages != 50 {
		t.Fatalf("--e2e: %v report %s", err, r.stdout)
	}

	wrong := node.with("AWS_ACCESS_KEY_ID", key.ID, "AWS_SECRET_ACCESS_KEY", key.Secret+"x")
	r = wrong.run(t, "bench", "--api", "sqs", "--messages", "5", "--producers", "1")
	if r.code != exitAuth || !strings.Contains(r.stderr, "SignatureDoesNotMatch") {
		t.Fatalf("a wrong secret: exit %d stderr %q, want SignatureDoesNotMatch", r.code, r.stderr)
	}
	topics, _, err := admin.ListTopics(context.Background(), 100, "")
	if err != nil || len(topics) != 0 {
		t.Fatalf("topics left after the benches: %v %v", topics, err)
	}
}

// An AWS JSON error answer is a *client.APIError: a throttle (400 at
// AWS) is a transient 429, the node's own failure transient, a refusal
// not; the older "#Code:uri" form names the code too.
func TestSQSErrorAnswers(t *testing.T) {
	for _, tt := range []struct {
		status    int
		body      string
		want      string
		transient bool
	}{
		{400, `{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"no such queue"}`, "QueueDoesNotExist: no such queue (HTTP 400)", false},
		{400, `{"__type":"com.amazonaws.sqs#RequestThrottled","message":"slow down"}`, "RequestThrottled: slow down (HTTP 429)", true},
		{400, `{"__type":"ThrottlingException:http://internal.amazon.com/coral/com.amazon.coral.availability/","Message":"Rate exceeded"}`, "ThrottlingException: Rate exceeded (HTTP 429)", true},
		{503, `{"__type":"com.amazonaws.sqs#ServiceUnavailable","message":"try later"}`, "ServiceUnavailable: try later (HTTP 503)", true},
		{403, `{"__type":"com.amazonaws.sqs#SignatureDoesNotMatch","message":"bad"}`, "SignatureDoesNotMatch: bad (HTTP 403)", false},
		{502, `<html>bad gateway</html>`, "Bad Gateway: <html>bad gateway</html> (HTTP 502)", true},
	} {
		err := sqsError(&http.Response{StatusCode: tt.status, Header: http.Header{}}, []byte(tt.body))
		if err.Error() != tt.want || client.IsTransient(err) != tt.transient {
			t.Errorf("%d %s: %q transient %v, want %q transient %v", tt.status, tt.body, err, client.IsTransient(err), tt.want, tt.transient)
		}
	}
	f := sqsEntryFailure{Id: "3", Code: "ServiceUnavailable", Message: "window full"}
	if err := f.err(); client.StatusOf(err) != http.StatusServiceUnavailable || !client.IsTransient(err) {
		t.Errorf("a receiver's batch entry failure: %v, want a transient 503", err)
	}
	f = sqsEntryFailure{Id: "3", Code: "ReceiptHandleIsInvalid", Message: "bad", SenderFault: true}
	if err := f.err(); client.IsTransient(err) {
		t.Errorf("a sender's batch entry failure: %v, want a refusal", err)
	}
}
