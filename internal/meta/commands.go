package meta

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Op is a command's op code, the first byte of a Raft log entry. Op codes are
// part of the replicated log's format: never renumber or reuse one.
type Op uint8

const (
	OpCreateTopic    Op = 1
	OpUpdateTopic    Op = 2
	OpDeleteTopic    Op = 3
	OpAttach         Op = 4
	OpDetach         Op = 5
	OpSetAssignments Op = 6
	OpUpsertMember   Op = 7
	OpPutUser        Op = 8
	OpSeedAdmin      Op = 9
	OpSetGrants      Op = 10
	OpSetPassword    Op = 11
	OpDeleteUser     Op = 12
	OpSetTarget      Op = 13
	OpFlipOwner      Op = 14
	OpSetDraining    Op = 15
	OpSetLimits      Op = 16
	OpSetInSync      Op = 17
	OpStartEpoch     Op = 18
	OpElectLeader    Op = 19
	OpSetReplicas    Op = 20
	OpReplaceDisk    Op = 21
	OpSetLinkFilter  Op = 22
	// Access keys (accesskeys.go).
	OpAddAccessKey    Op = 23
	OpDeleteAccessKey Op = 24
	// A replicated partition's leader begins a new epoch itself
	// (replication.go).
	OpRenewEpoch Op = 25
)

func (o Op) String() string {
	switch o {
	case OpCreateTopic:
		return "create-topic"
	case OpUpdateTopic:
		return "update-topic"
	case OpDeleteTopic:
		return "delete-topic"
	case OpAttach:
		return "attach"
	case OpDetach:
		return "detach"
	case OpSetAssignments:
		return "set-assignments"
	case OpUpsertMember:
		return "upsert-member"
	case OpPutUser:
		return "put-user"
	case OpSeedAdmin:
		return "seed-admin"
	case OpSetGrants:
		return "set-grants"
	case OpSetPassword:
		return "set-password"
	case OpDeleteUser:
		return "delete-user"
	case OpSetTarget:
		return "set-target"
	case OpFlipOwner:
		return "flip-owner"
	case OpSetDraining:
		return "set-draining"
	case OpSetLimits:
		return "set-limits"
	case OpSetInSync:
		return "set-in-sync"
	case OpStartEpoch:
		return "start-epoch"
	case OpElectLeader:
		return "elect-leader"
	case OpSetReplicas:
		return "set-replicas"
	case OpReplaceDisk:
		return "replace-disk"
	case OpSetLinkFilter:
		return "set-link-filter"
	case OpAddAccessKey:
		return "add-access-key"
	case OpDeleteAccessKey:
		return "delete-access-key"
	case OpRenewEpoch:
		return "renew-epoch"
	}
	return fmt.Sprintf("op-%d", uint8(o))
}

// Command is one metastore write: an op code and its JSON payload. Its
// encoded form (Encode) is what Raft replicates and what the cluster layer
// forwards to the leader.
type Command struct {
	Op      Op
	Payload json.RawMessage
}

// NewCommand encodes payload as the command's JSON payload.
func NewCommand(op Op, payload any) (Command, error) {
	js, err := json.Marshal(payload)
	if err != nil {
		// Only a malformed json.RawMessage (a schema) can fail here.
		return Command{}, fmt.Errorf("meta: encode %s: %w: %v", op, ErrInvalid, err)
	}
	return Command{Op: op, Payload: js}, nil
}

// Encode returns the wire form: the op byte followed by the payload.
func (c Command) Encode() []byte {
	b := make([]byte, 1+len(c.Payload))
	b[0] = byte(c.Op)
	copy(b[1:], c.Payload)
	return b
}

// DecodeCommand parses Encode's output. The payload aliases b.
func DecodeCommand(b []byte) (Command, error) {
	if len(b) < 1 {
		return Command{}, invalidf("empty command")
	}
	return Command{Op: Op(b[0]), Payload: b[1:]}, nil
}

// Payloads, one per op. Field names are part of the log format.

// CreateTopicCmd creates a topic with its initial placements and, optionally,
// attaches it to a parent in the same step (all or nothing).
type CreateTopicCmd struct {
	Topic       Topic        `json:"topic"`
	Assignments []Assignment `json:"assignments,omitempty"`
	Attach      *AttachSpec  `json:"attach,omitempty"`
}

// TopicUpdate alters a topic. Nil fields are left unchanged. Partitions may
// only grow; Assignments may place the added partitions only.
type TopicUpdate struct {
	Name string `json:"name"`
	// IfVersion, when non-zero, makes the update a compare-and-swap on
	// Topic.Version: ErrConflict if the record changed since it was read.
	IfVersion           uint64          `json:"if_version,omitempty"`
	RetentionMs         *int64          `json:"retention_ms,omitempty"`
	VisibilityTimeoutMs *int64          `json:"visibility_timeout_ms,omitempty"`
	MaxInFlight         *int            `json:"max_in_flight_per_partition,omitempty"`
	MaxAckedAhead       *int            `json:"max_acked_ahead_per_partition,omitempty"`
	Schema              json.RawMessage `json:"schema,omitempty"`
	ClearSchema         bool            `json:"clear_schema,omitempty"`
	MaxDeliveries       *int            `json:"max_deliveries,omitempty"`
	// DeadLetterTopic, when set, replaces the dead-letter topic; "" clears it.
	DeadLetterTopic *string      `json:"dead_letter_topic,omitempty"`
	Partitions      *int         `json:"partitions,omitempty"`
	Assignments     []Assignment `json:"assignments,omitempty"`
	DedupeWindowMs  *int64       `json:"dedupe_window_ms,omitempty"`
	DeliveryDelayMs *int64       `json:"delivery_delay_ms,omitempty"`
	// Ordering sets Topic.Ordering ("" for none).
	Ordering *string `json:"ordering,omitempty"`
	// ReplicationFactor sets Topic.ReplicationFactor; the controller then
	// adds or removes replicas (SetReplicas) until each partition has it.
	ReplicationFactor *int `json:"replication_factor,omitempty"`
	// Tags and AWSAttributes, when set, replace Topic.Tags and
	// Topic.AWSAttributes whole; a pointer to an empty map clears them.
	Tags          *map[string]string `json:"tags,omitempty"`
	AWSAttributes *map[string]string `json:"aws_attributes,omitempty"`
	// ModifiedAt (unix seconds), stamped by the proposer, becomes
	// Topic.ModifiedAt unless that is later already: the FSM never reads
	// a clock, and a proposer whose clock is behind cannot move it back.
	ModifiedAt int64 `json:"modified_at,omitempty"`
}

// DeleteTopicCmd deletes a topic, its assignments and its links.
// KeepSchema: each child it had keeps the schema it inherited from it
// (see DetachCmd).
type DeleteTopicCmd struct {
	Name       string `json:"name"`
	KeepSchema bool   `json:"keep_schema,omitempty"`
}

// AttachCmd links Child under the parent named in the spec.
type AttachCmd struct {
	Child string `json:"child"`
	AttachSpec
}

// DetachCmd removes the link Parent → Child. A non-empty Epoch must match
// the child's current attach epoch (ErrConflict otherwise), so a stale
// detach cannot undo a newer attach.
//
// KeepSchema: the child keeps the schema it inherited — the parent's, when
// the parent has one — and manages it from now on (docs/concepts.md, "Fan-out
// children"). A flag of the command rather than a rule of the handler, so
// that commands written before the rule replay to the state they made then.
type DetachCmd struct {
	Parent     string `json:"parent"`
	Child      string `json:"child"`
	Epoch      string `json:"epoch,omitempty"`
	KeepSchema bool   `json:"keep_schema,omitempty"`
}

// SetLinkFilterCmd sets or removes the filter of the link Parent → Child
// (Topic.FanoutFilter): an empty Filter removes it. A non-empty Epoch must
// match the child's current attach epoch (ErrConflict otherwise), so a
// change meant for one link never lands on a newer attach of the same
// names. The metastore checks the filter's shape only (a JSON object, a
// known scope); package fanout compiles it before proposing.
//
// The same command sets the link's envelope (Topic.FanoutEnvelope), so a
// change of both is one command: with SetEnvelope, Envelope replaces it
// (nil removes it); with KeepFilter, the filter is left as it is. A
// command without them (every one written before envelopes existed) sets
// the filter and leaves the envelope alone, as it did then.
type SetLinkFilterCmd struct {
	Parent      string          `json:"parent"`
	Child       string          `json:"child"`
	Epoch       string          `json:"epoch,omitempty"`
	Filter      json.RawMessage `json:"filter,omitempty"`
	FilterScope string          `json:"filter_scope,omitempty"`
	KeepFilter  bool            `json:"keep_filter,omitempty"`
	SetEnvelope bool            `json:"set_envelope,omitempty"`
	Envelope    *LinkEnvelope   `json:"envelope,omitempty"`
}

// SetAssignmentsCmd replaces the given partitions' placements.
type SetAssignmentsCmd struct {
	Assignments []Assignment `json:"assignments"`
}

// UpsertMemberCmd creates or replaces a member record.
type UpsertMemberCmd struct {
	Member Member `json:"member"`
}

// handler applies one op's payload inside a write transaction. It returns an
// outcome error (ErrExists, ErrNotFound, ErrConflict, ErrInvalid, wrapped) to
// refuse the command, or another error for a storage failure.
type handler func(a *applyTx, payload json.RawMessage) error

// handlers is the op table. Adding a command family means adding an op, a
// payload type and an entry here; the FSM needs no other change.
var handlers = map[Op]handler{
	OpCreateTopic:     applyCreateTopic,
	OpUpdateTopic:     applyUpdateTopic,
	OpDeleteTopic:     applyDeleteTopic,
	OpAttach:          applyAttach,
	OpDetach:          applyDetach,
	OpSetAssignments:  applySetAssignments,
	OpUpsertMember:    applyUpsertMember,
	OpPutUser:         applyPutUser,
	OpSeedAdmin:       applySeedAdmin,
	OpSetGrants:       applySetGrants,
	OpSetPassword:     applySetPassword,
	OpDeleteUser:      applyDeleteUser,
	OpSetTarget:       applySetTarget,
	OpFlipOwner:       applyFlipOwner,
	OpSetDraining:     applySetDraining,
	OpSetLimits:       applySetLimits,
	OpSetInSync:       applySetInSync,
	OpStartEpoch:      applyStartEpoch,
	OpElectLeader:     applyElectLeader,
	OpSetReplicas:     applySetReplicas,
	OpReplaceDisk:     applyReplaceDisk,
	OpSetLinkFilter:   applySetLinkFilter,
	OpAddAccessKey:    applyAddAccessKey,
	OpDeleteAccessKey: applyDeleteAccessKey,
	OpRenewEpoch:      applyRenewEpoch,
}

// decodePayload is strict about unknown fields so that a payload written by
// a newer binary is refused rather than half applied.
func decodePayload(op Op, payload json.RawMessage, v any) error {
	if err := strictUnmarshal(payload, v); err != nil {
		return invalidf("%s payload: %v", op, err)
	}
	return nil
}

func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the payload")
	}
	return nil
}
