package wal

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The crash test runs the WAL in a child process (this test binary again,
// running only TestCrashChild) and SIGKILLs it mid-flight, several times on
// the same directory. The child prints "ok <seq> <id>" for every record
// whose Append returned nil; the parent then checks that every such record
// survives with exactly its content.
const (
	crashDirEnv   = "NARAD_WAL_CRASH_DIR"
	crashRoundEnv = "NARAD_WAL_CRASH_ROUND"
	crashRounds   = 5
)

// Small segments so rotation and deletion happen under the kills too.
var crashOpts = Options{SegmentBytes: 32 << 10, RotateDispatchedBytes: 8 << 10}

// crashRecord derives every field of a record from its id, so any record
// found on disk can be checked on its own (the id leads the payload).
func crashRecord(id string) Record {
	h := fnv.New64a()
	h.Write([]byte(id))
	x := h.Sum64()
	payload := []byte(id + ":")
	for i := range int(x % 3000) {
		payload = append(payload, byte('a'+(x>>uint(i%50)+uint64(i))%26))
	}
	r := Record{
		Topic:      "topic-" + strconv.Itoa(int(x%5)),
		Partition:  int32(x % 13),
		AcceptedAt: int64(x >> 20),
		Payload:    payload,
	}
	if x%3 != 0 {
		r.Key = []byte("key-" + id)
	}
	return r
}

// checkCrashRecord returns the record's id if its content is what the id
// implies.
func checkCrashRecord(r Record) (string, error) {
	id, _, ok := bytes.Cut(r.Payload, []byte(":"))
	if !ok {
		return "", fmt.Errorf("seq %d: payload %.40q carries no id", r.Seq, r.Payload)
	}
	if want := crashRecord(string(id)); !sameRecord(r, want) {
		return "", fmt.Errorf("seq %d: content does not match id %s", r.Seq, id)
	}
	return string(id), nil
}

// TestCrashChild is the child side. It appends from several goroutines
// forever and dispatches behind them, until it is killed.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("runs only as the child of TestCrashRecovery")
	}
	round := os.Getenv(crashRoundEnv)
	var outMu sync.Mutex
	say := func(format string, args ...any) {
		line := fmt.Sprintf(format+"\n", args...)
		outMu.Lock()
		os.Stdout.WriteString(line) // one write per line: the parent sees whole lines
		outMu.Unlock()
	}
	w, err := Open(dir, crashOpts)
	if err != nil {
		say("bad open: %v", err)
		os.Exit(2)
	}
	say("ready %d %d", w.Checkpoint(), w.LastSeq())

	// Dispatcher: replays from the checkpoint, validates what it reads and
	// checkpoints with a lag so a tail is always left to replay.
	lag := uint64(300)
	if r, _ := strconv.Atoi(round); r%2 == 0 {
		lag = 0 // fully dispatched: exercises rotation of the active segment
	}
	go func() {
		next := w.Checkpoint()
		for {
			ch := w.Notify()
			recs, err := w.Read(next, 100, 64<<10)
			if err != nil {
				say("bad read %d: %v", next, err)
				return
			}
			for _, r := range recs {
				if _, err := checkCrashRecord(r); err != nil || r.Seq != next {
					say("bad record at %d: %v", next, err)
					return
				}
				next++
			}
			if next > lag+1 {
				if err := w.SetCheckpoint(next - lag); err != nil {
					say("bad checkpoint: %v", err)
					return
				}
			}
			if len(recs) == 0 {
				select {
				case <-ch:
				case <-time.After(50 * time.Millisecond):
				}
			}
		}
	}()

	for g := range 6 {
		go func() {
			for n := 0; ; n++ {
				recs := make([]Record, 1+n%3)
				for k := range recs {
					recs[k] = crashRecord(fmt.Sprintf("r%sg%dn%dk%d", round, g, n, k))
				}
				if err := w.Append(context.Background(), recs); err != nil {
					say("bad append: %v", err)
					return
				}
				for _, r := range recs {
					id, _, _ := bytes.Cut(r.Payload, []byte(":"))
					say("ok %d %s", r.Seq, id)
				}
			}
		}()
	}
	// Never outlive a parent that lost track of us.
	time.Sleep(30 * time.Second)
	say("bad: child was not killed")
	os.Exit(3)
}

func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	acked := make(map[uint64]string) // seq -> id, over all rounds

	for round := 1; round <= crashRounds; round++ {
		killAfter := 20 + rng.IntN(800)
		n := runCrashRound(t, dir, round, killAfter, acked)
		t.Logf("round %d: killed after %d acks (target %d), %d acked in total", round, n, killAfter, len(acked))
	}

	w := openT(t, dir, crashOpts)
	from, last := w.Checkpoint(), w.LastSeq()
	recs := readAll(t, w, from)
	if uint64(len(recs)) != last-from+1 {
		t.Fatalf("replayed %d records from checkpoint %d, LastSeq %d", len(recs), from, last)
	}
	for i, r := range recs {
		if r.Seq != from+uint64(i) {
			t.Fatalf("replay position %d has seq %d, want %d", i, r.Seq, from+uint64(i))
		}
		id, err := checkCrashRecord(r)
		if err != nil {
			t.Fatalf("garbage in replay: %v", err)
		}
		if want, ok := acked[r.Seq]; ok && want != id {
			t.Fatalf("seq %d holds %s, but %s was acknowledged with it", r.Seq, id, want)
		}
	}
	verifiable := 0
	for seq := range acked {
		if seq > last {
			t.Errorf("acknowledged seq %d lost: LastSeq is %d", seq, last)
		}
		if seq >= from {
			verifiable++ // its content was checked above, by position
		}
	}
	if verifiable == 0 {
		t.Fatalf("test premise: no acknowledged record above checkpoint %d to verify", from)
	}
}

// runCrashRound starts a child on dir, kills it with SIGKILL once it has
// acknowledged killAfter records, and adds every acknowledgement it printed
// to acked. It returns how many it printed.
func runCrashRound(t *testing.T, dir string, round, killAfter int, acked map[uint64]string) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, crashRoundEnv+"="+strconv.Itoa(round))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()

	n, killed := 0, false
	deadline := time.After(20 * time.Second)
	for line := range chanUntil(t, lines, deadline, cmd) {
		f := strings.Fields(line)
		switch {
		case len(f) == 3 && f[0] == "ok":
			seq, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				t.Fatalf("round %d: bad line %q", round, line)
			}
			if prev, dup := acked[seq]; dup {
				t.Fatalf("round %d: seq %d acknowledged twice (%s, then %s)", round, seq, prev, f[2])
			}
			acked[seq] = f[2]
			n++
			if n == killAfter && !killed {
				cmd.Process.Kill() // SIGKILL: no chance to flush or close
				killed = true
			}
		case len(f) > 0 && f[0] == "bad":
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("round %d: child reported %q\nstderr:\n%s", round, line, stderr.String())
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("round %d: child exited (%v) after %d acks without being killed\nstderr:\n%s", round, err, n, stderr.String())
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("round %d: child ended with %v, want SIGKILL\nstderr:\n%s", round, err, stderr.String())
	}
	return n
}

// chanUntil yields the child's lines until its stdout closes, failing the
// test (and killing the child) if that takes past deadline.
func chanUntil(t *testing.T, lines <-chan string, deadline <-chan time.Time, cmd *exec.Cmd) func(func(string) bool) {
	return func(yield func(string) bool) {
		for {
			select {
			case line, ok := <-lines:
				if !ok || !yield(line) {
					return
				}
			case <-deadline:
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatal("crash round timed out")
			}
		}
	}
}
