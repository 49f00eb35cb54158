package meta

import (
	"encoding/json"
	"slices"
)

// Replicated partitions (docs/replication.md; package replica has the
// protocol). A replicated placement's leader, in-sync set, epoch and
// epoch starts change only through the commands here, each checked
// against the placement it applies to: a proposer that acted on a stale
// view (an older epoch, a deposed leader) changes nothing.

const (
	// MaxReplicationFactor is the most copies a topic may keep.
	MaxReplicationFactor = 5
	// MaxEpochStarts is how many EpochStarts a placement keeps; the oldest
	// goes first (a replica whose last epoch is older cuts to its
	// committed checkpoint instead, replica.TruncationPoint).
	MaxEpochStarts = 32
)

// SetInSyncCmd replaces a partition's in-sync set, on the word of the
// leader of Epoch. A copy joins the set only with evidence that it holds
// everything committed, for the disk it has now, and only on a view that
// is not stale:
//
//   - From and FromVersion are the in-sync set and its InSyncVersion as
//     the leader's view held them when it decided; the command is refused
//     (ErrConflict) unless both are current. A leader whose view lags (a
//     ReplaceDisk or a SetReplicas it has not seen) would otherwise "keep"
//     a member the metastore already dropped, which for the metastore is
//     an addition with no evidence at all; and a proposal of the leader's
//     that applied late (after a restart of its process, which then
//     committed records without counting the member it added) would add
//     a member on evidence that no longer holds. Every command with From
//     that applies raises the version, so the first successful proposal
//     of a leader's process fences every earlier one.
//   - Disks names, for followers in the set, the disk id the leader saw in
//     their fetches: a member the command adds is taken only with the disk
//     the metastore records for it (DiskID), so an acknowledgement from a
//     disk since replaced never re-admits it.
//   - Acked is each such follower's acknowledged end on that disk, and
//     Committed the leader's committed point: a member added must have
//     acknowledged at least the committed point and this epoch's start.
//
// A command without From is from a leader that predates these fields
// (the upgrade gap): it is checked as it was then, disks only.
type SetInSyncCmd struct {
	Topic       string            `json:"topic"`
	Partition   int               `json:"partition"`
	Epoch       uint64            `json:"epoch"`
	Leader      string            `json:"leader"`
	InSync      []string          `json:"in_sync"`
	Disks       map[string]string `json:"disks,omitempty"`
	From        []string          `json:"from,omitempty"`
	FromVersion uint64            `json:"from_version,omitempty"`
	Committed   uint64            `json:"committed,omitempty"`
	Acked       map[string]uint64 `json:"acked,omitempty"`
}

// StartEpochCmd records where the leader of Epoch began writing.
type StartEpochCmd struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Epoch     uint64 `json:"epoch"`
	Leader    string `json:"leader"`
	Offset    uint64 `json:"offset"`
}

// ElectLeaderCmd makes To the leader of epoch Epoch+1; the controller
// proposes it with the epoch it saw (ErrConflict once another change
// happened).
type ElectLeaderCmd struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Epoch     uint64 `json:"epoch"`
	To        string `json:"to"`
}

// RenewEpochCmd makes the leader of Epoch the leader of Epoch+1 on its
// own word. A leader's process that restarts proposes it instead of
// writing again in an epoch it began before (package replica, Leader):
// once followers may hold records their leader never made durable, a
// restarted leader's log may end below theirs, and records it wrote again
// at those offsets in the same epoch would differ from theirs with no
// epoch to tell them apart. In the new epoch, whose start the leader
// records at its log end as after any election, a follower's longer tail
// is cut as any divergent tail is. The in-sync set is kept: the leader is
// in it, and its followers' acknowledgements still hold.
type RenewEpochCmd struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Epoch     uint64 `json:"epoch"`
	Leader    string `json:"leader"`
}

// SetReplicasCmd replaces a partition's replicas (a replication factor
// change, a copy moved), at the epoch the controller saw. Leaving names
// the copy being moved off (Assignment.Leaving, leaving.go): set with
// the replacement, kept by every change that keeps the copy; empty once
// the copy goes. Absent from the JSON when empty, so a command without
// one is byte for byte what it was before the field.
type SetReplicasCmd struct {
	Topic     string   `json:"topic"`
	Partition int      `json:"partition"`
	Epoch     uint64   `json:"epoch"`
	Replicas  []string `json:"replicas"`
	Leaving   string   `json:"leaving,omitempty"`
}

// CheckPlacement holds the shape of a placement a create, a growth or the
// controller writes: a single-copy one has none of the replication fields
// (beyond, after a factor lowered to 1, its owner as sole replica); a
// replicated one has distinct replicas with the owner among them, an
// in-sync set of replicas that holds the owner, an epoch, and epoch
// starts of ascending epochs up to it. None names a leaving copy.
func CheckPlacement(topic string, as Assignment) error {
	if as.Leaving != "" {
		return topicErr(topic, ErrInvalid, "partition %d: a placement written whole names no leaving copy (SetReplicas does)", as.Partition)
	}
	if len(as.Replicas) == 0 {
		if len(as.InSync) > 0 || as.LeaderEpoch != 0 || len(as.EpochStarts) > 0 {
			return topicErr(topic, ErrInvalid, "partition %d: replication fields without replicas", as.Partition)
		}
		return nil
	}
	switch {
	case as.Owner == "":
		return topicErr(topic, ErrInvalid, "partition %d: replicas without a leader", as.Partition)
	case !distinct(as.Replicas) || len(as.Replicas) > MaxReplicationFactor:
		return topicErr(topic, ErrInvalid, "partition %d: replicas %v are not 1..%d distinct nodes", as.Partition, as.Replicas, MaxReplicationFactor)
	case !slices.Contains(as.Replicas, as.Owner):
		return topicErr(topic, ErrInvalid, "partition %d: leader %q is not among replicas %v", as.Partition, as.Owner, as.Replicas)
	case !subset(as.InSync, as.Replicas) || !slices.Contains(as.InSync, as.Owner):
		return topicErr(topic, ErrInvalid, "partition %d: in-sync set %v is not replicas holding the leader", as.Partition, as.InSync)
	case as.LeaderEpoch == 0:
		return topicErr(topic, ErrInvalid, "partition %d: replicated without a leader epoch", as.Partition)
	case as.Target != "":
		return topicErr(topic, ErrInvalid, "partition %d: a replicated partition does not move (yet)", as.Partition)
	}
	for i, s := range as.EpochStarts {
		if s.Epoch == 0 || s.Epoch > as.LeaderEpoch || (i > 0 && s.Epoch <= as.EpochStarts[i-1].Epoch) {
			return topicErr(topic, ErrInvalid, "partition %d: epoch starts %v not ascending up to epoch %d", as.Partition, as.EpochStarts, as.LeaderEpoch)
		}
	}
	if len(as.EpochStarts) > MaxEpochStarts {
		return topicErr(topic, ErrInvalid, "partition %d: %d epoch starts (max %d)", as.Partition, len(as.EpochStarts), MaxEpochStarts)
	}
	return nil
}

// replicated reads partition p of topic for a replication command: it
// must exist and be replicated, and epoch must be its current one.
func (a *applyTx) replicated(topic string, p int, epoch uint64) ([]Assignment, *Assignment, error) {
	as, err := a.assignment(topic, p)
	if err != nil {
		return nil, nil, err
	}
	if err := atEpoch(topic, as[p], epoch); err != nil {
		return nil, nil, err
	}
	return as, &as[p], nil
}

// atEpoch checks that cur is replicated and at epoch, for a command
// decided at epoch (ErrInvalid, ErrConflict).
func atEpoch(topic string, cur Assignment, epoch uint64) error {
	switch {
	case !cur.Replicated():
		return topicErr(topic, ErrInvalid, "partition %d is not replicated", cur.Partition)
	case cur.LeaderEpoch != epoch:
		return topicErr(topic, ErrConflict, "partition %d is at epoch %d, not %d", cur.Partition, cur.LeaderEpoch, epoch)
	}
	return nil
}

// leads checks that leader leads cur (at the epoch already checked).
func leads(topic string, cur *Assignment, leader string) error {
	if cur.Owner != leader {
		return topicErr(topic, ErrConflict, "partition %d is led by %q, not %q", cur.Partition, cur.Owner, leader)
	}
	return nil
}

func (a *applyTx) putPlacement(topic string, as []Assignment) error {
	if err := a.putAssignments(topic, as); err != nil {
		return err
	}
	a.bump(domAssignments)
	return nil
}

// applyRule replaces partition p of topic by what rule (a command's
// Apply) makes of it; a refusal or an unchanged placement writes nothing.
func (a *applyTx) applyRule(topic string, p int, rule func(Assignment) (Assignment, error)) error {
	as, err := a.assignment(topic, p)
	if err != nil {
		return err
	}
	next, err := rule(as[p])
	if err != nil || next.Equal(as[p]) {
		return err
	}
	as[p] = next
	return a.putPlacement(topic, as)
}

func applySetInSync(a *applyTx, payload json.RawMessage) error {
	var c SetInSyncCmd
	if err := decodePayload(OpSetInSync, payload, &c); err != nil {
		return err
	}
	return a.applyRule(c.Topic, c.Partition, func(cur Assignment) (Assignment, error) {
		return c.Apply(cur, func(id string) (string, error) {
			m, _, err := a.member(id)
			return m.DiskID, err
		})
	})
}

// Apply is cur after the change, or why it is refused: the rule the FSM
// applies, a pure function so that package replica's model proposes
// against the rule itself. diskOf is the disk id the metastore records
// for a node ("" for none: the upgrade gap, taken as it is).
func (c SetInSyncCmd) Apply(cur Assignment, diskOf func(node string) (string, error)) (Assignment, error) {
	// At its epoch only: a leader of an older epoch that leads again (or
	// renewed it) spoke then, not now.
	if err := atEpoch(c.Topic, cur, c.Epoch); err != nil {
		return cur, err
	}
	if err := leads(c.Topic, &cur, c.Leader); err != nil {
		return cur, err
	}
	switch {
	case !distinct(c.InSync) || !subset(c.InSync, cur.Replicas):
		return cur, topicErr(c.Topic, ErrInvalid, "partition %d: in-sync set %v is not distinct replicas of %v", c.Partition, c.InSync, cur.Replicas)
	case !slices.Contains(c.InSync, c.Leader):
		return cur, topicErr(c.Topic, ErrInvalid, "partition %d: in-sync set %v without its leader %q", c.Partition, c.InSync, c.Leader)
	case len(c.InSync) < Majority(len(cur.Replicas)) && len(c.InSync) < len(cur.InSync):
		return cur, topicErr(c.Topic, ErrInvalid, "partition %d: in-sync set %v would shrink below a majority of %d replicas",
			c.Partition, c.InSync, len(cur.Replicas))
	case !slices.Contains(cur.InSync, c.Leader):
		// Its disk was replaced (ReplaceDisk): its copy counts for
		// nothing, so neither does its word; the controller elects another.
		return cur, topicErr(c.Topic, ErrConflict, "partition %d: leader %q is not in the in-sync set %v (its disk was replaced)",
			c.Partition, c.Leader, cur.InSync)
	case c.From != nil && (!sameMembers(c.From, cur.InSync) || c.FromVersion != cur.InSyncVersion):
		return cur, topicErr(c.Topic, ErrConflict, "partition %d: the leader decided on in-sync set %v (version %d), the set is %v (version %d) now",
			c.Partition, c.From, c.FromVersion, cur.InSync, cur.InSyncVersion)
	}
	for _, id := range c.InSync {
		if slices.Contains(cur.InSync, id) {
			continue
		}
		if err := c.checkAdded(cur, id, diskOf); err != nil {
			return cur, err
		}
	}
	cur.InSync = inReplicaOrder(cur.Replicas, c.InSync)
	if c.From != nil {
		cur.InSyncVersion++
	}
	return cur, nil
}

// checkAdded refuses to add id to the in-sync set without the evidence
// SetInSyncCmd describes: its recorded disk named, and (unless the command
// predates From) an acknowledged end on it at or past the committed point
// and this epoch's start.
func (c SetInSyncCmd) checkAdded(cur Assignment, id string, diskOf func(string) (string, error)) error {
	disk, err := diskOf(id)
	if err != nil {
		return err
	}
	if disk != "" && c.Disks[id] != disk {
		return topicErr(c.Topic, ErrConflict, "partition %d: %q runs on disk %q, the leader's fetches from it were from %q "+
			"(a replaced disk is re-admitted only once it fetched)", c.Partition, id, disk, c.Disks[id])
	}
	if c.From == nil {
		return nil
	}
	floor := c.Committed
	for _, s := range cur.EpochStarts {
		if s.Epoch == c.Epoch {
			floor = max(floor, s.Offset)
		}
	}
	if acked, ok := c.Acked[id]; !ok || acked < floor {
		return topicErr(c.Topic, ErrConflict, "partition %d: %q has acknowledged up to %d (known: %v), below the committed point %d "+
			"and the epoch's start", c.Partition, id, c.Acked[id], ok, floor)
	}
	return nil
}

// sameMembers reports whether a and b hold the same ids, in any order.
func sameMembers(a, b []string) bool {
	return len(a) == len(b) && subset(a, b) && distinct(a)
}

func applyStartEpoch(a *applyTx, payload json.RawMessage) error {
	var c StartEpochCmd
	if err := decodePayload(OpStartEpoch, payload, &c); err != nil {
		return err
	}
	as, cur, err := a.replicated(c.Topic, c.Partition, c.Epoch)
	if err != nil {
		return err
	}
	if err := leads(c.Topic, cur, c.Leader); err != nil {
		return err
	}
	if n := len(cur.EpochStarts); n > 0 && cur.EpochStarts[n-1].Epoch == c.Epoch {
		if cur.EpochStarts[n-1].Offset == c.Offset {
			return nil // a retry of the start already recorded
		}
		return topicErr(c.Topic, ErrConflict, "partition %d: epoch %d already starts at %d, not %d",
			c.Partition, c.Epoch, cur.EpochStarts[n-1].Offset, c.Offset)
	}
	starts := append(slices.Clone(cur.EpochStarts), EpochStart{Epoch: c.Epoch, Offset: c.Offset})
	if len(starts) > MaxEpochStarts {
		starts = starts[len(starts)-MaxEpochStarts:]
	}
	cur.EpochStarts = starts
	return a.putPlacement(c.Topic, as)
}

func applyElectLeader(a *applyTx, payload json.RawMessage) error {
	var c ElectLeaderCmd
	if err := decodePayload(OpElectLeader, payload, &c); err != nil {
		return err
	}
	return a.applyRule(c.Topic, c.Partition, c.Apply)
}

// Apply is cur after the election, or why it is refused: the rule the
// FSM applies, a pure function so that the controller's tests propose
// against the rule itself.
func (c ElectLeaderCmd) Apply(cur Assignment) (Assignment, error) {
	if err := atEpoch(c.Topic, cur, c.Epoch); err != nil {
		return cur, err
	}
	switch {
	case c.To == cur.Owner:
		return cur, topicErr(c.Topic, ErrInvalid, "partition %d: %q already leads", c.Partition, c.To)
	case !slices.Contains(cur.InSync, c.To):
		// Only an in-sync replica holds every acknowledged record.
		return cur, topicErr(c.Topic, ErrConflict, "partition %d: %q is not in the in-sync set %v", c.Partition, c.To, cur.InSync)
	}
	old := cur.Owner
	cur.Owner, cur.Target = c.To, ""
	cur.LeaderEpoch++
	cur.InSync = slices.DeleteFunc(slices.Clone(cur.InSync), func(id string) bool { return id == old })
	return cur, nil
}

func applyRenewEpoch(a *applyTx, payload json.RawMessage) error {
	var c RenewEpochCmd
	if err := decodePayload(OpRenewEpoch, payload, &c); err != nil {
		return err
	}
	return a.applyRule(c.Topic, c.Partition, c.Apply)
}

// Apply is cur in its new epoch, or why it is refused: the rule the FSM
// applies, a pure function so that package replica's model proposes
// against the rule itself.
func (c RenewEpochCmd) Apply(cur Assignment) (Assignment, error) {
	if err := atEpoch(c.Topic, cur, c.Epoch); err != nil {
		return cur, err
	}
	if err := leads(c.Topic, &cur, c.Leader); err != nil {
		return cur, err
	}
	if !slices.Contains(cur.InSync, c.Leader) {
		// Its disk was replaced (ReplaceDisk): the controller elects another.
		return cur, topicErr(c.Topic, ErrConflict, "partition %d: leader %q is not in the in-sync set %v (its disk was replaced)",
			c.Partition, c.Leader, cur.InSync)
	}
	cur.LeaderEpoch++
	return cur, nil
}

func applySetReplicas(a *applyTx, payload json.RawMessage) error {
	var c SetReplicasCmd
	if err := decodePayload(OpSetReplicas, payload, &c); err != nil {
		return err
	}
	return a.applyRule(c.Topic, c.Partition, c.Apply)
}

// Apply is cur after the change, or why it is refused: the rule the FSM
// applies, a pure function so that the controller's tests propose
// against the rule itself.
func (c SetReplicasCmd) Apply(cur Assignment) (Assignment, error) {
	// A single-copy placement is its owner alone, in sync, at epoch 0.
	replicas, inSync := cur.Replicas, cur.InSync
	if len(replicas) == 0 {
		replicas, inSync = []string{cur.Owner}, []string{cur.Owner}
	}
	switch {
	case cur.Owner == "":
		return cur, topicErr(c.Topic, ErrConflict, "partition %d is not placed", c.Partition)
	case cur.Target != "":
		return cur, topicErr(c.Topic, ErrConflict, "partition %d is moving to %q", c.Partition, cur.Target)
	case cur.LeaderEpoch != c.Epoch:
		return cur, topicErr(c.Topic, ErrConflict, "partition %d is at epoch %d, not %d", c.Partition, cur.LeaderEpoch, c.Epoch)
	case len(c.Replicas) == 0 || len(c.Replicas) > MaxReplicationFactor || !distinct(c.Replicas) || slices.Contains(c.Replicas, ""):
		return cur, topicErr(c.Topic, ErrInvalid, "partition %d: replicas %v are not 1..%d distinct nodes", c.Partition, c.Replicas, MaxReplicationFactor)
	case !slices.Contains(c.Replicas, cur.Owner):
		return cur, topicErr(c.Topic, ErrInvalid, "partition %d: replicas %v leave out the leader %q", c.Partition, c.Replicas, cur.Owner)
	}
	if err := c.checkLeaving(cur, replicas); err != nil {
		return cur, err
	}
	// New members join out of sync: they fetch until the leader adds them.
	next := inReplicaOrder(c.Replicas, inSync)
	if len(next) < len(inSync) && len(next) < Majority(len(c.Replicas)) {
		return cur, topicErr(c.Topic, ErrConflict, "partition %d: replicas %v keep %d of the in-sync set %v, fewer than a majority",
			c.Partition, c.Replicas, len(next), inSync)
	}
	if slices.Equal(c.Replicas, replicas) && c.Leaving == cur.Leaving {
		return cur, nil
	}
	cur.Replicas, cur.InSync, cur.Leaving = slices.Clone(c.Replicas), next, c.Leaving
	if cur.LeaderEpoch == 0 {
		// Becoming replicated: epoch 1, whose start the leader records
		// itself (StartEpoch at its log end), as after any election.
		cur.LeaderEpoch = 1
	}
	return cur, nil
}

// inReplicaOrder is the members of set that are replicas, in replica
// order: one canonical form, so equal sets compare equal.
func inReplicaOrder(replicas, set []string) []string {
	var out []string
	for _, id := range replicas {
		if slices.Contains(set, id) {
			out = append(out, id)
		}
	}
	return out
}

func distinct(ids []string) bool {
	for i, id := range ids {
		if slices.Contains(ids[:i], id) {
			return false
		}
	}
	return true
}

func subset(ids, of []string) bool {
	for _, id := range ids {
		if !slices.Contains(of, id) {
			return false
		}
	}
	return true
}
