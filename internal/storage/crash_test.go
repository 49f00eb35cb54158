package storage

import (
	"bufio"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The crash test runs the commit loop in a child process (this test binary,
// re-executed) and kills it with SIGKILL at random moments. Every batch
// whose Commit returned — the child printed "ok" after it — must be in the
// reopened log, whole; no partial batch may be visible; offsets stay
// contiguous and commit times non-decreasing.

const crashDirEnv = "NARAD_STORAGE_CRASH_DIR"

func TestCrashChildCommitLoop(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("child process of TestCrashKillDuringCommits")
	}
	round := os.Getenv("NARAD_STORAGE_CRASH_ROUND")
	l, err := Open(dir, Options{SegmentBytes: 64 << 10})
	if err != nil {
		fmt.Println("open-error", err)
		os.Exit(3)
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	out := bufio.NewWriter(os.Stdout)
	for b := 0; ; b++ {
		n := 1 + rng.Intn(20)
		batch := make([]Record, n)
		pad := strings.Repeat("p", rng.Intn(2000))
		for i := range batch {
			batch[i].Payload = []byte(fmt.Sprintf("r%s-b%d-i%d-n%d-%s", round, b, i, n, pad))
			if i%2 == 0 {
				batch[i].Key = []byte(fmt.Sprintf("k%d", i))
			}
		}
		base, err := l.Commit(batch)
		if err != nil {
			fmt.Println("commit-error", err)
			os.Exit(4)
		}
		fmt.Fprintf(out, "ok %d %d r%s-b%d\n", base, n, round, b)
		out.Flush()
	}
}

type ackedBatch struct {
	base uint64
	n    int
	id   string
}

func TestCrashKillDuringCommits(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test spawns processes")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	var acked []ackedBatch
	for round := 0; round < 6; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChildCommitLoop$", "-test.v=false")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, fmt.Sprintf("NARAD_STORAGE_CRASH_ROUND=%d", round))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killAfter := 20 + rng.Intn(300)
		sc := bufio.NewScanner(stdout)
		seen := 0
		killed := false
		for sc.Scan() {
			line := sc.Text()
			var a ackedBatch
			if _, err := fmt.Sscanf(line, "ok %d %d %s", &a.base, &a.n, &a.id); err != nil {
				continue // test framework chatter
			}
			acked = append(acked, a)
			seen++
			if seen == killAfter && !killed {
				cmd.Process.Signal(syscall.SIGKILL)
				killed = true
			}
		}
		err = cmd.Wait()
		if !killed {
			t.Fatalf("round %d: child exited on its own after %d acks: %v", round, seen, err)
		}
		t.Logf("round %d: killed after %d acked batches", round, seen)
	}

	l := openT(t, dir, Options{SegmentBytes: 64 << 10})
	defer l.Close()
	all := readAll(t, l, 0)
	if uint64(len(all)) != l.HWM() {
		t.Fatalf("read %d records but hwm is %d", len(all), l.HWM())
	}
	for i, r := range all {
		if r.Offset != uint64(i) {
			t.Fatalf("offsets not contiguous at %d: %d", i, r.Offset)
		}
		if i > 0 && r.CommittedAt < all[i-1].CommittedAt {
			t.Fatalf("commit time decreased at offset %d", i)
		}
	}
	// Every acknowledged batch is there, at its offsets, whole.
	for _, a := range acked {
		for i := 0; i < a.n; i++ {
			o := a.base + uint64(i)
			if o >= uint64(len(all)) {
				t.Fatalf("acked batch %s lost: offset %d beyond hwm %d", a.id, o, len(all))
			}
			want := fmt.Sprintf("%s-i%d-n%d-", a.id, i, a.n)
			if !strings.HasPrefix(string(all[o].Payload), want) {
				t.Fatalf("offset %d holds %.30q, want batch %s record %d", o, all[o].Payload, a.id, i)
			}
		}
	}
	// No partial batch: records come in complete runs of their batch.
	for i := 0; i < len(all); {
		var round, b, idx, n int
		if _, err := fmt.Sscanf(string(all[i].Payload), "r%d-b%d-i%d-n%d-", &round, &b, &idx, &n); err != nil || idx != 0 {
			t.Fatalf("offset %d starts mid-batch: %.30q (%v)", i, all[i].Payload, err)
		}
		if i+n > len(all) {
			t.Fatalf("partial batch r%d-b%d visible at the tail", round, b)
		}
		i += n
	}
	t.Logf("%d acked batches, %d records after 6 SIGKILLs", len(acked), len(all))
}
