package e2e

import (
	"context"
	"fmt"
	"math/rand"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// clusterScript runs scripts/cluster.sh with the binary under test, base
// as its base port and dir as its data; the script and the nodes it
// starts share a process group, killed at the end.
func clusterScript(t *testing.T, base int, dir string) (*exec.Cmd, *lockedBuffer, *lockedBuffer, chan struct{}) {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join("..", "..", "scripts", "cluster.sh"), dir)
	cmd.Env = append(os.Environ(), "NARAD_BIN="+naradBin, "NARAD_CLUSTER_BASE_PORT="+strconv.Itoa(base))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, stderr := &lockedBuffer{}, &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	return cmd, stdout, stderr, done
}

// TestClusterScriptRefusesATakenPort: a port in use is named before any
// node starts, instead of a node dying with a bind error in its log.
func TestClusterScriptRefusesATakenPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	// The taken port is narad-2's Raft port.
	cmd, stdout, stderr, done := clusterScript(t, port-201, t.TempDir())
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("cluster.sh still running with a taken port")
	}
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(stderr.String(), strconv.Itoa(port)+" on 127.0.0.1 already in use") ||
		strings.Contains(stdout.String(), "narad-1:") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s", cmd.ProcessState.ExitCode(), stdout, stderr)
	}
}

// TestClusterScriptKillAndStartOneNode: docs/cluster.md's failover story with
// the script it ships. "cluster.sh kill 2" SIGKILLs narad-2 and the
// script reports it while the other two keep serving; "cluster.sh start
// 2" brings narad-2 back on its own data directory, where the records of
// the partitions it owns still are.
func TestClusterScriptKillAndStartOneNode(t *testing.T) {
	base, dir := freeBase(t), t.TempDir()
	_, stdout, stderr, done := clusterScript(t, base, dir)
	url := func(i int) string { return fmt.Sprintf("http://127.0.0.1:%d", base+100*i) }
	nodes := map[int]*client.Client{}
	for i := 1; i <= 3; i++ {
		nodes[i] = client.New(url(i), "", "", &http.Client{Timeout: 10 * time.Second})
	}
	ready := func(i int) bool { return nodes[i].Readyz(context.Background()) == nil }
	eventually(t, 60*time.Second, "the three nodes to be ready", func() bool { return ready(1) && ready(2) && ready(3) })

	// Records in every partition, so that narad-2 owns some.
	// A context for the whole test: a cluster's start, a kill and a
	// restart can take longer than ctxT's minute on two busy cores.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	const parts, records = 6, 60
	if _, err := nodes[1].CreateTopic(ctx, client.CreateTopicRequest{Name: "orders", Partitions: parts}); err != nil {
		t.Fatal(err)
	}
	for i := range records {
		if err := nodes[1].Produce(ctx, "orders", fmt.Appendf(nil, "%d", i), client.ProduceOptions{Partition: new(i % parts)}); err != nil {
			t.Fatal(err)
		}
	}
	held := map[int]uint64{} // partition → next offset, of those narad-2 owns
	eventually(t, 60*time.Second, "every record in its partition", func() bool {
		d, err := nodes[1].GetTopic(ctx, "orders")
		if err != nil {
			return false
		}
		sum := uint64(0)
		clear(held)
		for _, p := range d.PartitionStats {
			sum += p.NextOffset
			if p.OwnerNode == "narad-2" {
				held[p.Index] = p.NextOffset
			}
		}
		return sum == records && len(held) > 0
	})

	// script runs "cluster.sh ARGS... DIR" to its end, bounded: a script
	// that took "kill" for a data directory would start a cluster of its
	// own and never return. The same ports make such a one fail at once.
	script := func(args ...string) (string, error) {
		sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(sctx, "bash", append([]string{filepath.Join("..", "..", "scripts", "cluster.sh")}, append(args, dir)...)...)
		cmd.Env = append(os.Environ(), "NARAD_BIN="+naradBin, "NARAD_CLUSTER_BASE_PORT="+strconv.Itoa(base))
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := script("kill", "2")
	if err != nil || !strings.Contains(out, "narad-2 (pid ") || !strings.Contains(out, "killed with SIGKILL") {
		t.Fatalf("cluster.sh kill 2: %v\n%s", err, out)
	}
	if !strings.Contains(stderr.String(), "exited with status 137; the others keep running") {
		t.Errorf("the script did not report narad-2's exit:\n%s", stderr)
	}
	if ready(2) {
		t.Error("narad-2 still answers after cluster.sh kill 2")
	}
	if out, err := script("kill", "2"); err == nil || !strings.Contains(out, "narad-2 is not running") {
		t.Errorf("a second kill 2: %v\n%s", err, out)
	}
	// The others serve: narad-3 takes a metadata write (once a leader
	// without narad-2 is elected, if narad-2 led; a retry of a create
	// that did happen is a 409).
	eventually(t, 30*time.Second, "narad-3 to create a topic with narad-2 down", func() bool {
		_, err := nodes[3].CreateTopic(ctx, client.CreateTopicRequest{Name: "while-2-is-down", Partitions: 1})
		return err == nil || client.StatusOf(err) == http.StatusConflict
	})
	select {
	case <-done:
		t.Fatalf("cluster.sh ended when narad-2 died\nstderr: %s", stderr)
	default:
	}

	out, err = script("start", "2")
	if err != nil || !strings.Contains(out, "narad-2 started again (pid ") {
		t.Fatalf("cluster.sh start 2: %v\n%s\nscript's stderr: %s", err, out, stderr)
	}
	if out, err := script("start", "2"); err == nil || !strings.Contains(out, "narad-2 is running (pid ") {
		t.Errorf("a second start 2: %v\n%s", err, out)
	}
	eventually(t, 60*time.Second, "narad-2 to be ready again", func() bool { return ready(2) })
	// Its data directory is the one it had: its partitions hold what
	// they held, read back through narad-2 itself.
	var last string // the last read, for a failure
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("narad-2's partitions held %v (next offsets) before; the last read: %s", held, last)
		}
	})
	eventually(t, 60*time.Second, "narad-2's partitions as they were", func() bool {
		for p, want := range held {
			msgs, err := nodes[2].Consume(ctx, "orders", client.ConsumeOptions{Partition: new(p), Offset: new(uint64(0)), Max: records})
			last = fmt.Sprintf("partition %d: %d records, %v", p, len(msgs), err)
			if err != nil || uint64(len(msgs)) != want {
				return false
			}
		}
		return true
	})
	if strings.Count(stdout.String(), "narad-2: http://") != 2 {
		t.Errorf("the script's stdout does not show narad-2 started twice:\n%s", stdout)
	}
}

// freeBase finds a base port whose nine ports (three per node) are free
// now; the script checks them again. Like freeAddr it looks below the
// ephemeral range, where no outgoing connection's source port (one in
// TIME_WAIT included) can take one of them.
func freeBase(t *testing.T) int {
	t.Helper()
	for try := 0; try < 200; try++ {
		base := testPortLow + rand.Intn(testPortHigh-testPortLow-302)
		var ports []int
		for i := 1; i <= 3; i++ {
			for d := 0; d < 3; d++ {
				ports = append(ports, base+100*i+d)
			}
		}
		if slices.IndexFunc(ports, func(p int) bool { return !portFree(p) }) < 0 && claim(ports...) {
			return base
		}
	}
	t.Fatal("no free base port")
	return 0
}
