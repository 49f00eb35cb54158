package fanout

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/narad-io/narad/client"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
	"github.com/narad-io/narad/internal/route"
	"github.com/narad-io/narad/internal/storage"
	"github.com/narad-io/narad/internal/topic"
)

// Remote link states (rule: refusal stops the link), worst last: a child
// shows the worst state of its cursors.
const (
	StateRunning       = "running"
	StateRetrying      = "retrying"
	StateTargetMissing = "target_missing"
	StateAuthFailed    = "auth_failed"
	StateRejected      = "rejected"
)

var linkStates = []string{StateRunning, StateRetrying, StateTargetMissing, StateAuthFailed, StateRejected}

func stateRank(s string) int {
	for i, x := range linkStates {
		if x == s {
			return i
		}
	}
	return 0
}

// Sender constants (rules: lanes by key, held records bounded, refusal
// stops the link).
const (
	remoteLanes      = 4
	remoteBackoffCap = 30 // × Config.Backoff: 1 s doubling to 30 s
)

// parseRemote reads and checks the remote target of an attach (rules:
// remote start points, credentials never shown).
func parseRemote(raw json.RawMessage) (meta.RemoteTarget, error) {
	var r meta.RemoteTarget
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, refusal.New(refusal.ErrInvalid, 0, "remote: want {\"url\", \"topic\", \"username\", \"password\"}: %v", err)
	}
	u, err := url.Parse(r.URL)
	switch {
	case r.URL == "":
		return r, refusal.New(refusal.ErrInvalid, 0, "remote.url is required")
	case err != nil:
		return r, refusal.New(refusal.ErrInvalid, 0, "remote.url %q: %v", r.URL, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return r, refusal.New(refusal.ErrInvalid, 0, "remote.url %q: want an http:// or https:// URL", r.URL)
	case u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/"):
		return r, refusal.New(refusal.ErrInvalid, 0, "remote.url %q: want scheme://host[:port] only (credentials go in username and password)", r.URL)
	case (r.Username == "") != (r.Password == ""):
		return r, refusal.New(refusal.ErrInvalid, 0, "remote: give both username and password, or neither")
	}
	if err := topic.ValidateName(r.Topic); err != nil {
		return r, refusal.New(refusal.ErrInvalid, 0, "remote.topic: %v", err)
	}
	r.URL = u.Scheme + "://" + u.Host
	return r, nil
}

// attachRemote creates a remote child: a link record with no partitions,
// created attached in one Raft command (rule: remote start points). The
// answer describes the link: its target (without credentials), its state,
// and a warning when credentials would cross the network in plaintext.
func (e *Engine) attachRemote(ctx context.Context, parentName string, req AttachRequest) (AttachView, error) {
	for _, n := range []string{parentName, req.Child} {
		if err := topic.ValidateName(n); err != nil {
			return AttachView{}, err
		}
	}
	target, err := parseRemote(req.Remote)
	if err != nil {
		return AttachView{}, err
	}
	if req.DelayMs != 0 {
		return AttachView{}, refusal.New(refusal.ErrInvalid, 0, "a remote child has no delay")
	}
	start := req.Start
	switch start {
	case "":
		start = startAttach
	case startAttach, startFrontier, startOldest:
	default:
		return AttachView{}, refusal.New(refusal.ErrInvalid, 0, "start %q: want attach, frontier or oldest", req.Start)
	}
	parent, ok := e.meta.Topic(parentName)
	if !ok || parent.Remote != nil {
		return AttachView{}, refusal.New(refusal.ErrTopicNotFound, 0, "parent topic %q does not exist", parentName)
	}
	if existing, ok := e.meta.Topic(req.Child); ok {
		if existing.Remote != nil {
			return AttachView{}, refusal.New(refusal.ErrConflict, 0, "%q is already a remote child of %q", req.Child, existing.Parent)
		}
		return AttachView{}, refusal.New(refusal.ErrConflict, 0, "topic %q already exists here; a remote child needs a name of its own", req.Child)
	}
	child := meta.Topic{Name: req.Child, Remote: &target, CreatedAt: e.clk.Now().Unix()}
	if err := checkLink(parent, child, 0); err != nil {
		return AttachView{}, err
	}
	spec, err := e.attachSpec(ctx, parent, 0, start)
	if err != nil {
		return AttachView{}, err
	}
	spec.Filter, spec.FilterScope = req.Filter, req.FilterScope // checked by Attach
	if err := e.topics.MetaErr(e.meta.CreateTopic(ctx, child, nil, &spec)); err != nil {
		return AttachView{}, err
	}
	v, err := e.attachView(parentName, req.Child, spec)
	if err != nil {
		return AttachView{}, err
	}
	// Until its first send the link reads "running", as the listing says.
	v.Remote, v.State = target.Public(), StateRunning
	if w := plaintextWarning(target); w != "" {
		v.Warnings = append(v.Warnings, w)
		e.cfg.Logger.Warn("remote child: credentials will cross the network in plaintext", "parent", parentName,
			"child", req.Child, "target", target.URL)
	}
	return v, nil
}

// plaintextWarning is the warning for a target that gets credentials over
// plain http:// (the rule credentials never shown allows it: inside a
// trusted network, or behind a TLS-terminating proxy), or "" when there is
// nothing to warn about.
func plaintextWarning(t meta.RemoteTarget) string {
	if t.Username == "" || !strings.HasPrefix(t.URL, "http://") {
		return ""
	}
	return fmt.Sprintf("remote.url %s is plaintext http:// and the link has credentials: they cross the network unencrypted with every batch; use https:// unless the path is trusted",
		t.URL)
}

// sendRemote delivers a slab to a remote child (rules: lanes by key, held
// records bounded, refusal stops the link): split into lanes by key (one
// key, one lane; keyless records together, in slab order), each lane one
// batch produce to the target, all lanes at once. It returns nil only when
// the target answered 202 for every record; lanes that failed are retried
// alone, forever, backing off 1 s doubling to 30 s, the link's epoch
// re-checked each time (rule: re-check every round). The held records are
// copied off the parent log after the first failure, so a long outage does
// not pin its buffers; they stay bounded by one slab (rule: held records
// bounded).
//
// Like commitSlab it takes the slab over and clears it: after the copy,
// nothing references the parent's frames.
func (e *Engine) sendRemote(ctx context.Context, c *cursor, slab *[]storage.Record) error {
	k := c.key
	recs := *slab
	*slab = nil // the lanes are the only reference from here on
	lastAt := recs[len(recs)-1].CommittedAt
	lanes := laneize(recs)
	recs = nil
	backoff := e.cfg.Backoff
	for round := 0; ; round++ {
		child, ok := e.meta.Topic(k.child)
		if !ok || child.AttachEpoch != c.link.epoch || child.Parent != k.parent || child.Remote == nil {
			return errStopped
		}
		// One lane per bucket; the committer reads the target (and its
		// credentials, which may have changed) afresh on every send.
		active := make([]int, 0, len(lanes))
		for i, lane := range lanes {
			if len(lane) > 0 {
				active = append(active, i)
			}
		}
		errs := route.Pass{Parallel: remoteLanes, Clock: e.clk}.Commit(ctx, len(active), func(ctx context.Context, i int) error {
			return e.remote.Commit(ctx, k.child, 0, active[i], lanes[active[i]])
		})
		var (
			worst      error
			worstState string
		)
		for i, err := range errs {
			lane := active[i]
			if err == nil {
				e.m.RemoteSent.Add(float64(len(lanes[lane])))
				lanes[lane] = nil // delivered: never sent again
				continue
			}
			state := remoteState(err)
			e.m.RemoteErrors.WithLabelValues(state).Inc()
			if worst == nil || stateRank(state) > stateRank(worstState) {
				worst, worstState = err, state
			}
		}
		if worst == nil {
			c.ackedAt.Store(lastAt)
			c.detail.Store(nil)
			e.setLinkState(c, StateRunning)
			return nil
		}
		c.detail.Store(detailOf(worst, worstState))
		e.setLinkState(c, worstState)
		e.cfg.Logger.Warn("remote child: send failing; retrying the failed lanes", "parent", k.parent, "child", k.child,
			"partition", k.partition, "state", worstState, "err", worst)
		if round == 0 {
			for i := range lanes {
				lanes[i] = detach(lanes[i])
			}
		}
		if !e.sleep(ctx, backoff) {
			return ctx.Err()
		}
		backoff = min(backoff*2, remoteBackoffCap*e.cfg.Backoff)
	}
}

// laneize splits a slab into lanes by key, preserving order within a lane.
func laneize(slab []storage.Record) [][]storage.Record {
	lanes := make([][]storage.Record, remoteLanes)
	for _, r := range slab {
		i := 0
		if len(r.Key) > 0 {
			i = topic.KeyPartition(r.Key, remoteLanes)
		}
		lanes[i] = append(lanes[i], r)
	}
	return lanes
}

// remoteStates is the link state (rule: refusal stops the link) of each status a target's public
// API answers that waiting does not cure. A remote target is another
// cluster, reached through the public client, so its status is all it
// says: this is the one place fan-out reads one, at that seam.
var remoteStates = map[int]string{
	http.StatusUnauthorized: StateAuthFailed,
	http.StatusForbidden:    StateAuthFailed,
	http.StatusNotFound:     StateTargetMissing,
	// The target refuses a record: the committer named its parent
	// offset. The link stops there; nothing is skipped without an
	// operator.
	http.StatusBadRequest:            StateRejected,
	http.StatusRequestEntityTooLarge: StateRejected,
	http.StatusConflict:              StateRejected,
}

// remoteState classifies a failed send into a link state (rule: refusal
// stops the link): the target's answer says whether waiting helps.
func remoteState(err error) string {
	if state, ok := remoteStates[client.StatusOf(err)]; ok {
		return state
	}
	return StateRetrying // timeouts, refused connections, 5xx, 503
}

// setLinkState records a cursor's link state and re-exports the link's.
func (e *Engine) setLinkState(c *cursor, state string) {
	if old, _ := c.state.Load().(string); old == state {
		return
	}
	c.state.Store(state)
	e.refreshLinkState(c.key.parent, c.key.child, cursorKey{})
}

// refreshLinkState exports narad_remote_link_state for a link: 1 on the
// worst state over this node's cursors of it (except gone, one that is
// exiting), 0 on the others; no series once none of them runs here.
func (e *Engine) refreshLinkState(parent, child string, gone cursorKey) {
	worst, any := StateRunning, false
	e.mu.Lock()
	for k, x := range e.running {
		if k.parent != parent || k.child != child || k == gone {
			continue
		}
		if s, ok := x.state.Load().(string); ok {
			any = true
			if stateRank(s) > stateRank(worst) {
				worst = s
			}
		}
	}
	e.mu.Unlock()
	for _, s := range linkStates {
		if !any {
			e.m.RemoteLinkState.DeleteLabelValues(parent, child, s)
			continue
		}
		v := 0.0
		if s == worst {
			v = 1
		}
		e.m.RemoteLinkState.WithLabelValues(parent, child, s).Set(v)
	}
}

// linkDetail says why a remote link is not running: the failed send's
// error, and for a record the target rejects, its parent offset (rule:
// refusal stops the link). The listing shows it, through the stats RPC for
// a partition owned elsewhere: before, only the owner's log said which
// record stopped the link.
type linkDetail struct {
	reason   string
	rejected *uint64
}

// maxReasonBytes bounds a state reason: the target's error sentence is
// the useful part, and a listing must stay small.
const maxReasonBytes = 512

func detailOf(err error, state string) *linkDetail {
	d := &linkDetail{reason: err.Error()}
	if len(d.reason) > maxReasonBytes {
		d.reason = strings.ToValidUTF8(d.reason[:maxReasonBytes], "") + "…"
	}
	var re *refusedError
	if state == StateRejected && errors.As(err, &re) {
		off := re.offset
		d.rejected = &off
	}
	return d
}

// linkDetailOf is a cursor's state reason and rejected offset.
func linkDetailOf(c *cursor) (string, *uint64) {
	if d := c.detail.Load(); d != nil {
		return d.reason, d.rejected
	}
	return "", nil
}

// linkState is a cursor's link state; "" before its first send.
func linkState(c *cursor) string {
	s, _ := c.state.Load().(string)
	return s
}
