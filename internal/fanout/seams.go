package fanout

import (
	"context"

	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/topic"
)

// What the engine needs of the rest of its node, declared here where it is
// used (the broker and the metastore satisfy these as they are; tests hand
// in fakes that fail or lie on cue).

// LogSource is this node's partition logs (the broker's registry).
type LogSource interface {
	// Get opens a partition log if it must, and stamps its last access:
	// only a cursor with work to do calls it.
	Get(name string, partition int) (*storage.Log, error)
	// Peek is the log if it is open, else nil; it never opens one.
	Peek(name string, partition int) *storage.Log
	// Describe reads a partition from its open log or its directory, never
	// opening it (rule: listing opens no log).
	Describe(name string, partition int) (storage.Stats, error)
	// Dir is a partition's directory, where its cursor files live.
	Dir(name string, partition int) (string, error)
	// TopicDir and TopicDirs name the directories the orphan sweep walks.
	TopicDir(name string) (string, error)
	TopicDirs() ([]string, error)
}

// TopicAdmin creates topics, shows them as the API does, and maps
// metastore outcomes onto the API's errors (the broker).
type TopicAdmin interface {
	// PrepareTopic validates a create request and returns the record to
	// commit, defaults applied.
	PrepareTopic(req topic.CreateRequest, owner string) (meta.Topic, error)
	// CommitTopic commits a prepared topic, with its attach, and shows it.
	CommitTopic(ctx context.Context, t meta.Topic, attach *meta.AttachSpec) (topic.View, error)
	View(name string) (topic.View, error)
	MetaErr(err error) error
}

// Stats measures parent partitions: attach points (rules: attach points,
// remote start points) and the children listing's lag (rule: listing opens
// no log).
type Stats interface {
	// CommittedHWM is a local partition's committed high watermark,
	// exactly (opening the log when its directory cannot say).
	CommittedHWM(name string, p int) (uint64, error)
	// LocalReports describes partitions this node owns without opening a
	// log, unless exact.
	LocalReports(name string, parts []int, exact bool) []topic.PartitionReport
	// RemoteStats asks owner for reports without opening a log there;
	// RemoteTails asks for exact tails (the owner opens a log if it must).
	RemoteStats(ctx context.Context, owner, name string, parts []int) ([]topic.PartitionReport, error)
	RemoteTails(ctx context.Context, owner, name string, parts []int) ([]topic.PartitionReport, error)
}

// Metastore is what the engine reads and proposes (*meta.Store).
type Metastore interface {
	Topic(name string) (meta.Topic, bool)
	Topics() []meta.Topic
	Owner(name string, partition int) (string, bool)
	// ConfirmTopic asks the Raft leader whether the topic exists and epoch
	// is its current attach epoch: anchoring and deleting cursor files need
	// it (rules: anchor on the leader's word, leader-confirmed sweep).
	ConfirmTopic(ctx context.Context, name, epoch string) (exists, epochCurrent bool, err error)
	AppliedCaughtUp() bool
	LatestDomainVersion() uint64
	CreateTopic(ctx context.Context, t meta.Topic, assignments []meta.Assignment, attach *meta.AttachSpec) error
	Attach(ctx context.Context, child string, spec meta.AttachSpec) error
	Detach(ctx context.Context, parent, child, epoch string) error
	// SetLink sets or removes a link's filter, its envelope or both, in one
	// command; a non-empty epoch must be the child's current attach epoch.
	SetLink(ctx context.Context, c meta.SetLinkFilterCmd) error
}
