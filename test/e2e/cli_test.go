package e2e

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// The CLI as a new user meets it: the real binary against a real node.

// cliRun is one finished narad client command.
type cliRun struct {
	code           int
	stdout, stderr string
}

// cliProc is a narad client command running in the background.
type cliProc struct {
	cmd            *exec.Cmd
	stdout, stderr *lockedBuffer
	done           chan struct{}
	code           int
	signaled       bool // killed by a signal rather than exiting
}

// startCLI runs narad with args against addr (host:port), without
// waiting for it.
func startCLI(t *testing.T, addr string, args ...string) *cliProc {
	t.Helper()
	return startCLIIn(t, addr, "", args...)
}

// startCLIIn is startCLI with stdin as the command's standard input.
func startCLIIn(t *testing.T, addr, stdin string, args ...string) *cliProc {
	t.Helper()
	cmd := exec.Command(naradBin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "NARAD_ADDR=http://"+addr, "XDG_CONFIG_HOME="+t.TempDir())
	p := &cliProc{cmd: cmd, stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := cmd.Wait()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			p.code = exit.ExitCode()
			if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				p.code, p.signaled = 128+int(ws.Signal()), true
			}
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait waits for the command to end (at most within) and returns it.
func (p *cliProc) wait(t *testing.T, within time.Duration) cliRun {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(within):
		t.Fatalf("narad %v still running after %s\nstdout: %s\nstderr: %s", p.cmd.Args[1:], within, p.stdout, p.stderr)
	}
	return cliRun{code: p.code, stdout: p.stdout.String(), stderr: p.stderr.String()}
}

// runCLI runs narad with args against addr and waits for it.
func runCLI(t *testing.T, addr string, args ...string) cliRun {
	t.Helper()
	return startCLI(t, addr, args...).wait(t, 60*time.Second)
}

// TestREADMEFirstSession pastes the README's first session: the node is
// started in the background with "server start --dev" and every next
// line runs at once, without waiting for it. (Its ports and home are the
// test's own, so parallel runs on one machine do not collide.)
func TestREADMEFirstSession(t *testing.T) {
	httpAddr, clusterAddr, home := freeAddr(t), freeAddr(t), t.TempDir()
	srv := exec.Command(naradBin, "server", "start", "--dev", "--http-addr", httpAddr, "--cluster-addr", clusterAddr)
	srv.Env = append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home)
	logs := &lockedBuffer{}
	srv.Stdout, srv.Stderr = logs, logs
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Process.Kill()
		srv.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", tail(logs.String(), 4000))
		}
	})
	run := func(stdin string, args ...string) cliRun {
		t.Helper()
		r := startCLIIn(t, httpAddr, stdin, args...).wait(t, 60*time.Second)
		if r.code != 0 {
			t.Fatalf("narad %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
		return r
	}
	r := run("", "topic", "add", "orders", "--partitions", "6", "--retention", "12h")
	if r.stdout != "created topic orders: 6 partitions, retention 12h, visibility 30s\n" {
		t.Errorf("topic add: %q", r.stdout)
	}
	run("", "pub", "orders", `{"order_id": 1}`, "--key", "customer-42")
	run("plain text\n", "pub", "orders")
	r = run("", "sub", "orders", "--count", "2")
	if !strings.Contains(r.stdout, `"order_id"`) || !strings.Contains(r.stdout, "plain text") {
		t.Errorf("sub printed:\n%s", r.stdout)
	}
	// customer-42 hashes to partition 4 of 6: the replay shows its record.
	r = run("", "replay", "orders", "--partition", "4", "--from", "0")
	if !strings.Contains(r.stdout, `"order_id"`) {
		t.Errorf("replay printed:\n%s", r.stdout)
	}
	r = run("", "topic", "info", "orders")
	if !strings.Contains(r.stdout, "retention:           12h") {
		t.Errorf("topic info:\n%s", r.stdout)
	}
}

// unstartedNode is a node with its ports and directory chosen, not running.
func unstartedNode(t *testing.T) *node {
	t.Helper()
	n := &node{t: t, id: "node-1", dir: t.TempDir(), http: freeAddr(t), cluster: freeAddr(t)}
	n.c = client.New("http://"+n.http, "", "", &http.Client{Timeout: 30 * time.Second})
	t.Cleanup(func() {
		n.stopWith(syscall.SIGKILL)
		if t.Failed() && n.logs != nil {
			t.Logf("logs of %s:\n%s", n.id, tail(n.logs.String(), 4000))
		}
	})
	return n
}

// TestCLIWaitsForANodeStartedAfterIt is the README's first session: the
// node is started in the background and the next command runs at once.
// The command waits, says so once, and succeeds; --retention 0 makes a
// topic that keeps its records forever (not the 7-day default).
func TestCLIWaitsForANodeStartedAfterIt(t *testing.T) {
	n := unstartedNode(t)
	p := startCLI(t, n.http, "topic", "add", "audit", "--retention", "0")
	eventually(t, 20*time.Second, "the CLI to say it is waiting", func() bool {
		return strings.Contains(p.stderr.String(), "waiting for the node at http://"+n.http)
	})
	n.start()
	r := p.wait(t, 40*time.Second)
	if r.code != 0 || !strings.Contains(r.stdout, "created topic audit: 3 partitions, retention forever") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if lines := strings.Count(r.stderr, "waiting for the node"); lines != 1 {
		t.Errorf("%d waiting lines, want one:\n%s", lines, r.stderr)
	}
	d, err := n.c.GetTopic(ctxT(t), "audit")
	if err != nil || d.RetentionMs != 0 {
		t.Fatalf("retention_ms %d (%v), want 0: keep forever", d.RetentionMs, err)
	}
	if r := runCLI(t, n.http, "topic", "info", "audit"); !strings.Contains(r.stdout, "retention:           forever") {
		t.Errorf("topic info:\n%s", r.stdout)
	}
}

// TestCLISubSurvivesABrokerRestart: a node restarted under "narad sub" is
// waited for; the subscriber carries on and gets what is produced after.
func TestCLISubSurvivesABrokerRestart(t *testing.T) {
	n := startNode(t)
	ctx := ctxT(t)
	if _, err := n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "jobs", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	p := startCLI(t, n.http, "sub", "jobs", "--count", "2", "-o", "json", "--wait", "1s")
	if err := n.c.Produce(ctx, "jobs", []byte(`{"n":1}`), client.ProduceOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the first message to be printed", func() bool {
		return strings.Count(p.stdout.String(), "\n") == 1
	})
	// sub prints a message, then acks it: stopping the node before the
	// ack lands would make this a test of a lost ack (redelivery, exit 1)
	// rather than of a restart between messages.
	eventually(t, 20*time.Second, "the first message to be acked", func() bool {
		d, err := n.c.GetTopic(ctx, "jobs")
		return err == nil && len(d.PartitionStats) == 1 && d.PartitionStats[0].ConsumerFrontier == 1
	})
	n.stop()
	eventually(t, 20*time.Second, "sub to wait for the stopped node", func() bool {
		return strings.Contains(p.stderr.String(), "waiting for the node")
	})
	n.start()
	if err := n.c.Produce(ctx, "jobs", []byte(`{"n":2}`), client.ProduceOptions{}); err != nil {
		t.Fatal(err)
	}
	r := p.wait(t, 40*time.Second)
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	var payloads []string
	sc := bufio.NewScanner(strings.NewReader(r.stdout))
	for sc.Scan() {
		var m client.Message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		payloads = append(payloads, string(m.Payload))
	}
	if len(payloads) != 2 || payloads[0] != `{"n":1}` || payloads[1] != `{"n":2}` {
		t.Errorf("payloads %q", payloads)
	}
}

// TestCLIExitCodes: a long-running command stopped by Ctrl-C exits 130
// by itself (not killed by the signal) and says nothing more; something
// that does not exist is 3.
func TestCLIExitCodes(t *testing.T) {
	n := startNode(t)
	if _, err := n.c.CreateTopic(ctxT(t), client.CreateTopicRequest{Name: "idle", Partitions: 1}); err != nil {
		t.Fatal(err)
	}
	p := startCLI(t, n.http, "sub", "idle", "--wait", "500ms")
	// A consume answered means sub is past installing its signal handler.
	eventually(t, 20*time.Second, "sub to have long-polled once", func() bool { return consumesServed(n) > 0 })
	p.cmd.Process.Signal(syscall.SIGINT)
	if r := p.wait(t, 20*time.Second); r.code != 130 || p.signaled || r.stderr != "" {
		t.Errorf("sub after SIGINT: exit %d (killed by the signal: %v) stderr %q, want 130 and nothing said", r.code, p.signaled, r.stderr)
	}
	if r := runCLI(t, n.http, "topic", "info", "nope"); r.code != 3 {
		t.Errorf("info of a missing topic: exit %d, want 3\n%s", r.code, r.stderr)
	}
}

// consumesServed sums the node's answered consume requests.
func consumesServed(n *node) float64 {
	resp, err := http.Get(n.url("/metrics"))
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	total := 0.0
	for _, line := range strings.Split(string(body), "\n") {
		if strings.HasPrefix(line, "narad_http_requests_total{") && strings.Contains(line, "consume") {
			var v float64
			fmt.Sscanf(line[strings.LastIndexByte(line, ' ')+1:], "%g", &v)
			total += v
		}
	}
	return total
}

// TestCLIClusterMembersAndDecommissionAgree: on a single node, members
// lists the node, and decommission of that node says why it cannot be
// done, instead of claiming it does not exist.
func TestCLIClusterMembersAndDecommissionAgree(t *testing.T) {
	n := startNode(t)
	r := runCLI(t, n.http, "cluster", "members")
	if r.code != 0 || !strings.Contains(r.stdout, "node-1") {
		t.Fatalf("members: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, n.http, "cluster", "decommission", "node-1")
	if r.code != 1 || strings.Contains(r.stderr, "does not exist") || !strings.Contains(r.stderr, "only node") {
		t.Errorf("decommission of the only member: exit %d stderr %q", r.code, r.stderr)
	}
	if r := runCLI(t, n.http, "cluster", "decommission", "node-9"); r.code != 3 || !strings.Contains(r.stderr, "does not exist") {
		t.Errorf("decommission of a stranger: exit %d stderr %q", r.code, r.stderr)
	}
}
