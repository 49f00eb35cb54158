package awsmod

import (
	"bytes"
	"context"
	"fmt"
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

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// naradBin is the binary under test, built once by TestMain from the
// repository this module sits in.
var naradBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "narad-aws-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	naradBin = filepath.Join(dir, "narad")
	build := exec.Command("go", "build", "-o", naradBin, "./cmd/narad")
	build.Dir = filepath.Join("..", "..")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building narad:", err)
		os.Exit(1)
	}
	code := m.Run()
	stopShared()
	os.RemoveAll(dir)
	os.Exit(code)
}

// node is one narad process.
type node struct {
	t       testing.TB
	id      string
	addr    string
	cluster string
	dir     string
	env     []string

	mu   sync.Mutex
	cmd  *exec.Cmd
	logs *lockedBuffer
	done chan struct{}
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

// startNode starts a single node; extra are NARAD_*=v settings (security
// is off unless they turn it on).
func startNode(t testing.TB, extra ...string) *node {
	t.Helper()
	n := newNode(t, "node-1", extra...)
	n.start()
	return n
}

// newNode prepares a node that is not started yet; its cleanup kills it
// and shows its logs when the test failed.
func newNode(t testing.TB, id string, extra ...string) *node {
	t.Helper()
	n := &node{t: t, id: id, addr: freeAddr(t), cluster: freePortPair(t), dir: t.TempDir(), env: extra}
	t.Cleanup(func() {
		n.kill()
		if t.Failed() {
			logs := n.logs.String()
			if len(logs) > 6000 {
				logs = logs[len(logs)-6000:]
			}
			t.Logf("logs of %s:\n%s", n.id, logs)
		}
	})
	return n
}

// startCluster starts size nodes as one cluster, security off unless
// extra turns it on, and waits until every node is ready.
func startCluster(t testing.TB, size int, extra ...string) []*node {
	t.Helper()
	nodes := make([]*node, size)
	var peers, ids []string
	for i := range nodes {
		nodes[i] = newNode(t, fmt.Sprintf("n%d", i+1), extra...)
		peers = append(peers, nodes[i].id+"@"+nodes[i].cluster)
		ids = append(ids, nodes[i].id)
	}
	for _, n := range nodes {
		n.env = append(n.env, "NARAD_CLUSTER_PEERS="+strings.Join(peers, ","),
			"NARAD_CLUSTER_INITIAL_MEMBERS="+strings.Join(ids, ","), "NARAD_CLUSTER_SECRET=awsmod-cluster-secret-0123456789")
		n.launch()
	}
	for _, n := range nodes {
		n.waitReady()
	}
	return nodes
}

// start starts the process and waits until it is ready.
func (n *node) start() {
	n.t.Helper()
	n.launch()
	n.waitReady()
}

// launch starts the process.
func (n *node) launch() {
	n.t.Helper()
	cmd := exec.Command(naradBin, "serve")
	cmd.Env = append(os.Environ(),
		"NARAD_NODE_ID="+n.id,
		"NARAD_HTTP_ADDR="+n.addr,
		"NARAD_CLUSTER_ADDR="+n.cluster,
		"NARAD_DATA_DIR="+filepath.Join(n.dir, "data"),
		"NARAD_SECURITY_ENABLED=false",
		"NARAD_LOG_FORMAT=text",
		"NARAD_LOG_LEVEL=warn",
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

// waitReady waits until the node answers /readyz with 200.
func (n *node) waitReady() {
	n.t.Helper()
	n.mu.Lock()
	done, logs := n.done, n.logs
	n.mu.Unlock()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			n.t.Fatalf("narad exited during start:\n%s", logs.String())
		default:
		}
		resp, err := http.Get("http://" + n.addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	n.t.Fatalf("narad not ready within 30s:\n%s", logs.String())
}

// kill sends SIGKILL and waits for the process to end.
func (n *node) kill() {
	n.mu.Lock()
	cmd, done := n.cmd, n.done
	n.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
}

func (n *node) url() string { return "http://" + n.addr }

func freeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// sqsClient is the SDK's SQS client pointed at n, signing with the given
// key pair.
func sqsClient(n *node, keyID, secret string) *sqs.Client {
	return sqs.New(sqs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(n.url()),
		Credentials:  credentials.NewStaticCredentialsProvider(keyID, secret, ""),
	})
}

func snsClient(n *node, keyID, secret string) *sns.Client {
	return sns.New(sns.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(n.url()),
		Credentials:  credentials.NewStaticCredentialsProvider(keyID, secret, ""),
	})
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// freePortPair is a cluster address whose port and the next one are
// free: node RPC listens on the cluster port + 1.
func freePortPair(t testing.TB) string {
	t.Helper()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		next, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+1))
		l.Close()
		if err == nil {
			next.Close()
			return fmt.Sprintf("127.0.0.1:%d", p)
		}
	}
	t.Fatal("no free port pair")
	return ""
}
