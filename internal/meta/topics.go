package meta

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
)

// Topic commands. Each handler validates against the state it is applied to,
// so two racing proposals (two creates of one name, two attaches that would
// make a chain) cannot both win: the second sees the first's result.

func applyCreateTopic(a *applyTx, payload json.RawMessage) error {
	var c CreateTopicCmd
	if err := decodePayload(OpCreateTopic, payload, &c); err != nil {
		return err
	}
	t := c.Topic
	if err := checkTopicFields(t); err != nil {
		return err
	}
	switch {
	case t.Remote != nil && (t.Partitions != 0 || c.Attach == nil):
		return topicErr(t.Name, ErrInvalid, "a remote child has no partitions and is created attached")
	case t.Remote == nil && t.Partitions < 1:
		return topicErr(t.Name, ErrInvalid, "partitions %d < 1", t.Partitions)
	}
	// Link fields are the metastore's: they are set from Attach only.
	if len(t.Children) > 0 {
		return topicErr(t.Name, ErrInvalid, "children are set by attach, not create")
	}
	if c.Attach == nil && (t.Parent != "" || t.AttachEpoch != "" || len(t.AttachOffsets) > 0 || t.FanoutDelayMs != 0 ||
		len(t.FanoutFilter) > 0 || t.FanoutFilterScope != "" || t.FanoutEnvelope != nil) {
		return topicErr(t.Name, ErrInvalid, "link fields need an attach spec")
	}
	if _, exists, err := a.topic(t.Name); err != nil {
		return err
	} else if exists {
		return topicErr(t.Name, ErrExists, "")
	}
	if err := a.checkDeadLetter(t); err != nil {
		return err
	}
	as, err := mergeAssignments(t.Name, nil, t.Partitions, 0, c.Assignments)
	if err != nil {
		return err
	}
	clearLink(&t)
	if err := a.bindOwner(&t); err != nil {
		return err
	}
	t.Incarnation = a.index // deterministic on every replica: the command's own log index
	if c.Attach != nil {
		parent, err := a.existingTopic(c.Attach.Parent, "parent of "+t.Name)
		if err != nil {
			return err
		}
		if err := checkAttach(parent, t, *c.Attach); err != nil {
			return err
		}
		link(&parent, &t, *c.Attach)
		if err := a.putTopic(parent); err != nil {
			return err
		}
	}
	if err := a.putTopic(t); err != nil {
		return err
	}
	if err := a.putAssignments(t.Name, as); err != nil {
		return err
	}
	// A new placement list exists (placed or not): both domains moved.
	a.bump(domTopics)
	a.bump(domAssignments)
	return nil
}

func applyUpdateTopic(a *applyTx, payload json.RawMessage) error {
	var u TopicUpdate
	if err := decodePayload(OpUpdateTopic, payload, &u); err != nil {
		return err
	}
	t, err := a.existingTopic(u.Name, "")
	if err != nil {
		return err
	}
	if u.IfVersion != 0 && u.IfVersion != t.Version {
		return topicErr(u.Name, ErrConflict, "version %d, expected %d", t.Version, u.IfVersion)
	}
	old := t
	if u.RetentionMs != nil {
		t.RetentionMs = *u.RetentionMs
	}
	if u.VisibilityTimeoutMs != nil {
		t.VisibilityTimeoutMs = *u.VisibilityTimeoutMs
	}
	if u.MaxInFlight != nil {
		t.MaxInFlight = *u.MaxInFlight
	}
	if u.MaxAckedAhead != nil {
		t.MaxAckedAhead = *u.MaxAckedAhead
	}
	switch {
	case u.ClearSchema && u.Schema != nil:
		return topicErr(u.Name, ErrInvalid, "schema and clear_schema together")
	case u.ClearSchema:
		t.Schema = nil
	case u.Schema != nil:
		t.Schema = u.Schema
	}
	if u.MaxDeliveries != nil {
		t.MaxDeliveries = *u.MaxDeliveries
	}
	if u.DeadLetterTopic != nil {
		t.DeadLetterTopic = *u.DeadLetterTopic
	}
	if t.MaxDeliveries != old.MaxDeliveries || t.DeadLetterTopic != old.DeadLetterTopic {
		if err := a.checkDeadLetter(t); err != nil {
			return err
		}
	}
	if u.DedupeWindowMs != nil {
		t.DedupeWindowMs = *u.DedupeWindowMs
	}
	if u.DeliveryDelayMs != nil {
		t.DeliveryDelayMs = *u.DeliveryDelayMs
	}
	if u.Ordering != nil {
		t.Ordering = *u.Ordering
	}
	if u.ReplicationFactor != nil {
		t.ReplicationFactor = *u.ReplicationFactor
	}
	if u.Tags != nil {
		t.Tags = cloneMap(*u.Tags)
	}
	if u.AWSAttributes != nil {
		t.AWSAttributes = cloneMap(*u.AWSAttributes)
	}
	t.ModifiedAt = max(t.ModifiedAt, u.ModifiedAt)
	if u.Partitions != nil {
		if *u.Partitions < t.Partitions {
			return topicErr(u.Name, ErrConflict, "partitions only grow (%d → %d)", t.Partitions, *u.Partitions)
		}
		t.Partitions = *u.Partitions
	}
	if err := checkTopicFields(t); err != nil {
		return err
	}
	// A delay child needs its parent to keep records past the delay; a
	// retention change on the parent is held to the same floor as the attach.
	if t.RetentionMs != old.RetentionMs {
		for _, name := range t.Children {
			child, ok, err := a.topic(name)
			if err != nil {
				return err
			}
			if ok && !retentionCovers(t.RetentionMs, child.FanoutDelayMs) {
				return topicErr(u.Name, ErrInvalidCombination, "retention %d ms below delay child %q's floor (%d ms + 1 h)",
					t.RetentionMs, name, child.FanoutDelayMs)
			}
		}
	}

	oldAs, err := a.assignments(u.Name)
	if err != nil {
		return err
	}
	as, err := mergeAssignments(u.Name, oldAs, t.Partitions, old.Partitions, u.Assignments)
	if err != nil {
		return err
	}
	asChanged := !slices.EqualFunc(as, oldAs, Assignment.Equal)
	if topicEqual(old, t) && !asChanged {
		return nil // nothing to change: no write, no version bump
	}
	if err := a.putTopic(t); err != nil {
		return err
	}
	a.bump(domTopics)
	if asChanged {
		if err := a.putAssignments(u.Name, as); err != nil {
			return err
		}
		a.bump(domAssignments)
	}
	return nil
}

func applyDeleteTopic(a *applyTx, payload json.RawMessage) error {
	var c DeleteTopicCmd
	if err := decodePayload(OpDeleteTopic, payload, &c); err != nil {
		return err
	}
	t, err := a.existingTopic(c.Name, "")
	if err != nil {
		return err
	}
	if err := a.refuseIfDeadLetter(t.Name, "it cannot be deleted"); err != nil {
		return err
	}
	// Children stay as standalone topics.
	for _, name := range t.Children {
		child, ok, err := a.topic(name)
		if err != nil {
			return err
		}
		if !ok || child.Parent != t.Name {
			continue
		}
		if child.Remote != nil { // a remote link is nothing without its parent
			if err := a.deleteTopic(child.Name); err != nil {
				return err
			}
			continue
		}
		if c.KeepSchema {
			inherit(&child, t)
		}
		clearLink(&child)
		if err := a.putTopic(child); err != nil {
			return err
		}
	}
	if t.Parent != "" {
		parent, ok, err := a.topic(t.Parent)
		if err != nil {
			return err
		}
		if ok {
			parent.Children = removeSorted(parent.Children, t.Name)
			if err := a.putTopic(parent); err != nil {
				return err
			}
		}
	}
	if err := a.deleteTopic(t.Name); err != nil {
		return err
	}
	if err := a.deleteAssignments(t.Name); err != nil {
		return err
	}
	a.bump(domTopics)
	a.bump(domAssignments)
	return nil
}

func applyAttach(a *applyTx, payload json.RawMessage) error {
	var c AttachCmd
	if err := decodePayload(OpAttach, payload, &c); err != nil {
		return err
	}
	parent, child, err := a.linkEnds(c.Parent, c.Child)
	if err != nil {
		return err
	}
	if err := checkAttach(parent, child, c.AttachSpec); err != nil {
		return err
	}
	if c.DelayMs > 0 {
		if err := a.refuseIfDeadLetter(child.Name, "it cannot become a delay child"); err != nil {
			return err
		}
	}
	link(&parent, &child, c.AttachSpec)
	if err := a.putTopics(parent, child); err != nil {
		return err
	}
	a.bump(domTopics)
	return nil
}

func applyDetach(a *applyTx, payload json.RawMessage) error {
	var c DetachCmd
	if err := decodePayload(OpDetach, payload, &c); err != nil {
		return err
	}
	parent, child, err := a.attachedLink(c.Parent, c.Child, c.Epoch)
	if err != nil {
		return err
	}
	parent.Children = removeSorted(parent.Children, child.Name)
	if child.Remote != nil {
		// A remote child has no data here to keep: detaching ends it.
		if err := a.putTopic(parent); err != nil {
			return err
		}
		if err := a.deleteTopic(child.Name); err != nil {
			return err
		}
		if err := a.deleteAssignments(child.Name); err != nil {
			return err
		}
		a.bump(domTopics)
		return nil
	}
	if c.KeepSchema {
		inherit(&child, parent)
	}
	clearLink(&child)
	if err := a.putTopics(parent, child); err != nil {
		return err
	}
	a.bump(domTopics)
	return nil
}

// inherit gives a child being detached the schema it inherited while
// attached: its parent's, when the parent has one; else it keeps its own.
func inherit(child *Topic, parent Topic) {
	if len(parent.Schema) > 0 {
		child.Schema = parent.Schema
	}
}

// existingTopic reads a topic the command requires: absent is ErrNotFound,
// with role ("parent of x") saying which one.
func (a *applyTx) existingTopic(name, role string) (Topic, error) {
	t, ok, err := a.topic(name)
	if err == nil && !ok {
		err = topicErr(name, ErrNotFound, "%s", role)
	}
	return t, err
}

// linkEnds reads both ends of a link, parent first.
func (a *applyTx) linkEnds(parent, child string) (Topic, Topic, error) {
	p, err := a.existingTopic(parent, "parent of "+child)
	if err != nil {
		return Topic{}, Topic{}, err
	}
	c, err := a.existingTopic(child, "child of "+parent)
	return p, c, err
}

// attachedLink reads both ends of the link parent → child, which must
// exist (ErrNotFound) and, when epoch is not empty, be of that attach
// epoch (ErrConflict): a stale command cannot change a newer attach.
func (a *applyTx) attachedLink(parent, child, epoch string) (Topic, Topic, error) {
	p, c, err := a.linkEnds(parent, child)
	switch {
	case err != nil:
		return Topic{}, Topic{}, err
	case c.Parent != p.Name:
		return Topic{}, Topic{}, topicErr(child, ErrNotFound, "not attached to %q", parent)
	case epoch != "" && epoch != c.AttachEpoch:
		return Topic{}, Topic{}, topicErr(child, ErrConflict, "attach epoch is %s, not %s", c.AttachEpoch, epoch)
	}
	return p, c, nil
}

func (a *applyTx) putTopics(ts ...Topic) error {
	for _, t := range ts {
		if err := a.putTopic(t); err != nil {
			return err
		}
	}
	return nil
}

// checkAttach holds the link rules of docs/concepts.md, "Fan-out children":
// one parent per child, no chains, at most MaxChildren children, and a delay
// child's parent retention floor.
func checkAttach(parent, child Topic, s AttachSpec) error {
	switch {
	case s.Epoch == "":
		return topicErr(child.Name, ErrInvalid, "attach without an epoch")
	case s.DelayMs < 0:
		return topicErr(child.Name, ErrInvalid, "delay %d ms < 0", s.DelayMs)
	case len(s.AttachOffsets) > parent.Partitions:
		return topicErr(child.Name, ErrInvalid, "%d attach offsets for %d parent partitions",
			len(s.AttachOffsets), parent.Partitions)
	case parent.Name == child.Name: // an invalid combination (400), not a conflict
		return topicErr(child.Name, ErrInvalidCombination, "cannot attach a topic to itself")
	case child.Parent != "":
		return topicErr(child.Name, ErrConflict, "already attached to %q", child.Parent)
	case parent.Parent != "":
		return topicErr(parent.Name, ErrConflict, "is a child of %q and cannot be a parent", parent.Parent)
	case len(child.Children) > 0:
		return topicErr(child.Name, ErrConflict, "has %d children and cannot be a child", len(child.Children))
	case len(parent.Children) >= MaxChildren:
		return topicErr(parent.Name, ErrConflict, "has %d children already (max %d)", len(parent.Children), MaxChildren)
	case !retentionCovers(parent.RetentionMs, s.DelayMs): // an invalid combination, like the API's 400
		return topicErr(parent.Name, ErrInvalidCombination, "retention %d ms below delay %d ms + 1 h", parent.RetentionMs, s.DelayMs)
	}
	if err := checkFilterShape(child.Name, s.Filter, s.FilterScope); err != nil {
		return err
	}
	return checkEnvelope(child, s.Envelope)
}

func link(parent, child *Topic, s AttachSpec) {
	child.Parent = parent.Name
	child.AttachEpoch = s.Epoch
	child.AttachOffsets = slices.Clone(s.AttachOffsets)
	child.FanoutDelayMs = s.DelayMs
	setFilter(child, s.Filter, s.FilterScope)
	child.FanoutEnvelope = cloneEnvelope(s.Envelope)
	parent.Children = insertSorted(parent.Children, child.Name)
}

func clearLink(t *Topic) {
	t.Parent, t.AttachEpoch, t.AttachOffsets, t.FanoutDelayMs = "", "", nil, 0
	setFilter(t, nil, "")
	t.FanoutEnvelope = nil
}

// retentionCovers: retention 0 keeps forever; otherwise it must reach
// delay + 1 h. A non-delay child (delay 0) needs nothing.
func retentionCovers(retentionMs, delayMs int64) bool {
	return delayMs == 0 || retentionMs == 0 || retentionMs >= delayMs+delayRetentionFloorMs
}

// checkTopicFields is a sanity check only; range rules (retention ≥ 1 h,
// visibility 1 s .. 12 h, ...) are the API layer's, which knows defaults.
func checkTopicFields(t Topic) error {
	switch {
	case t.Name == "":
		return invalidf("topic without a name")
	case t.RetentionMs < 0 || t.VisibilityTimeoutMs < 0 || t.MaxInFlight < 0 || t.MaxAckedAhead < 0 || t.DedupeWindowMs < 0 || t.DeliveryDelayMs < 0:
		return topicErr(t.Name, ErrInvalid, "negative setting")
	case len(t.Schema) > 0 && !json.Valid(t.Schema):
		return topicErr(t.Name, ErrInvalid, "schema is not JSON")
	case t.Ordering != "" && t.Ordering != OrderingGroup:
		return topicErr(t.Name, ErrInvalid, "ordering %q is not %q or %q", t.Ordering, OrderingNone, OrderingGroup)
	case t.ReplicationFactor < 0 || t.ReplicationFactor > MaxReplicationFactor:
		return topicErr(t.Name, ErrInvalid, "replication factor %d outside 1..%d", t.ReplicationFactor, MaxReplicationFactor)
	case t.Remote != nil && t.ReplicationFactor > 1:
		return topicErr(t.Name, ErrInvalid, "a remote child has no partitions to replicate")
	}
	return nil
}

// mergeAssignments returns the topic's placement list with length
// partitions: the old entries, unplaced entries for new partitions, and the
// given placements written over partitions in [from, partitions).
func mergeAssignments(topic string, old []Assignment, partitions, from int, set []Assignment) ([]Assignment, error) {
	out := make([]Assignment, partitions)
	copy(out, old)
	for p := range out {
		out[p].Topic, out[p].Partition = topic, p
	}
	seen := make(map[int]bool, len(set))
	for _, as := range set {
		if as.Topic != "" && as.Topic != topic {
			return nil, topicErr(topic, ErrInvalid, "assignment for topic %q", as.Topic)
		}
		if as.Partition < from || as.Partition >= partitions {
			return nil, topicErr(topic, ErrInvalid, "assignment for partition %d outside [%d, %d)", as.Partition, from, partitions)
		}
		if seen[as.Partition] {
			return nil, topicErr(topic, ErrInvalid, "partition %d assigned twice", as.Partition)
		}
		seen[as.Partition] = true
		if err := CheckPlacement(topic, as); err != nil {
			return nil, err
		}
		as.Topic = topic
		out[as.Partition] = as
	}
	return out, nil
}

// bindOwner records which incarnation of the owner's name created t: the
// ID of the user of that name in the state the create applies to. A name
// with no user (deleted since the request was authorized, or a topic
// created with security off under a name) binds to no one who can log in
// later: every user created from now on has a non-zero ID.
func (a *applyTx) bindOwner(t *Topic) error {
	t.OwnerID = 0
	if t.Owner == "" {
		return nil
	}
	u, ok, err := a.user(t.Owner)
	if err != nil {
		return err
	}
	if ok {
		t.OwnerID = u.ID
	}
	return nil
}

func topicEqual(a, b Topic) bool {
	return a.Name == b.Name && a.Partitions == b.Partitions && a.RetentionMs == b.RetentionMs &&
		a.VisibilityTimeoutMs == b.VisibilityTimeoutMs && a.MaxInFlight == b.MaxInFlight &&
		a.MaxAckedAhead == b.MaxAckedAhead && bytes.Equal(a.Schema, b.Schema) &&
		a.CreatedAt == b.CreatedAt && a.Owner == b.Owner && a.OwnerID == b.OwnerID && a.Parent == b.Parent &&
		a.AttachEpoch == b.AttachEpoch && slices.Equal(a.AttachOffsets, b.AttachOffsets) &&
		a.FanoutDelayMs == b.FanoutDelayMs && slices.Equal(a.Children, b.Children) &&
		a.MaxDeliveries == b.MaxDeliveries && a.DeadLetterTopic == b.DeadLetterTopic &&
		a.DedupeWindowMs == b.DedupeWindowMs && a.ReplicationFactor == b.ReplicationFactor &&
		a.DeliveryDelayMs == b.DeliveryDelayMs && a.Ordering == b.Ordering &&
		maps.Equal(a.Tags, b.Tags) && maps.Equal(a.AWSAttributes, b.AWSAttributes) && a.ModifiedAt == b.ModifiedAt
}

// cloneMap is m as a record stores it: a copy, nil when empty (so an
// emptied map is absent from the JSON, as one never set).
func cloneMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return maps.Clone(m)
}

func insertSorted(s []string, v string) []string {
	i, found := slices.BinarySearch(s, v)
	if found {
		return s
	}
	return slices.Insert(s, i, v)
}

func removeSorted(s []string, v string) []string {
	i, found := slices.BinarySearch(s, v)
	if !found {
		return s
	}
	s = slices.Delete(s, i, i+1)
	if len(s) == 0 {
		return nil
	}
	return s
}
