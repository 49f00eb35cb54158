package httpapi

import (
	"context"
	"time"

	"github.com/narad-io/narad/internal/auth"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/fanout"
	"github.com/narad-io/narad/internal/meta"
)

// The API's seams: what it needs of the packages behind it, declared here
// by the consumer (as route.Committer and auth.Store are), so that the
// handlers can be tested against fakes and a package can change behind its
// interface. Only value types of broker, fanout and meta cross them.
// Errors that cross them are apierr values or typed refusals (package
// refusal); the status of each is chosen here (apierr.From), nowhere else.

// Topics is topic administration on this node's data plane.
type Topics interface {
	CreateTopic(ctx context.Context, req broker.CreateTopicRequest, owner string) (broker.TopicView, error)
	ListTopics(limit int, pageToken string) ([]broker.TopicView, string, error)
	DescribeTopic(name string) (broker.TopicView, error)
	AlterTopic(ctx context.Context, name string, req broker.AlterTopicRequest) (broker.TopicView, error)
	DeleteTopic(ctx context.Context, name string) error
	// TopicRecord is the topic's record in the local replica (its owner,
	// for authorization); false when it is not known here.
	TopicRecord(name string) (meta.Topic, bool)
}

// Messages is produce, consume and ack on this node's data plane.
type Messages interface {
	// ProduceWithID and ProduceBatchWithIDs return once the records are
	// durable here. ProduceWithID keeps nothing of rec's slices once it returns, whatever it
	// returns: the handler reuses the body's buffer for the next request
	// (the broker's WAL stages its own encoding of the record).
	// Each says what it accepted: the records' message ids and partitions.
	ProduceWithID(ctx context.Context, topic string, rec broker.ProduceRecord) (broker.Accepted, error)
	ProduceBatchWithIDs(ctx context.Context, topic string, recs []broker.ProduceRecord) ([]broker.Accepted, error)
	// CheckBatch validates the leading records of a batch whose next one
	// did not decode, so a refusal names the first failing index.
	CheckBatch(topic string, recs []broker.ProduceRecord) error
	Consume(ctx context.Context, req broker.ConsumeRequest) ([]broker.Message, error)
	// ConsumeWait is the long-poll a consume asking for wait gets here.
	ConsumeWait(wait time.Duration) time.Duration
	Ack(ctx context.Context, topic, handle string, op broker.AckOp) error
	// ExtendFor renews a lease to expire d from now (extend=<duration>).
	ExtendFor(ctx context.Context, topic, handle string, d time.Duration) error
	// AckBatch returns each handle's outcome as the single form would
	// (nil: settled), or one error refusing the whole batch.
	AckBatch(ctx context.Context, topic string, handles []string) ([]error, error)
	// Redrive moves up to max unconsumed records of topic, of the
	// partitions this node serves, into to, and says how many it moved.
	Redrive(ctx context.Context, topic, to string, max int) (int, error)
	// Purge settles every record below the high watermark of partitions
	// parts of topic here (nil: every partition this node owns) and
	// returns how many were not settled before.
	Purge(ctx context.Context, topic string, parts []int) (uint64, error)
	// OffsetAtTime is the first offset of a partition served here whose
	// commit time is at or after at (its high watermark when none is).
	OffsetAtTime(topic string, p int, at time.Time) (uint64, error)
	// ReplaySince reads one partition's page of a replay by time, from
	// from or else from since; AnswerBytes is one answer's byte budget.
	ReplaySince(topic string, p int, since time.Time, from *uint64, max int) (broker.SincePage, error)
	AnswerBytes() int
}

// DataPlane is this node's broker, as the API uses it.
type DataPlane interface {
	Topics
	Messages
}

// Children is the fan-out side of the API: links between topics.
type Children interface {
	// CreateChild creates a topic attached to req.Parent in one step.
	CreateChild(ctx context.Context, req broker.CreateTopicRequest, owner string) (broker.TopicView, error)
	// Attach answers with the parent's record and the new link (fanout.AttachView).
	Attach(ctx context.Context, parent string, req fanout.AttachRequest) (fanout.AttachView, error)
	Children(parent string) (fanout.ChildrenView, error)
	Detach(ctx context.Context, parent, child string) error
	// PatchChild sets or removes a link's filter and answers the link as
	// the listing shows it.
	PatchChild(ctx context.Context, parent, child string, req fanout.PatchRequest) (fanout.ChildView, error)
}

// UserAdmin carries out the users API for an authenticated actor
// (auth.Manager).
type UserAdmin interface {
	Create(ctx context.Context, actor auth.Principal, name, password string, gs []meta.Grant, limits *meta.Limits) (auth.UserView, error)
	List(actor auth.Principal) ([]auth.UserView, error)
	Get(actor auth.Principal, name string) (auth.UserView, error)
	SetGrants(ctx context.Context, actor auth.Principal, name string, gs []meta.Grant) (auth.UserView, error)
	SetPassword(ctx context.Context, actor auth.Principal, name, password, current string) error
	PatchLimits(ctx context.Context, actor auth.Principal, name string, p auth.LimitsPatch) (auth.UserView, error)
	Delete(ctx context.Context, actor auth.Principal, name string) error
}

// Cluster is what routing needs from the cluster: who leads, who owns a
// partition, and a way to replay a request on another node. Nil on a
// single node without peers.
type Cluster interface {
	Self() string
	IsLeader() bool
	Owner(topic string, partition int) string
	// Forward replays a request on node (or on the leader when node is "").
	Forward(ctx context.Context, node string, req ForwardRequest) (ForwardResponse, error)
	// Wait parks on node until topic may have records there, or wait ends;
	// it leases nothing, so abandoning it is free.
	Wait(ctx context.Context, node, topic string, wait time.Duration) (woken bool, err error)
	// MetaVersion and WaitMetaVersion give a forwarded metadata write
	// read-your-writes on this node: the answer waits (briefly) until the
	// local replica applied a change past the version seen before.
	MetaVersion() uint64
	WaitMetaVersion(ctx context.Context, after uint64, within time.Duration)
	// CatchUpTopic is read-your-writes for a topic this replica does not
	// know: it returns once the replica has every write the leader had
	// acknowledged (or after a short bound), so that a topic created a
	// moment ago through another node is not answered 404 here.
	CatchUpTopic(ctx context.Context, topic string)
}

// ForwardRequest is a client-API request to replay on another node. Its
// fields are node RPC's (rpc.ForwardRequest) one for one, so the cluster
// adapter converts it as it is.
type ForwardRequest struct {
	Method      string
	Path        string
	RawQuery    string
	Body        []byte
	ContentType string
	// User was authenticated and authorised here; the serving node trusts
	// it because the call proved the cluster secret.
	User string
	// Timeout is the call's budget.
	Timeout time.Duration
}

// ForwardResponse is the replayed request's answer, to be written to the
// client as it is (rpc.ForwardResponse, one for one).
type ForwardResponse struct {
	Status      int
	ContentType string
	Body        []byte
	RetryAfter  time.Duration
	MetaVersion uint64 // the serving node's metastore version after the request
}

// Forward budgets (node RPC timeouts; docs/configuration.md, "Checks across
// settings").
const (
	// rpcDefaultTimeout is node RPC's per-call default: a forwarded
	// consume, ack or replay gets it plus its long-poll wait.
	rpcDefaultTimeout = 5 * time.Second
	// leaderForwardTimeout caps a metadata write forwarded to the leader
	// (a topic create may take this long there).
	leaderForwardTimeout = 75 * time.Second
)
