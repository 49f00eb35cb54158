package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// clusterScript runs scripts/cluster.sh with the binary under test and
// base as its base port; the script and the nodes it starts share a
// process group, killed at the end.
func clusterScript(t *testing.T, base int) (*exec.Cmd, *lockedBuffer, *lockedBuffer, chan struct{}) {
	t.Helper()
	cmd := exec.Command("bash", filepath.Join("..", "..", "scripts", "cluster.sh"), t.TempDir())
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
	cmd, stdout, stderr, done := clusterScript(t, port-201)
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

// TestClusterScriptFailsLoudlyWhenANodeDies: a node that exits ends the
// script with a non-zero status, its name and its log's tail.
func TestClusterScriptFailsLoudlyWhenANodeDies(t *testing.T) {
	base := freeBase(t)
	cmd, stdout, stderr, done := clusterScript(t, base)
	pid := regexp.MustCompile(`narad-2: http://\S+ \(pid (\d+),`)
	var victim int
	eventually(t, 30*time.Second, "the three nodes to be started", func() bool {
		m := pid.FindStringSubmatch(stdout.String())
		if m == nil || !strings.Contains(stdout.String(), "narad-3:") {
			return false
		}
		victim, _ = strconv.Atoi(m[1])
		return true
	})
	eventually(t, 30*time.Second, "narad-2 to serve", func() bool {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", base+200))
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	syscall.Kill(victim, syscall.SIGKILL)
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("cluster.sh still running after narad-2 died\nstderr: %s", stderr)
	}
	want := fmt.Sprintf("cluster.sh: narad-2 (pid %d) exited with status 137; stopping the others.", victim)
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(stderr.String(), want) {
		t.Errorf("exit %d\nstderr: %s\nwant %q", cmd.ProcessState.ExitCode(), stderr, want)
	}
}

// freeBase finds a base port whose nine ports (three per node) are free
// now; the script checks them again.
func freeBase(t *testing.T) int {
	t.Helper()
	for try := 0; try < 50; try++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		base := ln.Addr().(*net.TCPAddr).Port - 100
		ln.Close()
		if base < 1024 || base+302 > 65535 {
			continue
		}
		free := true
		for i := 1; i <= 3 && free; i++ {
			for d := 0; d < 3; d++ {
				l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+100*i+d))
				if err != nil {
					free = false
					break
				}
				l.Close()
			}
		}
		if free {
			return base
		}
	}
	t.Fatal("no free base port")
	return 0
}
