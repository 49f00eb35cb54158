package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// mountSmallDisk mounts a tmpfs of size bytes, a disk the test can really
// fill. It needs root; elsewhere the test is skipped.
func mountSmallDisk(t *testing.T, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs as a disk to fill")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fill writes a file until the disk answers ENOSPC.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			return
		}
	}
}

// TestFullDiskHealsWithoutARestart: a node whose data disk fills keeps
// every record it acknowledged; produce and topic create answer 503 with a
// Retry-After and a reason that names no file, /readyz says why; a topic
// delete still works and frees space; once there is room, produce resumes
// by itself.
func TestFullDiskHealsWithoutARestart(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a disk")
	}
	disk := mountSmallDisk(t, 192<<20)
	data := filepath.Join(disk, "data")
	n := startNode(t, "NARAD_DATA_DIR="+data, "NARAD_STORAGE_DISK_RESERVE_BYTES="+strconv.Itoa(32<<20))
	for _, topic := range []string{"big", "keep"} {
		if st, body, _ := n.do("POST", "/v1/topics", "application/json", []byte(`{"name":"`+topic+`","partitions":1}`)); st != 201 {
			t.Fatalf("create %s: %d %s", topic, st, body)
		}
	}
	big := bytes.Repeat([]byte("b"), 100<<10)
	for i := 0; i < 100; i++ {
		if st, body, _ := n.do("POST", "/v1/topics/big/produce", "text/plain", big); st != 202 {
			t.Fatalf("produce to big: %d %s", st, body)
		}
	}
	var acked []string
	produce := func(p string) (int, []byte, http.Header) {
		st, body, h := n.do("POST", "/v1/topics/keep/produce", "text/plain", []byte(p))
		if st == 202 {
			acked = append(acked, p)
		}
		return st, body, h
	}
	for i := 0; i < 5; i++ {
		if st, body, _ := produce(fmt.Sprintf("before-%d", i)); st != 202 {
			t.Fatalf("produce: %d %s", st, body)
		}
	}

	// Another process fills the disk. The node is held still meanwhile
	// (SIGSTOP): a reserve it released while the filler still wrote would
	// be eaten by the filler, and no room would be left for the deletes
	// (seen under a loaded CI run); the node's rule is about the room left
	// once the disk is full, not about racing its filler.
	n.signal(syscall.SIGSTOP)
	fill(t, filepath.Join(disk, "filler"))
	n.signal(syscall.SIGCONT)
	var st int
	var body []byte
	var h http.Header
	for i := 0; ; i++ {
		if st, body, h = produce(fmt.Sprintf("full-%d", i)); st != 202 {
			break
		}
		if i > 10_000 {
			t.Fatal("produce keeps answering 202 on a full disk")
		}
	}
	if st != 503 || h.Get("Retry-After") == "" || strings.Contains(string(body), disk) || strings.Contains(string(body), ".wal") {
		t.Fatalf("produce on a full disk: %d Retry-After %q %s; want 503 with a Retry-After, naming no file", st, h.Get("Retry-After"), body)
	}
	eventually(t, 10*time.Second, "/readyz to say the disk is full", func() bool {
		st, body, _ := n.do("GET", "/readyz", "", nil)
		return st == 503 && strings.Contains(string(body), "disk is full")
	})
	if v := n.metric("narad_data_disk_full"); v != 1 {
		t.Fatalf("narad_data_disk_full = %v on a full disk, want 1", v)
	}
	if st, body, h := n.do("POST", "/v1/topics", "application/json", []byte(`{"name":"more","partitions":1}`)); st != 503 || h.Get("Retry-After") == "" {
		t.Fatalf("create on a full disk: %d %s; want 503 with a Retry-After", st, body)
	}
	eventually(t, 30*time.Second, "a topic delete on a full disk", func() bool {
		st, _, _ := n.do("DELETE", "/v1/topics/big", "", nil)
		return st == 204
	})

	if err := os.Remove(filepath.Join(disk, "filler")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "/readyz to recover", func() bool {
		st, _, _ := n.do("GET", "/readyz", "", nil)
		return st == 200
	})
	if v := n.metric("narad_data_disk_full"); v != 0 {
		t.Fatalf("narad_data_disk_full = %v once space is back, want 0", v)
	}
	for i := 0; i < 5; i++ {
		if st, body, _ := produce(fmt.Sprintf("after-%d", i)); st != 202 {
			t.Fatalf("produce once space is back: %d %s", st, body)
		}
	}
	var got []string
	eventually(t, 10*time.Second, "every acknowledged record in the partition", func() bool {
		st, body, _ := n.do("GET", fmt.Sprintf("/v1/topics/keep/consume?partition=0&offset=0&max=%d", len(acked)+10), "", nil)
		if st != 200 {
			return false
		}
		got = got[:0]
		for _, p := range acked {
			if strings.Contains(string(body), `"payload":"`+p+`"`) {
				got = append(got, p)
			}
		}
		return len(got) == len(acked) && strings.Count(string(body), `"offset"`) == len(acked)
	})
}
