package e2e

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// refusedNode is a node meant to fail its start: killed at cleanup should
// it not, its logs shown if the test fails.
func refusedNode(t *testing.T, dir, httpAddr, clusterAddr string) *node {
	n := &node{t: t, id: "node-1", dir: dir, http: httpAddr, cluster: clusterAddr}
	t.Cleanup(func() { n.stopWith(syscall.SIGKILL) })
	return n
}

// hold binds addr for the test, as another program would.
func hold(t *testing.T, addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
}

func wantAll(t *testing.T, out string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(out, p) {
			t.Errorf("the refusal does not say %q:\n%s", p, tail(out, 2000))
		}
	}
}

// A second node on a data directory in use is refused at once, by the pid
// of the one that holds it, not by a timeout opening raft.db.
func TestSecondNodeOnADataDirIsRefusedByPid(t *testing.T) {
	first := startNode(t)
	second := refusedNode(t, first.dir, freeAddr(t), freeAddr(t))
	out := startExpectingExit(t, second)
	dataDir := filepath.Join(first.dir, "data")
	wantAll(t, out, fmt.Sprintf("data directory %s is in use by pid %d", dataDir, first.cmd.Process.Pid), "NARAD_DATA_DIR")
	if strings.Contains(out, "timeout") {
		t.Errorf("the refusal still speaks of a timeout:\n%s", out)
	}
	// The first node never noticed.
	if err := first.c.Readyz(ctxT(t)); err != nil {
		t.Fatalf("the first node after the refused second: %v", err)
	}
}

// A taken client API port is found before the metastore is initialised
// (nothing is written under the data directory but its lock and node id),
// and the refusal names the setting to change.
func TestTakenHTTPPortIsRefusedBeforeTheMetastore(t *testing.T) {
	httpAddr := freeAddr(t)
	hold(t, httpAddr)
	n := refusedNode(t, t.TempDir(), httpAddr, freeAddr(t))
	out := startExpectingExit(t, n)
	wantAll(t, out, httpAddr, "in use", "--http-addr", "NARAD_HTTP_ADDR")
	if _, err := os.Stat(filepath.Join(n.dir, "data", "metastore")); !os.IsNotExist(err) {
		t.Errorf("the metastore was initialised before the HTTP port was checked (stat: %v)", err)
	}
}

// A taken Raft port names --cluster-addr, not just "bind: address already
// in use".
func TestTakenRaftPortNamesClusterAddr(t *testing.T) {
	clusterAddr := freeAddr(t)
	hold(t, clusterAddr)
	n := refusedNode(t, t.TempDir(), freeAddr(t), clusterAddr)
	out := startExpectingExit(t, n)
	wantAll(t, out, clusterAddr, "in use", "--cluster-addr", "NARAD_CLUSTER_ADDR")
}
