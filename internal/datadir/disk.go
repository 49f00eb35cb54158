package datadir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/narad-io/narad/internal/vfs"
)

// DiskFile is the file under the data directory that names this copy of
// the node's data: a random id written once, when the directory is
// created. A wiped or replaced directory comes back with the same node id
// (configured) but a new disk id, which is how the metastore learns that
// the node's copies of replicated partitions are gone (meta.ReplaceDisk;
// Kafka's directory ids, KIP-858).
const DiskFile = "disk-id"

// Disk is this data directory's disk identity.
type Disk struct {
	ID string
	// Upgraded: the directory held a node id but no disk id (written by a
	// version before disk ids), so one was written now. Its history is
	// unknown: the metastore either has no disk id recorded for the node
	// (it takes this one as the first) or has another one (the node is
	// treated as replaced, which is safe: it catches up and is re-admitted).
	Upgraded bool
	// Renewed: the directory's disk id was replaced by a new one at this
	// start (RenewDisk).
	Renewed bool
}

// ClaimDisk returns the data directory's disk id, after Claim. Claim
// writes one with the node id of a new directory; a directory that has a
// node id but no disk id predates them and gets one now (Upgraded).
func ClaimDisk(dir string) (Disk, error) {
	id, err := readDisk(dir)
	switch {
	case err == nil:
		return Disk{ID: id}, nil
	case !errors.Is(err, os.ErrNotExist):
		return Disk{}, err
	}
	if id, err = writeDisk(dir); err != nil {
		return Disk{}, err
	}
	return Disk{ID: id, Upgraded: true}, nil
}

// HasDisk reports whether the data directory holds a disk id file (call
// it before Claim, which writes one into a new directory). A file that
// cannot be checked is an error, not "none": a node that lost its Raft
// state would keep its old disk id, whose old record would end its
// abstention from metastore elections.
func HasDisk(dir string) (bool, error) {
	_, err := os.Stat(filepath.Join(dir, DiskFile))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// RenewDisk gives the data directory a new disk id. A node whose
// metastore (Raft) state is gone while its data directory stayed must
// not be recognised by its old disk id: a record of that id in the
// metastore may be an entry from long before the loss, and the node
// takes the record of its disk as proof that its log holds everything
// committed before it lost its state (meta's abstention from elections).
// With a new id the proof is an entry written after the loss; the
// cluster also treats its partition copies as new (caught up again).
func RenewDisk(dir string) (Disk, error) {
	id, err := writeDisk(dir)
	if err != nil {
		return Disk{}, err
	}
	return Disk{ID: id, Renewed: true}, nil
}

func readDisk(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, DiskFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		return "", fmt.Errorf("reading the disk id of the data directory (%s): %w", DiskFile, err)
	}
	id := strings.TrimSpace(string(b))
	if !validDiskID(id) {
		// Never replaced silently: a new id would tell the cluster this
		// node's copies are gone.
		return "", fmt.Errorf("the disk id file %s in the data directory holds %q, not a disk id: "+
			"restore it, or remove it to have the node treated as holding a new disk (its replicas are caught up again)", DiskFile, id)
	}
	return id, nil
}

// writeDisk writes a new random disk id (fsynced, atomic).
func writeDisk(dir string) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("drawing a disk id: %w", err)
	}
	id := hex.EncodeToString(b[:])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("data directory: %w", err)
	}
	if err := vfs.WriteFileAtomic(vfs.Default, filepath.Join(dir, DiskFile), []byte(id+"\n")); err != nil {
		return "", fmt.Errorf("recording the disk id (%s): %w", DiskFile, err)
	}
	return id, nil
}

func validDiskID(id string) bool {
	if len(id) != 32 {
		return false
	}
	_, err := hex.DecodeString(id)
	return err == nil
}
