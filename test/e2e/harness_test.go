package e2e

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/narad-io/narad/internal/testutil"
)

// naradBin is the binary under test, built once by TestMain.
var naradBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "narad-e2e-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	naradBin = filepath.Join(dir, "narad")
	build := exec.Command("go", "build", "-o", naradBin, "github.com/narad-io/narad/cmd/narad")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building narad:", err)
		os.Exit(1)
	}
	flag.Parse()
	if !flagGiven("test.parallel") {
		// The parallel tests wait, mostly (doc.go): four at a time,
		// whatever the machine's cores.
		flag.Set("test.parallel", "4")
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// flagGiven reports whether the command line set the flag name.
func flagGiven(name string) bool {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// node is one narad process with a stable identity, ports and data
// directory across restarts.
type node struct {
	t       testing.TB
	id      string
	dir     string
	http    string
	cluster string
	env     []string
	bin     string // the binary to run; "" is naradBin

	mu   sync.Mutex
	cmd  *exec.Cmd
	logs *lockedBuffer
	done chan struct{}

	c *client.Client
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startNode starts a single node with security off; extra is NARAD_*=v
// settings for this test.
func startNode(t testing.TB, extra ...string) *node {
	t.Helper()
	n := &node{t: t, id: "node-1", dir: t.TempDir(), http: freeAddr(t), cluster: freeAddr(t), env: extra}
	n.c = client.New("http://"+n.http, "", "", &http.Client{Timeout: 30 * time.Second})
	n.start()
	t.Cleanup(func() {
		n.stopWith(syscall.SIGKILL)
		if t.Failed() {
			t.Logf("logs of %s:\n%s", n.id, tail(n.logs.String(), 4000))
		}
	})
	return n
}

func (n *node) start() {
	n.t.Helper()
	n.startNoWait()
	n.waitReady()
}

func (n *node) startNoWait() {
	n.t.Helper()
	bin := naradBin
	if n.bin != "" {
		bin = n.bin
	}
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(),
		"NARAD_NODE_ID="+n.id,
		"NARAD_HTTP_ADDR="+n.http,
		"NARAD_CLUSTER_ADDR="+n.cluster,
		"NARAD_DATA_DIR="+filepath.Join(n.dir, "data"),
		"NARAD_SECURITY_ENABLED=false",
		"NARAD_LOG_FORMAT=text",
		"NARAD_LOG_LEVEL=warn",
		// The disk reserve is real preallocated space; a small one keeps a
		// whole cluster of test nodes light on CI disks (tests that
		// exercise it set their own).
		"NARAD_STORAGE_DISK_RESERVE_BYTES=1048576",
	)
	cmd.Env = append(cmd.Env, n.env...)
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		n.t.Fatalf("start narad: %v", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	n.mu.Lock()
	n.cmd, n.logs, n.done = cmd, logs, done
	n.mu.Unlock()
}

func (n *node) waitReady() {
	n.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-n.done:
			n.t.Fatalf("narad exited during start:\n%s", tail(n.logs.String(), 4000))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := n.c.Readyz(ctx)
		cancel()
		if err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	n.t.Fatalf("narad not ready within 30s:\n%s", tail(n.logs.String(), 4000))
}

// kill sends SIGKILL: no cleanup of any kind runs in the process.
func (n *node) kill() { n.stopWith(syscall.SIGKILL) }

// stop sends SIGTERM and waits for the graceful shutdown.
func (n *node) stop() { n.stopWith(syscall.SIGTERM) }

func (n *node) stopWith(sig syscall.Signal) {
	n.mu.Lock()
	cmd, done := n.cmd, n.done
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	cmd.Process.Signal(sig)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		n.t.Errorf("narad did not exit within 30s of %v", sig)
	}
}

func (n *node) restart() {
	n.t.Helper()
	n.start()
}

func (n *node) url(path string) string { return "http://" + n.http + path }

// do sends a raw request and returns status and body.
func (n *node) do(method, path, contentType string, body []byte) (int, []byte, http.Header) {
	n.t.Helper()
	req, err := http.NewRequest(method, n.url(path), bytes.NewReader(body))
	if err != nil {
		n.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		n.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header
}

// metric returns the value of one Prometheus series (exact line match on
// name and labels), or -1 if absent or if the node does not answer yet
// (it may still be starting).
func (n *node) metric(series string) float64 {
	n.t.Helper()
	resp, err := http.Get(n.url("/metrics"))
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, series+" ") {
			var v float64
			fmt.Sscanf(strings.TrimPrefix(line, series+" "), "%g", &v)
			return v
		}
	}
	return -1
}

// series returns the values of every series starting with prefix (a name
// and the start of its labels); nil if none, or if the node does not answer.
func (n *node) series(prefix string) []float64 {
	resp, err := http.Get(n.url("/metrics"))
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var vs []float64
	for _, line := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(line, prefix) {
			continue
		}
		var v float64
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			fmt.Sscanf(line[i+1:], "%g", &v)
		}
		vs = append(vs, v)
	}
	return vs
}

// handedOut remembers every port given to a node of this test process:
// a port is free only until its node binds it, so two picks must never
// return the same one (nor one of a Raft+RPC pair).
var (
	portsMu   sync.Mutex
	handedOut = map[int]bool{}
)

func claim(ports ...int) bool {
	portsMu.Lock()
	defer portsMu.Unlock()
	for _, p := range ports {
		if handedOut[p] {
			return false
		}
	}
	for _, p := range ports {
		handedOut[p] = true
	}
	return true
}

// Test ports come from below the kernel's ephemeral range: a port taken
// from that range is free only until some outgoing connection picks it as
// its source port, which happens while a killed node is down and then
// keeps it from binding again on restart.
const (
	testPortLow  = 12000
	testPortHigh = 32000 // below net.ipv4.ip_local_port_range's usual 32768
)

func portFree(p int) bool {
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

func freeAddr(t testing.TB) string {
	t.Helper()
	for i := 0; i < 1000; i++ {
		p := testPortLow + rand.Intn(testPortHigh-testPortLow)
		if portFree(p) && claim(p) {
			return fmt.Sprintf("127.0.0.1:%d", p)
		}
	}
	t.Fatal("no free test port")
	return ""
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// eventually is testutil.Eventually, kept under its short name because
// nearly every e2e file calls it.
func eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, within, what, cond)
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// checkLedger is the loss ledger of the durability tests: every record
// answered 202 must have been delivered at least once. Duplicates are
// counted and reported, never an error (at least once).
func checkLedger(t *testing.T, what string, accepted map[int]bool, got map[int]int) {
	t.Helper()
	var lost []int
	for id := range accepted {
		if got[id] == 0 {
			lost = append(lost, id)
		}
	}
	dups := 0
	for _, c := range got {
		dups += max(c-1, 0)
	}
	t.Logf("%s: %d accepted, %d delivered distinct, %d duplicates, %d lost", what, len(accepted), len(got), dups, len(lost))
	if len(lost) > 0 {
		t.Errorf("%s: %d records answered 202 were never delivered (for example id-%d)", what, len(lost), lost[0])
	}
}
