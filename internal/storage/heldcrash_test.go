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

// The held crash test runs a follower's writes in a child process (this
// test binary, re-executed) — Appends of a leader's records, TruncateTo
// back to a random point at or past the HWM, Release and a checkpoint now
// and then — and SIGKILLs it at random moments. What the child printed
// after a call returned is acknowledged: the reopened log must hold every
// acknowledged Append at its offsets (unless a truncation cut it since:
// one acknowledged, or one the kill interrupted, which may be done or
// not), must never again hold a record a truncation was seen to cut, must
// be contiguous with commit times never decreasing, and must never report
// a shortfall.

const heldCrashDirEnv = "NARAD_STORAGE_HELD_CRASH_DIR"

func heldCrashOpts() Options { return Options{Held: true, SegmentBytes: 16 << 10} }

func TestHeldCrashChild(t *testing.T) {
	dir := os.Getenv(heldCrashDirEnv)
	if dir == "" {
		t.Skip("child process of TestHeldCrashKillDuringAppendAndTruncate")
	}
	round := os.Getenv("NARAD_STORAGE_HELD_CRASH_ROUND")
	l, err := Open(dir, heldCrashOpts())
	if err != nil {
		fmt.Println("open-error", err)
		os.Exit(3)
	}
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintf(out, "open %d %d\n", l.End(), l.HWM())
	out.Flush()
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	last := func() int64 { // the newest record's time: where the leader's clock continues
		if l.End() == 0 {
			return 0
		}
		r, err := l.ReadTo(l.End()-1, 1, 1)
		if err != nil || len(r) == 0 {
			fmt.Println("read-error", err)
			os.Exit(5)
		}
		return r[0].CommittedAt
	}
	at := last()
	for w := 0; ; w++ {
		end, hwm := l.End(), l.HWM()
		switch x := rng.Intn(10); {
		case x == 0 && end > hwm:
			off := max(hwm, end-min(end, uint64(1+rng.Intn(40))))
			// Said before the call: a kill inside it may leave the cut
			// done or not, and either is right.
			fmt.Fprintf(out, "truncating %d\n", off)
			out.Flush()
			if err := l.TruncateTo(off); err != nil {
				fmt.Println("truncate-error", err)
				os.Exit(4)
			}
			at = last()
			fmt.Fprintf(out, "trunc %d\n", off)
		case x == 1:
			c := hwm + uint64(rng.Intn(int(end-hwm)+1))
			l.Release(c)
			if err := l.SaveReplicaState(ReplicaState{LastEpoch: 1, Committed: l.HWM()}); err != nil {
				fmt.Println("state-error", err)
				os.Exit(4)
			}
			fmt.Fprintf(out, "rel %d\n", l.HWM())
		default:
			n := 1 + rng.Intn(20)
			id := fmt.Sprintf("w%s.%d", round, w)
			pad := strings.Repeat("p", rng.Intn(1500))
			batch := make([]Record, n)
			for i := range batch {
				at += int64(rng.Intn(3))
				o := end + uint64(i)
				batch[i] = Record{Offset: o, CommittedAt: at, Payload: []byte(fmt.Sprintf("%s-o%d-%s", id, o, pad))}
			}
			if err := l.Append(batch); err != nil {
				fmt.Println("append-error", err)
				os.Exit(4)
			}
			fmt.Fprintf(out, "ok %d %d %s\n", end, n, id)
		}
		out.Flush()
	}
}

func TestHeldCrashKillDuringAppendAndTruncate(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test spawns processes")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	acked := map[uint64]string{} // offset → id of the acknowledged write there; "?" unknown
	cut := map[string]bool{}     // "id@offset" an acknowledged truncation removed: never seen again
	var ackedEnd, committed uint64
	pending := uint64(1<<64 - 1) // a truncation under way: the cut may be done or not
	truncs := 0
	for round := 0; round < 6; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHeldCrashChild$", "-test.v=false")
		cmd.Env = append(os.Environ(), heldCrashDirEnv+"="+dir, fmt.Sprintf("NARAD_STORAGE_HELD_CRASH_ROUND=%d", round))
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		killAfter := 20 + rng.Intn(300)
		sc := bufio.NewScanner(stdout)
		seen, killed := 0, false
		for sc.Scan() {
			var a, b uint64
			var id string
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "open "):
				fmt.Sscanf(line, "open %d %d", &a, &b)
				if a < min(ackedEnd, pending) || b < min(committed, a) {
					t.Fatalf("round %d opened at end %d, hwm %d; acknowledged end %d, truncation under way to %d, checkpoint %d",
						round, a, b, ackedEnd, pending, committed)
				}
				for o := a; o < ackedEnd; o++ { // the truncation under way was done
					cut[fmt.Sprintf("%s@%d", acked[o], o)] = true
					delete(acked, o)
				}
				pending = 1<<64 - 1
				for o := ackedEnd; o < a; o++ {
					acked[o] = "?" // written, never acknowledged: either way is right
				}
				ackedEnd = a
				continue
			case strings.HasPrefix(line, "truncating "):
				fmt.Sscanf(line, "truncating %d", &pending)
				continue
			case strings.HasPrefix(line, "trunc "):
				fmt.Sscanf(line, "trunc %d", &a)
				for o := a; o < ackedEnd; o++ {
					cut[fmt.Sprintf("%s@%d", acked[o], o)] = true
					delete(acked, o)
				}
				ackedEnd = a
				pending = 1<<64 - 1
				truncs++
			case strings.HasPrefix(line, "rel "):
				fmt.Sscanf(line, "rel %d", &committed)
			case strings.HasPrefix(line, "ok "):
				if _, err := fmt.Sscanf(line, "ok %d %d %s", &a, &b, &id); err != nil {
					t.Fatalf("bad line %q", line)
				}
				if a != ackedEnd {
					t.Fatalf("append at %d after an acknowledged end %d", a, ackedEnd)
				}
				for o := a; o < a+b; o++ {
					acked[o] = id
				}
				ackedEnd = a + b
			default:
				if strings.Contains(line, "-error") {
					t.Fatalf("child: %s", line)
				}
				continue // test framework chatter
			}
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
	}

	var shortfalls int
	opts := heldCrashOpts()
	opts.Hooks.Shortfall = func() { shortfalls++ }
	l := openT(t, dir, opts)
	defer l.Close()
	if shortfalls != 0 || l.End() < min(ackedEnd, pending) || l.HWM() < min(committed, l.End()) {
		t.Fatalf("reopened: end %d, hwm %d, %d shortfalls; acknowledged end %d, truncation under way to %d, checkpoint %d",
			l.End(), l.HWM(), shortfalls, ackedEnd, pending, committed)
	}
	all, err := l.ReadTo(0, 1<<30, 1<<40)
	if err != nil || uint64(len(all)) != l.End() {
		t.Fatalf("read %d records to end %d: %v", len(all), l.End(), err)
	}
	for i, r := range all {
		var o uint64
		var id string
		p := string(r.Payload)
		if k := strings.Index(p, "-o"); k < 0 {
			t.Fatalf("offset %d holds %.30q", i, p)
		} else if id = p[:k]; true {
			fmt.Sscanf(p[k:], "-o%d-", &o)
		}
		if o != uint64(i) || r.Offset != uint64(i) {
			t.Fatalf("offset %d holds the record written at %d", i, o)
		}
		if i > 0 && r.CommittedAt < all[i-1].CommittedAt {
			t.Fatalf("commit time decreased at offset %d", i)
		}
		if cut[fmt.Sprintf("%s@%d", id, i)] {
			t.Fatalf("offset %d holds write %s, which an acknowledged truncation cut", i, id)
		}
		if want, ok := acked[uint64(i)]; ok && want != "?" && want != id {
			t.Fatalf("offset %d holds write %s, the acknowledged one there was %s", i, id, want)
		}
	}
	t.Logf("%d records, %d acknowledged truncations, after 6 SIGKILLs", len(all), truncs)
}
