package deploy

import (
	"context"
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
)

// naradBinary builds the narad binary into the test's own directory
// (the build cache makes a rebuild cheap; one test runs it).
func naradBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "narad")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/narad-io/narad/cmd/narad").CombinedOutput(); err != nil {
		t.Fatalf("building narad: %v\n%s", err, out)
	}
	return bin
}

// startNode runs `narad serve` from bin as a single node with security on
// and the given admin password, and returns its client API's URL once it
// is ready.
func startNode(t *testing.T, bin, adminPassword string) string {
	t.Helper()
	addr := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}
	httpAddr := addr()
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(),
		"NARAD_NODE_ID=deploy-test",
		"NARAD_HTTP_ADDR="+httpAddr,
		"NARAD_CLUSTER_ADDR="+addr(),
		"NARAD_DATA_DIR="+filepath.Join(t.TempDir(), "data"),
		"NARAD_ADMIN_PASSWORD="+adminPassword,
		"NARAD_LOG_LEVEL=warn",
		"NARAD_STORAGE_DISK_RESERVE_BYTES=1048576",
	)
	var logs strings.Builder
	var mu sync.Mutex
	cmd.Stdout = writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return logs.Write(p) })
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGKILL)
		<-done
		if t.Failed() {
			mu.Lock()
			t.Logf("node logs:\n%s", logs.String())
			mu.Unlock()
		}
	})
	url := "http://" + httpAddr
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			t.Fatalf("narad exited during start:\n%s", logs.String())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", url+"/readyz", nil)
		resp, err := http.DefaultClient.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("narad not ready within 30s")
	return ""
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
