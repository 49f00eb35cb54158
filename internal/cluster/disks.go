package cluster

import (
	"context"
	"fmt"

	"github.com/narad-io/narad/internal/meta"
)

// Disk identity on the controller (datadir.Disk, meta.ReplaceDisk). A
// member that announces another disk than the one recorded for it lost
// its data directory: its copies of replicated partitions are gone. The
// leader records the new disk — which takes the node out of every in-sync
// set — before it counts the heartbeat as heard, so the node's lease
// (Fenced) is not renewed while the metastore still counts its old
// copies, and no election picks it meanwhile.

// admitDisk notes the disk id m announces and, when it differs from the
// one recorded, applies ReplaceDisk; an error means the heartbeat (or
// join) must not count. A member with no recorded disk (new, or from
// before disk ids) is recorded with its first one by the upsert.
func (n *Node) admitDisk(ctx context.Context, m meta.Member) error {
	n.noteDisk(m.ID, m.DiskID)
	old, ok := n.Meta.Member(m.ID)
	if !ok || old.DiskID == "" || m.DiskID == "" || old.DiskID == m.DiskID {
		return nil
	}
	if err := n.Meta.ReplaceDisk(ctx, m.ID, old.DiskID, m.DiskID); err != nil {
		return fmt.Errorf("recording the new disk of %s: %w", m.ID, err)
	}
	n.Log.Warn("member came back on a new disk: its copies leave every in-sync set", "member", m.ID,
		"old_disk", old.DiskID, "disk", m.DiskID)
	return nil
}

func (n *Node) noteDisk(id, disk string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.lastDisk == nil {
		n.lastDisk = map[string]string{}
	}
	n.lastDisk[id] = disk
}

// onRecordedDisk reports whether m's latest heartbeat to this leader
// announced the disk recorded for it: only such a member may be elected
// (a new disk not recorded yet holds none of its old copies).
func (n *Node) onRecordedDisk(m meta.Member) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	d, ok := n.lastDisk[m.ID]
	return ok && d == m.DiskID
}

// ownDiskRecorded reports whether this node's metastore replica records
// the disk it runs on: until it does, the replica may still count this
// node's copies from a disk it no longer has (Fenced).
func (n *Node) ownDiskRecorded() bool {
	if n.Self.DiskID == "" {
		return true
	}
	m, ok := n.Meta.Member(n.Self.ID)
	return ok && m.DiskID == n.Self.DiskID
}
