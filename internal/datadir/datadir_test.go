package datadir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestClaimRecordsThenHolds(t *testing.T) {
	dir := t.TempDir()
	id, stored, err := Claim(dir, "n1", true)
	if err != nil || id != "n1" || stored {
		t.Fatalf("first claim = %q %v %v", id, stored, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, IDFile)); strings.TrimSpace(string(b)) != "n1" {
		t.Fatalf("%s holds %q", IDFile, b)
	}
	if id, _, err := Claim(dir, "n1", true); err != nil || id != "n1" {
		t.Fatalf("same id again = %q %v", id, err)
	}
}

func TestClaimRefusesAnotherConfiguredID(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Claim(dir, "n1", true); err != nil {
		t.Fatal(err)
	}
	_, _, err := Claim(dir, "n2", true)
	if err == nil {
		t.Fatal("a different configured id was accepted")
	}
	for _, want := range []string{`"n1"`, `"n2"`, IDFile, "NARAD_NODE_ID"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}

// The default id is the host name, which changes when a container is
// recreated: the stored id wins over a defaulted one.
func TestClaimDefaultedIDYieldsToStored(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Claim(dir, "old-host", false); err != nil {
		t.Fatal(err)
	}
	id, stored, err := Claim(dir, "new-host", false)
	if err != nil || id != "old-host" || !stored {
		t.Fatalf("defaulted claim = %q %v %v, want the stored old-host", id, stored, err)
	}
}

func TestClaimEmptyFileIsAnError(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, IDFile), []byte("\n"), 0o644)
	if _, _, err := Claim(dir, "n1", false); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("empty id file: %v", err)
	}
}

func withTopic(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "topics", name, "p00000"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestCheckOrphans(t *testing.T) {
	empty := t.TempDir()
	full := t.TempDir()
	withTopic(t, full, "orders")
	withTopic(t, full, "events")
	cases := []struct {
		name      string
		dir       string
		hasState  bool
		policy    string
		wantAdopt bool
		wantErr   string
	}{
		{"fresh install", empty, false, "", false, ""},
		{"metastore intact", full, true, "", false, ""},
		{"lost metastore refused by default", full, false, "", false, "no metastore state"},
		{"lost metastore refused explicitly", full, false, OrphanRefuse, false, "recovery.orphan_data"},
		{"adopt", full, false, OrphanAdopt, true, ""},
		{"discard", full, false, OrphanDiscard, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			adopt, err := CheckOrphans(c.dir, c.hasState, c.policy)
			if adopt != c.wantAdopt {
				t.Errorf("adopt = %v, want %v", adopt, c.wantAdopt)
			}
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("error = %v, want one containing %q", err, c.wantErr)
			}
			if err != nil && !strings.Contains(err.Error(), "events, orders") {
				t.Errorf("error does not name the topics: %v", err)
			}
		})
	}
}

// A second holder of a data directory is refused at once, by the pid of
// the first; once the first lets go (or dies: the kernel drops its flock)
// the directory can be taken again.
func TestLockRefusesASecondHolderByPid(t *testing.T) {
	dir := t.TempDir()
	l, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Lock(dir)
	want := fmt.Sprintf("data directory %s is in use by pid %d", dir, os.Getpid())
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "NARAD_DATA_DIR") {
		t.Fatalf("second Lock: %v, want %q and the setting to change", err, want)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2, err := Lock(dir)
	if err != nil {
		t.Fatalf("Lock after the first holder closed: %v", err)
	}
	l2.Close()
}

func TestDiskIDWrittenWithTheNodeIDAndKept(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Claim(dir, "n1", true); err != nil {
		t.Fatal(err)
	}
	d, err := ClaimDisk(dir)
	if err != nil || !validDiskID(d.ID) || d.Upgraded {
		t.Fatalf("disk of a new directory = %+v %v, want a fresh id, not upgraded", d, err)
	}
	if _, _, err := Claim(dir, "n1", true); err != nil {
		t.Fatal(err)
	}
	if again, err := ClaimDisk(dir); err != nil || again != d {
		t.Fatalf("disk on a later start = %+v %v, want %+v", again, err, d)
	}
}

// A wiped directory is a new one: same configured node id, a new disk.
func TestWipedDirectoryGetsANewDiskID(t *testing.T) {
	dir := t.TempDir()
	Claim(dir, "n1", true)
	before, _ := ClaimDisk(dir)
	os.RemoveAll(dir)
	if _, _, err := Claim(dir, "n1", true); err != nil {
		t.Fatal(err)
	}
	after, err := ClaimDisk(dir)
	if err != nil || after.ID == before.ID || after.Upgraded {
		t.Fatalf("disk after a wipe = %+v %v (before %+v), want a new id", after, err, before)
	}
}

// A directory written before disk ids (node-id, no disk-id) gets one,
// marked upgraded; the next start reads it back.
func TestDiskIDOfAnUpgradedDirectory(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, IDFile), []byte("n1\n"), 0o644)
	if _, _, err := Claim(dir, "n1", true); err != nil {
		t.Fatal(err)
	}
	d, err := ClaimDisk(dir)
	if err != nil || !d.Upgraded || !validDiskID(d.ID) {
		t.Fatalf("disk of an old directory = %+v %v, want a new id, upgraded", d, err)
	}
	if again, err := ClaimDisk(dir); err != nil || again.ID != d.ID || again.Upgraded {
		t.Fatalf("next start = %+v %v, want %s, not upgraded", again, err, d.ID)
	}
}

func TestBadDiskIDFileIsAnErrorAndKept(t *testing.T) {
	dir := t.TempDir()
	Claim(dir, "n1", true)
	path := filepath.Join(dir, DiskFile)
	os.WriteFile(path, []byte("garbage\n"), 0o644)
	if _, err := ClaimDisk(dir); err == nil || !strings.Contains(err.Error(), DiskFile) {
		t.Fatalf("bad disk id file: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "garbage\n" {
		t.Fatalf("the bad file was changed to %q", b)
	}
}

// TestHasDiskThatCannotBeCheckedIsAnError: HasDisk decides whether a node
// that lost its Raft state gets a new disk id. A disk id file that cannot
// be checked (a symlink loop: ELOOP) is an error, not "none"; a missing
// one is none.
func TestHasDiskThatCannotBeCheckedIsAnError(t *testing.T) {
	dir := t.TempDir()
	if has, err := HasDisk(dir); has || err != nil {
		t.Fatalf("empty directory: %v %v, want false, nil", has, err)
	}
	if err := os.Symlink(DiskFile, filepath.Join(dir, DiskFile)); err != nil {
		t.Fatal(err)
	}
	if has, err := HasDisk(dir); err == nil {
		t.Fatalf("a disk id file that cannot be checked: %v, nil; want an error", has)
	}
	if err := os.Remove(filepath.Join(dir, DiskFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := ClaimDisk(dir); err != nil {
		t.Fatal(err)
	}
	if has, err := HasDisk(dir); !has || err != nil {
		t.Fatalf("after a claim: %v %v, want true, nil", has, err)
	}
}
