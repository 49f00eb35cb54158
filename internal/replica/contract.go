package replica

import (
	"context"
	"time"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/storage"
)

// Log is what replication needs of a partition log opened held
// (storage.Options.Held): commits are durable on return but become visible
// to readers only when Release says a quorum has them.
type Log interface {
	// End is the local durable end: one past the last record fsynced here.
	// It is this replica's own acknowledgement: the committed point never
	// passes a leader's End.
	End() uint64
	// Written is one past the last record written here, durable or not:
	// Written() >= End(). A crash may take back the records between them;
	// a follower's Append makes its records durable at once (End ==
	// Written), a leader's own commit may be read (ReadTo) before it is.
	Written() uint64
	// HWM is the visible high watermark (the committed point as this
	// replica last learned it); HWM() <= End().
	HWM() uint64
	// Release moves the visible high watermark up to min(upTo, End()) and
	// wakes readers; it never moves it down.
	Release(upTo uint64) error
	// Append writes records a leader committed, keeping their Offset and
	// CommittedAt (the first must be End()), durable on return.
	Append(recs []storage.Record) error
	// TruncateTo cuts every local record at or past off; it refuses (and
	// changes nothing) when off < HWM().
	TruncateTo(off uint64) error
	// ReadTo reads committed and uncommitted records from `from` up to
	// Written() (what a follower fetches), within the caps.
	ReadTo(from uint64, maxRecords, maxBytes int) ([]storage.Record, error)
	// ReadFrames is ReadTo as the log stores them: whole frames from the
	// one that begins at `from`, within maxBytes (at least one); nothing
	// (nil, nil) when frames cannot serve that fetch, which then reads
	// records (storage.Log.ReadFrames).
	ReadFrames(from uint64, maxBytes int) ([]byte, error)
	// AppendFrames is Append of what a leader's ReadFrames returned,
	// written as it came, durable on return; it returns how many records
	// it appended, and refuses whole (changing nothing) frames that do not
	// check or do not continue the log.
	AppendFrames(frames []byte) (int, error)
	// EndNotify is closed when Written() next moves (a fetch long-poll).
	// End() catching up with it wakes nothing: a leader takes its own
	// acknowledgement when a producer waits (Leader.WaitCommitted).
	EndNotify() <-chan struct{}
	// ReplicaState and SaveReplicaState are the replica's own small file
	// (storage: replica.state): the last epoch it wrote records in and a
	// checkpoint of the committed point.
	ReplicaState() storage.ReplicaState
	SaveReplicaState(storage.ReplicaState) error
}

// View is one partition's placement as this node's metastore replica
// knows it.
type View struct {
	Topic       string
	Incarnation uint64
	Partition   int
	Leader      string
	Epoch       uint64
	Replicas    []string
	InSync      []string
	EpochStarts []meta.EpochStart
	// InSyncVersion is the placement's meta.Assignment.InSyncVersion: an
	// in-sync proposal names the one it was decided on.
	InSyncVersion uint64
}

// ViewOf is the View of a placement.
func ViewOf(incarnation uint64, a meta.Assignment) View {
	return View{Topic: a.Topic, Incarnation: incarnation, Partition: a.Partition, Leader: a.Owner,
		Epoch: a.LeaderEpoch, Replicas: a.Replicas, InSync: a.InSync, EpochStarts: a.EpochStarts, InSyncVersion: a.InSyncVersion}
}

// FetchRequest is a follower asking the leader for records from Offset.
// Offset is the follower's durable end: everything below it is fsynced
// there, which is the follower's acknowledgement. DiskID names the disk
// it is durable on (datadir.Disk): an acknowledgement counts only for
// that disk, and the leader names it when it adds the follower to the
// in-sync set.
type FetchRequest struct {
	Topic       string
	Incarnation uint64
	Partition   int
	Epoch       uint64 // the epoch the follower believes current
	Follower    string // node id
	DiskID      string // the follower's data directory ("" before disk ids)
	Offset      uint64
	MaxBytes    int
	Wait        time.Duration // long-poll bound when nothing is past Offset
	// StateVersion is the Version of the leader's SideState this follower
	// last applied in this epoch (0: none): the leader sends its state
	// again only when its version differs.
	StateVersion uint64
	// Frames says the follower takes the leader's frames as stored
	// (FetchResponse.Frames), in the frame format of the release that
	// added it (node RPC's FetchRequest.frames says what a later release
	// owes such a follower). A follower of a release before them does
	// not say so, and is sent records.
	Frames bool
}

// FetchResponse carries records from the requested offset and the
// leader's committed point. Frontier is the leader's consumer frontier as
// last persisted (0: unknown), which a follower keeps for a takeover.
// StateVersion, Counts and Cursors are the leader's SideState, present
// (StateVersion != 0) only when its version differs from the request's.
// Frames, when the request took them and the leader could serve them,
// are the records from the requested offset as the leader's log stores
// them (Log.ReadFrames); Records is empty then.
type FetchResponse struct {
	Epoch        uint64
	Committed    uint64
	Records      []storage.Record
	Frames       []byte
	Frontier     uint64
	StateVersion uint64
	Counts       []storage.CountEntry
	Cursors      []CursorPosition
}

// SideState is the state of a partition's readers that lives beside its
// log on the leader and must follow the leadership (docs/replication.md): the
// delivery counts of its unsettled records (delivery.counts) and the
// positions of the fan-out cursors that copy it into its children (their
// cursor files). The leader snapshots it at most once per persistence
// interval; Version changes whenever the snapshot does, and is never reused
// by a later leadership of the same node (it starts from the clock), so a
// follower's echo of it is never mistaken for a newer state.
type SideState struct {
	Version uint64
	Counts  []storage.CountEntry
	Cursors []CursorPosition
}

// CursorPosition is one fan-out cursor of the partition as its file holds
// it: the child it copies into, the child's attach epoch, the next parent
// offset to copy. An alias of an unnamed struct, declared field for field
// in node RPC and package fanout too: the conversions between the three
// stop compiling if they drift apart, and none imports the others.
type CursorPosition = struct {
	Child      string
	Epoch      string
	NextOffset uint64
}

// Transport reaches a partition's leader (node RPC in a cluster).
type Transport interface {
	Fetch(ctx context.Context, leader string, req FetchRequest) (FetchResponse, error)
}

// Proposer writes replication's commands to the metastore; each is
// checked where it applies (meta), so a stale proposer changes nothing.
type Proposer interface {
	// SetInSync replaces the in-sync set by the rule of
	// meta.SetInSyncCmd.Apply: refused unless the leader leads at the
	// epoch, is in the set now, and decided on the set that is current
	// (From); a member it adds must have fetched from its recorded disk
	// (Disks) up to the committed point (Acked, Committed), so neither a
	// replaced disk nor a stale view re-admits a copy that lacks
	// acknowledged records.
	SetInSync(ctx context.Context, c meta.SetInSyncCmd) error
	// StartEpoch records where the leader of epoch begins writing;
	// refused unless leader leads at epoch and no start is recorded for it.
	StartEpoch(ctx context.Context, topic string, partition int, epoch uint64, leader string, offset uint64) error
	// RenewEpoch makes leader, which leads at epoch, the leader of
	// epoch+1 (meta.RenewEpochCmd); refused unless it leads at epoch and
	// is in the in-sync set.
	RenewEpoch(ctx context.Context, topic string, partition int, epoch uint64, leader string) error
}
