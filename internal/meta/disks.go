package meta

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
)

// Disk identity (datadir.Disk; Kafka's directory ids, KIP-858). A node
// whose data directory was wiped or replaced comes back under the same id
// with empty logs. Its member record names the disk it ran on; the
// controller, hearing a heartbeat with another disk id, applies
// ReplaceDisk, which records the new id and takes the node out of every
// in-sync set in the same step, so no election picks it and no commit
// counts it. A leader re-admits it (SetInSync) only naming the disk it saw
// fetching, which must be the recorded one.
//
// The upgrade gap: a member recorded before disk ids has none, and takes
// the first one it announces on its word; a disk lost before that first
// announcement is not detected.

// ReplaceDiskCmd records that Node now runs on Disk, in place of Previous
// (the recorded id the controller saw).
type ReplaceDiskCmd struct {
	Node     string `json:"node"`
	Previous string `json:"previous"`
	Disk     string `json:"disk"`
}

func applyReplaceDisk(a *applyTx, payload json.RawMessage) error {
	var c ReplaceDiskCmd
	if err := decodePayload(OpReplaceDisk, payload, &c); err != nil {
		return err
	}
	if c.Node == "" || c.Disk == "" {
		return invalidf("replace-disk needs a node and a disk id")
	}
	m, ok, err := a.member(c.Node)
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("meta: member %q: %w", c.Node, ErrNotFound)
	case m.DiskID == c.Disk:
		return nil // a retry of a replacement already applied
	case m.DiskID != c.Previous:
		return fmt.Errorf("meta: member %q: %w: runs on disk %q, not %q", c.Node, ErrConflict, m.DiskID, c.Previous)
	}
	m.DiskID = c.Disk
	if err := a.putMember(m); err != nil {
		return err
	}
	a.bump(domHeartbeats) // a disk routes nothing (routingEqual)
	return a.forgetCopies(c.Node)
}

// forgetCopies takes node out of the in-sync set of every replicated
// partition, even below a majority: its copies are gone, and a set that
// still named it would let it be elected (or count towards a commit)
// with none of the acknowledged records. A partition it leads keeps it
// as leader, outside its in-sync set, until the controller elects a
// member of the set (failover).
func (a *applyTx) forgetCopies(node string) error {
	var topics []string
	err := a.tx.Bucket(bucketAssignments).ForEach(func(k, _ []byte) error {
		topics = append(topics, string(k))
		return nil
	})
	if err != nil {
		return err
	}
	for _, topic := range topics {
		as, err := a.assignments(topic)
		if err != nil {
			return err
		}
		changed := false
		for i := range as {
			if as[i].Replicated() && slices.Contains(as[i].InSync, node) {
				as[i].InSync = slices.DeleteFunc(slices.Clone(as[i].InSync), func(id string) bool { return id == node })
				changed = true
			}
		}
		if changed {
			if err := a.putPlacement(topic, as); err != nil {
				return err
			}
		}
	}
	return nil
}

// ReplaceDisk records that node now runs on disk in place of previous
// (the recorded id the caller saw; ErrConflict if another is recorded, a
// no-op if disk already is) and takes node out of every in-sync set. The
// controller's (leader only), before it counts a heartbeat from the new
// disk.
func (s *Store) ReplaceDisk(ctx context.Context, node, previous, disk string) error {
	return s.propose(ctx, OpReplaceDisk, ReplaceDiskCmd{Node: node, Previous: previous, Disk: disk})
}
