package server

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/narad-io/narad/internal/config"
)

// TestRunLeavesNoGoroutine starts a whole node in this process — a single
// node, and a one-member cluster (node RPC, membership, the move worker,
// the pool) — waits until it is ready, stops it, and checks that no
// goroutine it started outlives Run: every long-lived goroutine of a node
// runs in its run group, which is joined before the components close.
func TestRunLeavesNoGoroutine(t *testing.T) {
	for _, clustered := range []bool{false, true} {
		t.Run(fmt.Sprintf("clustered=%v", clustered), func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			cfg := testConfig(t, clustered)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- Run(ctx, cfg) }()

			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 2 * time.Second}
			defer client.CloseIdleConnections()
			waitReady(t, client, "http://"+cfg.HTTP.Addr+"/readyz", done)
			if res, err := client.Get("http://" + cfg.HTTP.PprofAddr + "/debug/pprof/cmdline"); err != nil {
				t.Fatalf("pprof listener: %v", err)
			} else {
				res.Body.Close()
			}

			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("Run returned %v after a graceful stop", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("Run did not return within 30 s of its context ending")
			}
			// Right away, not after goleak's retries: a goroutine of ours
			// still running when Run returned was not joined.
			if left := oursSettled(); len(left) > 0 {
				t.Fatalf("goroutines of ours still running when Run returned:\n%s", strings.Join(left, "\n\n"))
			}
		})
	}
}

// testConfig is a node on loopback ports in a temporary data directory,
// with security on (so the root admin is seeded) and pprof on.
func testConfig(t *testing.T, clustered bool) config.Config {
	t.Helper()
	cfg := config.Default()
	cfg.NodeID = "n1"
	cfg.DataDir = t.TempDir()
	cfg.HTTP.Addr = "127.0.0.1:" + strconv.Itoa(freePort(t, false))
	cfg.HTTP.PprofAddr = "127.0.0.1:" + strconv.Itoa(freePort(t, false))
	cfg.HTTP.ShutdownGrace = 2 * time.Second
	cfg.Cluster.Addr = "127.0.0.1:0"
	cfg.Security.AdminPassword = "a-password-for-the-test"
	cfg.Storage.DiskReserveBytes = 1 << 20
	cfg.Log.Level = "error"
	if clustered {
		// Raft on P, node RPC on P+1: both must be free.
		cfg.Cluster.Addr = "127.0.0.1:" + strconv.Itoa(freePort(t, true))
		cfg.Cluster.Peers = []config.Peer{{ID: "n1", Addr: cfg.Cluster.Addr}}
		cfg.Cluster.InitialMembers = []string{"n1"}
		cfg.Cluster.Secret = "a-cluster-secret-for-the-test"
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// freePort finds a loopback port nobody listens on (and, with pair, whose
// successor is free too).
func freePort(t *testing.T, pair bool) int {
	t.Helper()
	for range 50 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		if !pair {
			ln.Close()
			return port
		}
		next, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+1))
		ln.Close()
		if err == nil {
			next.Close()
			return port
		}
	}
	t.Fatal("no free pair of loopback ports")
	return 0
}

// waitReady polls url until it answers 200, failing if Run returns first.
func waitReady(t *testing.T, client *http.Client, url string, done <-chan error) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("Run returned before the node was ready: %v", err)
		default:
		}
		if res, err := client.Get(url); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case err := <-done:
			t.Fatalf("Run returned before the node was ready: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatal("the node was not ready within 60 s")
}

// oursSettled is ours, except that a goroutine seen only runnable (never
// blocked) is looked at again, a few times within a second: one that ran
// its deferred wg.Done at its closing brace (a listener's accept loop,
// say) has been joined and is only waiting to be descheduled, which on a
// loaded machine can take a while. A goroutine blocked in a select, a
// channel or I/O is reported at once: nothing will end it.
func oursSettled() []string {
	left := ours()
	for try := 0; try < 20 && len(left) > 0 && allRunnable(left); try++ {
		time.Sleep(50 * time.Millisecond)
		left = ours()
	}
	return left
}

// allRunnable reports whether every stack's header ("goroutine N
// [state]:") says runnable or running.
func allRunnable(stacks []string) bool {
	for _, g := range stacks {
		head, _, _ := strings.Cut(g, "\n")
		if !strings.Contains(head, "[runnable]") && !strings.Contains(head, "[running]") {
			return false
		}
	}
	return true
}

// ours lists the stacks of the goroutines that code of this module (not
// its tests) started and that still run. Goroutines libraries start (Raft's
// transport, gRPC) are left to goleak, which waits for them a while: the
// libraries stop them without waiting.
func ours() []string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for i, g := range strings.Split(string(buf), "\n\n") {
		if i == 0 { // this goroutine
			continue
		}
		// The last frame says who started it: "created by F in goroutine
		// N", then a tab and F's file:line.
		lines := strings.Split(strings.TrimSpace(g), "\n")
		// A group goroutine whose only frame is the group's own wrapper
		// has returned from its task and called wg.Done (the deferred
		// call runs at the closing brace): it is joined, only not yet
		// descheduled. One still inside its task shows the task's frames
		// above the wrapper.
		if len(lines) == 5 && strings.HasPrefix(lines[1], "github.com/narad-io/narad/internal/server.(*group).Go.func1(") {
			continue
		}
		if n := len(lines); n >= 2 && strings.HasPrefix(lines[n-2], "created by github.com/narad-io/narad/") &&
			!strings.Contains(lines[n-1], "_test.go:") {
			out = append(out, g)
		}
	}
	return out
}
