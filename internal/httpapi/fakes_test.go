package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/auth"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/fanout"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
)

// recorder is the fakes' shared log of calls. Each entry is "Op detail";
// ops that change state (or lease, or forward) are marked so a refusal
// test can ask that none ran.
type recorder struct {
	mu    sync.Mutex
	calls []string
	muts  []string
	fail  map[string]error // op -> error to return
}

func (r *recorder) note(mutating bool, op, format string, args ...any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := op
	if format != "" {
		c += " " + fmt.Sprintf(format, args...)
	}
	r.calls = append(r.calls, c)
	if mutating {
		r.muts = append(r.muts, c)
	}
	return r.fail[op]
}

func (r *recorder) failWith(op string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail == nil {
		r.fail = map[string]error{}
	}
	r.fail[op] = err
}

func (r *recorder) mutations() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.muts...)
}

// last returns the last call whose entry starts with op ("" if none).
func (r *recorder) last(op string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.calls) - 1; i >= 0; i-- {
		if r.calls[i] == op || strings.HasPrefix(r.calls[i], op+" ") {
			return r.calls[i]
		}
	}
	return ""
}

func (r *recorder) count(op string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.calls {
		if c == op || strings.HasPrefix(c, op+" ") {
			n++
		}
	}
	return n
}

// fakePlane is the data plane behind the API: it records what it was
// asked and answers what the test set.
type fakePlane struct {
	*recorder
	topics  map[string]meta.Topic // TopicRecord
	msgs    []broker.Message      // what Consume returns
	ackErrs map[string]error      // per handle, for Ack and AckBatch
	batches [][]broker.ProduceRecord
	consume []broker.ConsumeRequest
	since   sinceLogs // ReplaySince's partitions (replaysince_fake_test.go)
}

func (f *fakePlane) CreateTopic(_ context.Context, req broker.CreateTopicRequest, owner string) (broker.TopicView, error) {
	err := f.note(true, "CreateTopic", "%s partitions=%d owner=%s%s", req.Name, req.Partitions, owner, mapsNote(req.Tags, req.AWSAttributes))
	return broker.TopicView{Topic: meta.Topic{Name: req.Name, Partitions: req.Partitions, Owner: owner,
		Tags: req.Tags, AWSAttributes: req.AWSAttributes}, Role: "standalone"}, err
}

func (f *fakePlane) ListTopics(limit int, pageToken string) ([]broker.TopicView, string, error) {
	err := f.note(false, "ListTopics", "limit=%d token=%q", limit, pageToken)
	return []broker.TopicView{{Topic: meta.Topic{Name: "orders", Partitions: 3}, Role: "standalone"}}, "orders", err
}

func (f *fakePlane) DescribeTopic(name string) (broker.TopicView, error) {
	err := f.note(false, "DescribeTopic", "%s", name)
	return broker.TopicView{Topic: meta.Topic{Name: name, Partitions: 3}, Role: "standalone"}, err
}

func (f *fakePlane) AlterTopic(_ context.Context, name string, req broker.AlterTopicRequest) (broker.TopicView, error) {
	detail := name
	if req.RetentionMs != nil {
		detail += fmt.Sprintf(" retention_ms=%d", *req.RetentionMs)
	}
	err := f.note(true, "AlterTopic", "%s%s", detail, mapsNote(req.Tags, req.AWSAttributes))
	return broker.TopicView{Topic: meta.Topic{Name: name, Tags: req.Tags, AWSAttributes: req.AWSAttributes}, Role: "standalone"}, err
}

// mapsNote is how the fakes record a request's tags and aws_attributes:
// nothing for an absent map, " tags={}" for an empty one.
func mapsNote(tags, attrs map[string]string) string {
	s := ""
	if tags != nil {
		s += fmt.Sprintf(" tags=%v", tags)
	}
	if attrs != nil {
		s += fmt.Sprintf(" aws_attributes=%v", attrs)
	}
	return strings.ReplaceAll(s, "map[]", "{}")
}

func (f *fakePlane) DeleteTopic(_ context.Context, name string) error {
	return f.note(true, "DeleteTopic", "%s", name)
}

func (f *fakePlane) TopicRecord(name string) (meta.Topic, bool) {
	f.note(false, "TopicRecord", "%s", name)
	t, ok := f.topics[name]
	return t, ok
}

func (f *fakePlane) ProduceWithID(_ context.Context, topic string, rec broker.ProduceRecord) (broker.Accepted, error) {
	if err := f.note(true, "Produce", "%s %s", topic, recString(rec)); err != nil {
		return broker.Accepted{}, err
	}
	return fakeAccepted(rec, 0), nil
}

func (f *fakePlane) ProduceBatchWithIDs(_ context.Context, topic string, recs []broker.ProduceRecord) ([]broker.Accepted, error) {
	parts := make([]string, len(recs))
	for i, r := range recs {
		parts[i] = recString(r)
	}
	f.mu.Lock()
	f.batches = append(f.batches, recs)
	f.mu.Unlock()
	if err := f.note(true, "ProduceBatch", "%s [%s]", topic, strings.Join(parts, " ")); err != nil {
		return nil, err
	}
	acc := make([]broker.Accepted, len(recs))
	for i, r := range recs {
		acc[i] = fakeAccepted(r, i)
	}
	return acc, nil
}

// fakeAccepted is the fake's answer for the i-th record of a produce: id
// "fake-i", its requested partition or 0.
func fakeAccepted(r broker.ProduceRecord, i int) broker.Accepted {
	a := broker.Accepted{ID: fmt.Sprintf("fake-%d", i)}
	if r.Partition != nil {
		a.Partition = *r.Partition
	}
	return a
}

func (f *fakePlane) Redrive(_ context.Context, topic, to string, max int) (int, error) {
	return 0, f.note(true, "Redrive", "%s to=%s max=%d", topic, to, max)
}

func (f *fakePlane) CheckBatch(topic string, recs []broker.ProduceRecord) error {
	return f.note(false, "CheckBatch", "%s %d", topic, len(recs))
}

func (f *fakePlane) Consume(_ context.Context, req broker.ConsumeRequest) ([]broker.Message, error) {
	f.mu.Lock()
	f.consume = append(f.consume, req)
	f.mu.Unlock()
	err := f.note(true, "Consume", "%s", consumeString(req))
	if err != nil {
		return nil, err
	}
	return f.msgs, nil
}

// ConsumeWait caps like a broker configured with a 10 s longest wait.
func (f *fakePlane) ConsumeWait(wait time.Duration) time.Duration {
	return max(min(wait, 10*time.Second), 0)
}

func (f *fakePlane) Ack(_ context.Context, topic, handle string, op broker.AckOp) error {
	if err := f.note(true, "Ack", "%s %s op=%d", topic, handle, op); err != nil {
		return err
	}
	return f.ackErrs[handle]
}

func (f *fakePlane) ExtendFor(_ context.Context, topic, handle string, d time.Duration) error {
	if err := f.note(true, "ExtendFor", "%s %s d=%v", topic, handle, d); err != nil {
		return err
	}
	return f.ackErrs[handle]
}

func (f *fakePlane) Purge(_ context.Context, topic string, parts []int) (uint64, error) {
	if err := f.note(true, "Purge", "%s %v", topic, parts); err != nil {
		return 0, err
	}
	if _, ok := f.topics[topic]; !ok {
		return 0, refusal.New(refusal.ErrTopicNotFound, 0, "topic %q does not exist", topic)
	}
	return uint64(len(parts)) + 1, nil
}

// OffsetAtTime answers the partition index times 10 plus the time's
// seconds modulo 10, so a test can tell which partition and time it
// asked for; partition 2 of any topic is not served here.
func (f *fakePlane) OffsetAtTime(topic string, p int, at time.Time) (uint64, error) {
	if err := f.note(false, "OffsetAtTime", "%s %d %d", topic, p, at.UnixMilli()); err != nil {
		return 0, err
	}
	if p == 2 {
		return 0, refusal.New(refusal.ErrNotOwner, time.Second, "partition %d of %q is not served by this node", p, topic)
	}
	return uint64(p*10 + at.Second()%10), nil
}

func (f *fakePlane) AckBatch(_ context.Context, topic string, handles []string) ([]error, error) {
	if err := f.note(true, "AckBatch", "%s %v", topic, handles); err != nil {
		return nil, err
	}
	out := make([]error, len(handles))
	for i, h := range handles {
		out[i] = f.ackErrs[h]
	}
	return out, nil
}

func recString(r broker.ProduceRecord) string {
	p := "-"
	if r.Partition != nil {
		p = fmt.Sprint(*r.Partition)
	}
	s := fmt.Sprintf("key=%q p=%s payload=%q", r.Key, p, r.Payload)
	if len(r.Headers) > 0 {
		s += fmt.Sprintf(" headers=%v", r.Headers)
	}
	if r.Delay != nil {
		s += fmt.Sprintf(" delay=%v", *r.Delay)
	}
	if r.DeliverAt != nil {
		s += fmt.Sprintf(" deliver_at=%d", *r.DeliverAt)
	}
	return s
}

func consumeString(r broker.ConsumeRequest) string {
	s := r.Topic
	if r.Partition != nil {
		s += fmt.Sprintf(" p=%d", *r.Partition)
	}
	if r.Offset != nil {
		s += fmt.Sprintf(" offset=%d", *r.Offset)
	}
	s += fmt.Sprintf(" max=%d wait=%v", r.Max, r.Wait)
	if r.Visibility != 0 {
		s += fmt.Sprintf(" visibility=%v", r.Visibility)
	}
	return s
}

// fakeFan is fan-out behind the API.
type fakeFan struct{ *recorder }

func (f *fakeFan) CreateChild(_ context.Context, req broker.CreateTopicRequest, owner string) (broker.TopicView, error) {
	err := f.note(true, "CreateChild", "%s parent=%s owner=%s", req.Name, req.Parent, owner)
	return broker.TopicView{Topic: meta.Topic{Name: req.Name, Parent: req.Parent}, Role: "child"}, err
}

func (f *fakeFan) Attach(_ context.Context, parent string, req fanout.AttachRequest) (fanout.AttachView, error) {
	err := f.note(true, "Attach", "%s child=%s delay=%d%s", parent, req.Child, req.DelayMs, envelopeNote(req.Envelope))
	env, _ := fanout.CheckEnvelope(req.Envelope)
	return fanout.AttachView{View: broker.TopicView{Topic: meta.Topic{Name: parent, Children: []string{req.Child}}, Role: "parent"},
		Child: req.Child, AttachEpoch: "0011223344556677", AttachOffsets: []uint64{0}, DelayMs: req.DelayMs, Envelope: env}, err
}

func (f *fakeFan) Children(parent string) (fanout.ChildrenView, error) {
	err := f.note(false, "Children", "%s", parent)
	return fanout.ChildrenView{Parent: parent, Children: []fanout.ChildView{{Name: "audit", LagComplete: true}}}, err
}

func (f *fakeFan) Detach(_ context.Context, parent, child string) error {
	return f.note(true, "Detach", "%s %s", parent, child)
}

func (f *fakeFan) PatchChild(_ context.Context, parent, child string, req fanout.PatchRequest) (fanout.ChildView, error) {
	err := f.note(true, "PatchChild", "%s %s filter=%s scope=%s%s", parent, child, req.Filter, req.FilterScope, envelopeNote(req.Envelope))
	v := fanout.ChildView{Name: child, LagComplete: true}
	if len(req.Filter) > 0 && string(req.Filter) != "null" {
		v.Filter, v.FilterScope = req.Filter, "headers"
	}
	v.Envelope, _ = fanout.CheckEnvelope(req.Envelope)
	return v, err
}

// envelopeNote is a link envelope as a recorded call names it: nothing
// when the request has none.
func envelopeNote(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	return " envelope=" + string(raw)
}

// fakeUsers is the users domain behind the API.
type fakeUsers struct{ *recorder }

func (f *fakeUsers) Create(_ context.Context, actor auth.Principal, name, _ string, gs []meta.Grant, l *meta.Limits) (auth.UserView, error) {
	err := f.note(true, "CreateUser", "%s by=%s limits=%s", name, actor.Name, limitsText(l))
	return auth.UserView{Username: name, Grants: nonNilGrants(gs), Limits: l.Resolve(meta.Rates{}), LimitsFromDefaults: l.Defaulted()}, err
}

func (f *fakeUsers) PatchLimits(_ context.Context, actor auth.Principal, name string, p auth.LimitsPatch) (auth.UserView, error) {
	var set []string
	for _, n := range meta.LimitNames {
		if v, ok := p.Set[n]; ok {
			if v == nil {
				set = append(set, n+"=null")
			} else {
				set = append(set, fmt.Sprintf("%s=%d", n, *v))
			}
		}
	}
	err := f.note(true, "PatchLimits", "%s by=%s reset=%v %s", name, actor.Name, p.Reset, strings.Join(set, ","))
	return auth.UserView{Username: name, Grants: []meta.Grant{}, LimitsFromDefaults: meta.LimitNames}, err
}

// limitsText is a user's own limits as the fake records them.
func limitsText(l *meta.Limits) string {
	if l.Empty() {
		return "none"
	}
	var parts []string
	for _, n := range meta.LimitNames {
		if v := *l.Field(n); v != nil {
			parts = append(parts, fmt.Sprintf("%s=%d", n, *v))
		}
	}
	return strings.Join(parts, ",")
}

func (f *fakeUsers) List(actor auth.Principal) ([]auth.UserView, error) {
	err := f.note(false, "ListUsers", "by=%s", actor.Name)
	return []auth.UserView{{Username: "admin", Grants: []meta.Grant{}, LimitsFromDefaults: meta.LimitNames}}, err
}

func (f *fakeUsers) Get(actor auth.Principal, name string) (auth.UserView, error) {
	err := f.note(false, "GetUser", "%s by=%s", name, actor.Name)
	return auth.UserView{Username: name, Grants: []meta.Grant{}, LimitsFromDefaults: meta.LimitNames}, err
}

func (f *fakeUsers) SetGrants(_ context.Context, actor auth.Principal, name string, gs []meta.Grant) (auth.UserView, error) {
	err := f.note(true, "SetGrants", "%s by=%s n=%d", name, actor.Name, len(gs))
	return auth.UserView{Username: name, Grants: nonNilGrants(gs), LimitsFromDefaults: meta.LimitNames}, err
}

func (f *fakeUsers) SetPassword(_ context.Context, actor auth.Principal, name, _, _ string) error {
	return f.note(true, "SetPassword", "%s by=%s", name, actor.Name)
}

func (f *fakeUsers) Delete(_ context.Context, actor auth.Principal, name string) error {
	return f.note(true, "DeleteUser", "%s by=%s", name, actor.Name)
}

// nonNilGrants answers "no grants" as [] the way auth.Manager does.
func nonNilGrants(gs []meta.Grant) []meta.Grant {
	if gs == nil {
		return []meta.Grant{}
	}
	return gs
}

// userStore resolves the actor of a forwarded users request.
type userStore map[string]meta.User

func (u userStore) User(name string) (meta.User, bool) { v, ok := u[name]; return v, ok }
func (u userStore) UsersVersion() uint64               { return 1 }
func (u userStore) HasUsers() bool                     { return len(u) > 0 }

// fakeAuth knows users by name and password "pw".
type fakeAuth map[string]auth.Principal

func (a fakeAuth) Authenticate(user, password, _ string) (auth.Principal, bool) {
	p, ok := a[user]
	return p, ok && password == "pw"
}

func (a fakeAuth) Ready() (bool, string) { return true, "" }

// fakeCluster is the rest of the cluster, as routing sees it.
type fakeCluster struct {
	*recorder
	self      string
	leader    bool
	owners    map[string]string // "topic/p" -> node; absent: this node
	answers   map[string]ForwardResponse
	errs      map[string]error // node -> Forward error
	version   uint64
	sent      []ForwardRequest
	sentNodes []string
	t         *testing.T
}

func (c *fakeCluster) Self() string   { return c.self }
func (c *fakeCluster) IsLeader() bool { return c.leader }

func (c *fakeCluster) Owner(topic string, p int) string {
	if o, ok := c.owners[fmt.Sprintf("%s/%d", topic, p)]; ok {
		return o
	}
	if p < 3 {
		return c.self
	}
	return "" // a topic of 3 partitions
}

func (c *fakeCluster) Forward(_ context.Context, node string, req ForwardRequest) (ForwardResponse, error) {
	c.mu.Lock()
	c.sent, c.sentNodes = append(c.sent, req), append(c.sentNodes, node)
	c.mu.Unlock()
	c.note(true, "Forward", "%s %s %s?%s user=%s timeout=%v", node, req.Method, req.Path, req.RawQuery, req.User, req.Timeout)
	if err := c.errs[node]; err != nil {
		return ForwardResponse{}, err
	}
	if res, ok := c.answers[node]; ok {
		return res, nil
	}
	return ForwardResponse{Status: 204}, nil
}

func (c *fakeCluster) Wait(ctx context.Context, node, topic string, wait time.Duration) (bool, error) {
	c.note(false, "Wait", "%s %s", node, topic)
	<-ctx.Done()
	return false, nil
}

func (c *fakeCluster) MetaVersion() uint64 { return c.version }

func (c *fakeCluster) WaitMetaVersion(_ context.Context, after uint64, within time.Duration) {
	c.note(false, "WaitMetaVersion", "after=%d within=%v", after, within)
}

func (c *fakeCluster) CatchUpTopic(_ context.Context, topic string) {
	c.note(false, "CatchUpTopic", "%s", topic)
}

// fakeAdmin is the cluster-operations side.
type fakeAdmin struct{ *recorder }

func (a *fakeAdmin) Members() []MemberView {
	a.note(false, "Members", "")
	return []MemberView{{ID: "n1", State: "alive"}}
}
func (a *fakeAdmin) Moves() []MoveView { a.note(false, "Moves", ""); return []MoveView{} }
func (a *fakeAdmin) SetDraining(_ context.Context, id string, draining bool) (MemberView, error) {
	err := a.note(true, "SetDraining", "%s %v", id, draining)
	return MemberView{ID: id, State: "alive", Draining: draining}, err
}
