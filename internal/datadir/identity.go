package datadir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/narad-io/narad/internal/vfs"
)

// IDFile is the file under the data directory that names its node.
const IDFile = "node-id"

// Claim returns the node id dir belongs to, writing configured there on
// the first start. explicit says the id was configured (NARAD_NODE_ID, the
// file or a flag) rather than defaulted from the host name: a configured
// id that differs from the stored one is an error, a defaulted one yields
// to it. stored reports that the id came from the file and differs from
// configured (the caller logs it).
func Claim(dir, configured string, explicit bool) (id string, stored bool, err error) {
	path := filepath.Join(dir, IDFile)
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		// A new directory (or one wiped): its disk id first, so a
		// directory with a node id and no disk id is one from before disk
		// ids (ClaimDisk). One already there is kept.
		if _, err := readDisk(dir); errors.Is(err, os.ErrNotExist) {
			if _, err := writeDisk(dir); err != nil {
				return "", false, err
			}
		}
		if err := writeID(dir, configured); err != nil {
			return "", false, err
		}
		return configured, false, nil
	case err != nil:
		return "", false, fmt.Errorf("reading the node id of the data directory (%s): %w", IDFile, err)
	}
	have := strings.TrimSpace(string(b))
	if have == "" {
		return "", false, fmt.Errorf("the node id file %s in the data directory is empty: "+
			"write this node's id into it, or remove it to have the configured id (%q) recorded", IDFile, configured)
	}
	if have == configured {
		return have, false, nil
	}
	if explicit {
		return "", false, fmt.Errorf("this data directory belongs to node %q (file %s) but this node is configured as %q (NARAD_NODE_ID / node_id): "+
			"start it as %q, or point NARAD_DATA_DIR at %q's own data directory; a node must never change its id", have, IDFile, configured, have, configured)
	}
	return have, true, nil
}

func writeID(dir, id string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("data directory: %w", err)
	}
	if err := vfs.WriteFileAtomic(vfs.Default, filepath.Join(dir, IDFile), []byte(id+"\n")); err != nil {
		return fmt.Errorf("recording the node id (%s): %w", IDFile, err)
	}
	return nil
}
