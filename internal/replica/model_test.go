package replica

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/meta"
	"pgregory.net/rapid"
)

// The replication model: three replicas with in-memory logs, the
// metastore's checks (memMeta), and a network the test steps. The Leader
// and Follower under test are the real ones; the model calls their
// single steps (Follower.prepare and apply around a fetch, Leader.begin
// and tick) where Run and Start would loop, so every interleaving is the
// test's choice and a failing seed replays. A leader's own commits are
// written before they are durable (flush), and followers may copy them
// in between; a crash takes back what was only written. Failures
// include what a crash does in the middle of a step (crashMidFetch: the process dies
// between the durable writes of one fetch answer) and in-sync proposals
// whose answer was lost, applied or still to apply (modelProposer).
//
// Invariants after every action:
//   - every acknowledged record (WaitCommitted returned nil) is in the
//     current leader's log at its offset with its payload;
//   - no record a reader could have seen (below a replica's visible high
//     watermark, as that replica held it) is ever cut or changed, on any
//     replica, nor missing from the current leader;
//   - every in-sync member's log agrees with the leader's below the
//     leader's committed point.
func TestModelNoAcknowledgedRecordIsLost(t *testing.T) {
	var acks, elections, renewals, wipes, truncations, early, frames int
	rapid.Check(t, func(rt *rapid.T) {
		m := newModel(rt)
		m.run(rt, 150)
		acks, elections, wipes = acks+m.acks, elections+m.elections, wipes+m.wipes
		renewals, early, frames = renewals+m.meta.renewals, early+m.early, frames+m.frames
		for _, n := range m.nodes {
			truncations += n.log.cuts
		}
	})
	// The runs must get somewhere, or a rule that makes the engine do
	// nothing would pass vacuously.
	t.Logf("over all runs: %d acknowledged, %d elections, %d renewed epochs, %d wipes, %d cuts, %d fetches of records not yet durable on the leader, %d answered with frames",
		acks, elections, renewals, wipes, truncations, early, frames)
	if acks == 0 || elections == 0 || renewals == 0 || wipes == 0 || truncations == 0 || early == 0 || frames == 0 {
		t.Fatalf("the model made no progress: %d acknowledged, %d elections, %d renewed epochs, %d wipes, %d cuts, %d early fetches, %d with frames",
			acks, elections, renewals, wipes, truncations, early, frames)
	}
}

var modelNodes = []string{"a", "b", "c"}

type modelNode struct {
	id       string
	log      *memLog
	alive    bool
	gen      int // process incarnation: answers to an older one are lost
	leader   *Leader
	follower *Follower
	inflight bool
	wipes    int // its disk is diskOf(id, wipes)
}

type modelMsg struct {
	response bool
	from, to string
	gen      int // the fetching follower's incarnation
	req      FetchRequest
	resp     FetchResponse
	err      error
}

type produced struct {
	node    string
	gen     int
	leader  *Leader
	off     uint64
	payload []byte
}

type model struct {
	t       *rapid.T
	clk     *clock.Fake
	meta    *memMeta
	nodes   map[string]*modelNode
	net     []modelMsg
	pending []produced
	acked   map[uint64][]byte
	seen    map[uint64][]byte
	seq     int
	// lost: the node's disk was wiped and no leader has re-admitted it to
	// the in-sync set since (the model's knowledge, not the metastore's:
	// the metastore knows only disk ids). One at a time.
	lost map[string]bool
	// held: in-sync proposals in the Raft log whose proposers were told
	// they failed (modelProposer).
	held []heldProposal
	// counters, to see that the model gets somewhere
	acks, elections, wipes, early int
	frames                        int // fetches answered with frames
}

var errUnreachable = errors.New("model: no leader there")

func newModel(t *rapid.T) *model {
	m := &model{t: t, clk: clock.NewFake(time.Time{}), nodes: map[string]*modelNode{},
		acked: map[uint64][]byte{}, seen: map[uint64][]byte{}, lost: map[string]bool{}}
	for _, id := range modelNodes {
		log := newMemLog()
		log.lazy = true
		m.nodes[id] = &modelNode{id: id, log: log, alive: true}
	}
	m.meta = newMemMeta(modelNodes, func(id string) bool { return m.nodes[id].alive })
	for _, id := range modelNodes {
		m.sync(m.nodes[id])
	}
	return m
}

// weighted is one action and how often it is drawn: the network and the
// producer act more often than failures strike.
type weighted struct {
	name   string
	weight int
	do     func(*rapid.T)
}

func (m *model) actions() []weighted {
	alive := func(n *modelNode) bool { return n.alive }
	return []weighted{
		{"produce", 5, m.produce},
		{"flush", 4, func(t *rapid.T) {
			m.flush(m.pick(t, "flushed", func(n *modelNode) bool { return n.alive && n.log.unsynced() }))
		}},
		{"pump", 5, m.pump},
		{"send", 2, m.send},
		{"deliver", 3, m.deliver},
		{"drop", 1, m.drop},
		{"timeout", 1, m.timeout},
		{"tick", 3, m.tick},
		{"sync", 1, func(t *rapid.T) { m.sync(m.pick(t, "sync", alive)) }},
		{"syncAll", 2, func(*rapid.T) {
			for _, id := range modelNodes {
				m.sync(m.nodes[id])
			}
		}},
		{"crash", 1, func(t *rapid.T) { m.crash(m.pick(t, "crash", alive)) }},
		{"restart", 2, func(t *rapid.T) { m.restart(m.pick(t, "restart", func(n *modelNode) bool { return !n.alive })) }},
		{"wipe", 1, m.wipe},
		{"elect", 2, m.elect},
		{"crashMidFetch", 1, m.crashMidFetch},
		{"settleHeld", 1, func(t *rapid.T) { m.settleHeld(t, "", true) }},
	}
}

// run draws and performs up to steps actions (an action with nothing to
// act on is skipped), checking the invariants after each.
func (m *model) run(t *rapid.T, steps int) {
	acts := m.actions()
	var deck []int
	for i, a := range acts {
		for range a.weight {
			deck = append(deck, i)
		}
	}
	n := rapid.IntRange(1, steps).Draw(t, "steps")
	for range n {
		a := acts[deck[rapid.IntRange(0, len(deck)-1).Draw(t, "action")]]
		t.Log(a.name)
		a.do(t)
		m.readmitted()
		m.settle()
		m.check()
	}
}

// pick draws a node satisfying ok, or skips the action.
func (m *model) pick(t *rapid.T, label string, ok func(*modelNode) bool) *modelNode {
	var c []*modelNode
	for _, id := range modelNodes {
		if ok(m.nodes[id]) {
			c = append(c, m.nodes[id])
		}
	}
	if len(c) == 0 {
		return nil
	}
	return c[rapid.IntRange(0, len(c)-1).Draw(t, label)]
}

func (m *model) produce(t *rapid.T) {
	n := m.pick(t, "producer", func(n *modelNode) bool { return n.alive && n.leader != nil && n.leader.Writable() == nil })
	if n == nil {
		return
	}
	m.seq++
	p := []byte(fmt.Sprintf("r%d@%s", m.seq, n.id))
	off, err := n.log.commit(p)
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	m.pending = append(m.pending, produced{node: n.id, gen: n.gen, leader: n.leader, off: off, payload: p})
}

func (m *model) send(t *rapid.T) {
	n := m.pick(t, "fetcher", func(n *modelNode) bool { return n.alive && n.follower != nil && !n.inflight })
	if n == nil {
		return
	}
	leader, req, wait, err := n.follower.prepare()
	switch {
	case errors.Is(err, errLeading), wait != nil:
		return // the next sync turns it into a leader, or it waits for a view
	case err != nil:
		t.Fatalf("%s: prepare: %v", n.id, err)
	}
	req.Wait = 0 // the model's leader answers at once; the long-poll has its own test
	n.inflight = true
	m.net = append(m.net, modelMsg{from: n.id, to: leader, gen: n.gen, req: req})
}

func (m *model) deliver(t *rapid.T) {
	if len(m.net) == 0 {
		return
	}
	m.deliverAt(t, rapid.IntRange(0, len(m.net)-1).Draw(t, "message"))
}

func (m *model) deliverAt(t *rapid.T, i int) {
	msg := m.net[i]
	m.net = slices.Delete(m.net, i, i+1)
	if !msg.response {
		if from := m.nodes[msg.from]; from.gen != msg.gen {
			return // a process's connections die with it
		}
		to := m.nodes[msg.to]
		ans := modelMsg{response: true, from: msg.to, to: msg.from, gen: msg.gen, req: msg.req, err: errUnreachable}
		if to.alive && to.leader != nil {
			durable := to.log.End()
			ans.resp, ans.err = to.leader.HandleFetch(context.Background(), msg.req)
			if recs := fetched(ans.resp); len(recs) > 0 && recs[len(recs)-1].Offset >= durable {
				m.early++ // records the leader has not made durable yet
			}
			if len(ans.resp.Frames) > 0 {
				m.frames++
			}
		}
		if to.alive || rapid.Bool().Draw(t, "answerFromDead") {
			m.net = append(m.net, ans)
		}
		return
	}
	to := m.nodes[msg.to]
	if !to.alive || to.gen != msg.gen || to.follower == nil {
		return
	}
	to.inflight = false
	_ = to.follower.apply(msg.req, msg.resp, msg.err) // an error is a retry
}

// pump is the network running freely for a while: every follower
// fetches and every message is delivered, in order, a few rounds over;
// a leader's writes become durable in some rounds, before its followers
// fetch, and not in others.
func (m *model) pump(t *rapid.T) {
	rounds := rapid.IntRange(1, 3).Draw(t, "rounds")
	for range rounds {
		if rapid.Bool().Draw(t, "flushFirst") {
			for _, id := range modelNodes {
				m.flush(m.nodes[id])
			}
		}
		for _, id := range modelNodes {
			n := m.nodes[id]
			if !n.alive || n.follower == nil {
				continue
			}
			if n.inflight && !slices.ContainsFunc(m.net, func(msg modelMsg) bool {
				return msg.gen == n.gen && (msg.from == n.id || msg.to == n.id)
			}) {
				n.inflight = false // its fetch was lost: the RPC times out
			}
			if n.inflight {
				continue
			}
			leader, req, wait, err := n.follower.prepare()
			if err != nil && !errors.Is(err, errLeading) {
				t.Fatalf("%s: prepare: %v", n.id, err)
			}
			if err == nil && wait == nil {
				req.Wait = 0
				n.inflight = true
				m.net = append(m.net, modelMsg{from: n.id, to: leader, gen: n.gen, req: req})
			}
		}
		for len(m.net) > 0 {
			m.deliverAt(t, 0)
		}
	}
}

func (m *model) drop(t *rapid.T) {
	if len(m.net) == 0 {
		return
	}
	i := rapid.IntRange(0, len(m.net)-1).Draw(t, "dropped")
	m.net = slices.Delete(m.net, i, i+1)
}

// timeout is a follower giving up on its fetch: it may send again while
// the old request or answer is still on the way.
func (m *model) timeout(t *rapid.T) {
	n := m.pick(t, "timeout", func(n *modelNode) bool { return n.alive && n.inflight })
	if n == nil {
		return
	}
	n.inflight = false
}

func (m *model) tick(t *rapid.T) {
	d := rapid.SampledFrom([]time.Duration{100 * time.Millisecond, 500 * time.Millisecond, time.Second, 2500 * time.Millisecond}).Draw(t, "advance")
	m.clk.Advance(d)
	for _, id := range modelNodes {
		if n := m.nodes[id]; n.alive && n.leader != nil {
			n.leader.tick(context.Background())
		}
	}
}

// sync brings n's metastore replica up to date and gives n the role the
// view says, as the wiring does.
func (m *model) sync(n *modelNode) {
	if n == nil || !n.alive {
		return
	}
	v := m.meta.view()
	if n.leader != nil {
		n.leader.Update(v)
		if n.leader.Writable() == ErrDeposed {
			_ = n.leader.Close()
			n.leader = nil
			// Its commits' fsyncs end (a failed one is a crash of the
			// log: the crash action): a follower's log is durable to
			// its written end.
			n.log.flush()
		}
	}
	if n.follower != nil {
		n.follower.Update(v)
	}
	if v.Leader != n.id {
		if n.follower == nil {
			f, err := NewFollower(FollowerConfig{Self: n.id, DiskID: diskOf(n.id, n.wipes), View: v, Log: n.log, Transport: noTransport{}, Clock: m.clk})
			if err != nil {
				m.t.Fatalf("NewFollower: %v", err)
			}
			n.follower = f
		}
		return
	}
	// Leading: the follower stops first (its answers in flight are lost).
	if n.follower != nil {
		_ = n.follower.Close()
		n.follower, n.inflight = nil, false
		n.gen++
	}
	if n.leader != nil {
		return
	}
	l, err := NewLeader(LeaderConfig{Self: n.id, View: v, Log: n.log, Proposer: modelProposer{m: m, node: n.id}, Clock: m.clk})
	if err != nil {
		m.t.Fatalf("NewLeader: %v", err)
	}
	// A leader whose disk was replaced is outside the in-sync set: it
	// refuses to lead (ErrStateLost) until the controller elects another.
	if err := l.begin(context.Background()); err != nil && !errors.Is(err, ErrStateLost) {
		m.t.Fatalf("%s: begin: %v", n.id, err)
	}
	n.leader = l
	l.Update(m.meta.view()) // its own start, if it was just recorded
}

// flush is the fsync of n's written records ending.
func (m *model) flush(n *modelNode) {
	if n == nil || !n.alive {
		return
	}
	n.log.flush()
}

func (m *model) crash(n *modelNode) {
	if n == nil {
		return
	}
	n.alive, n.inflight = false, false
	n.leader, n.follower = nil, nil // a SIGKILL closes nothing
	n.gen++
	n.log.crash()
}

func (m *model) restart(n *modelNode) {
	if n == nil {
		return
	}
	n.alive = true
	m.sync(n)
}

func (m *model) wipe(t *rapid.T) {
	// One disk at a time: the guarantee is for the loss of a minority.
	// A replaced disk is whole again once a leader re-admitted it.
	n := m.pick(t, "wiped", func(n *modelNode) bool {
		for id := range m.lost {
			if id != n.id {
				return false
			}
		}
		return true
	})
	if n == nil {
		return
	}
	if n.alive {
		m.crash(n)
	}
	n.log.wipe()
	n.wipes++
	m.lost[n.id] = true
	m.wipes++
	// The restarted node's first heartbeat names its new disk; the
	// controller records it (out of the in-sync set) before it counts,
	// and the node serves nothing until then (cluster: Fenced).
	m.meta.replaceDisk(n.id, diskOf(n.id, n.wipes))
	m.restart(n)
}

// readmitted forgets the loss of a node that is back in the in-sync set:
// a leader found it caught up on its new disk.
func (m *model) readmitted() {
	for _, id := range m.meta.view().InSync {
		delete(m.lost, id)
	}
}

func (m *model) elect(t *rapid.T) {
	n := m.pick(t, "candidate", func(*modelNode) bool { return true })
	if n == nil {
		return
	}
	if err := m.meta.electLeader(n.id); err != nil {
		return // refused
	}
	m.elections++
	m.sync(n) // the controller's own replica first; the others follow by sync
}

// settle turns produces whose WaitCommitted returned nil into acknowledged
// records and forgets those that can no longer be.
func (m *model) settle() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // WaitCommitted answers without waiting
	kept := m.pending[:0]
	for _, p := range m.pending {
		n := m.nodes[p.node]
		if !n.alive || n.gen != p.gen || n.leader != p.leader {
			continue // the producer got an error
		}
		switch err := p.leader.WaitCommitted(ctx, p.off); {
		case err == nil:
			if prev, ok := m.acked[p.off]; ok && !bytes.Equal(prev, p.payload) {
				m.t.Fatalf("offset %d acknowledged twice: %q and %q", p.off, prev, p.payload)
			}
			// A replaced disk may have been one of the majority when it
			// acknowledged: it counts (one disk is lost at a time).
			if held := m.holders(p.off, p.payload) + len(m.lost); held < meta.Majority(len(modelNodes)) {
				m.t.Fatalf("%q at %d acknowledged while durable on %d replicas", p.payload, p.off, held)
			}
			m.acked[p.off] = p.payload
			m.acks++
		case errors.Is(err, context.Canceled):
			kept = append(kept, p)
		}
	}
	m.pending = kept
}

// holders is how many replicas' durable logs hold payload at off.
func (m *model) holders(off uint64, payload []byte) int {
	n := 0
	for _, id := range modelNodes {
		if got, ok := m.nodes[id].log.at(off); ok && bytes.Equal(got, payload) {
			n++
		}
	}
	return n
}

func (m *model) check() {
	v := m.meta.view()
	owner := m.nodes[v.Leader]
	ownerOK := !m.lost[owner.id]
	for off, p := range m.acked {
		// one disk lost at a time (wipe): an acknowledged record is still
		// somewhere, whoever leads
		if m.holders(off, p) == 0 {
			m.t.Fatalf("acknowledged %q at %d is on no replica", p, off)
		}
	}
	for off, p := range m.acked {
		if !ownerOK {
			break
		}
		if got, ok := owner.log.at(off); !ok || !bytes.Equal(got, p) {
			m.t.Fatalf("acknowledged %q at %d: leader %s (epoch %d) holds %q (%v)", p, off, owner.id, v.Epoch, got, ok)
		}
	}
	for _, id := range modelNodes {
		n := m.nodes[id]
		for off := range n.log.HWM() {
			got, _ := n.log.at(off)
			if prev, ok := m.seen[off]; ok && !bytes.Equal(prev, got) {
				m.t.Fatalf("%s shows %q at %d where a reader saw %q", id, got, off, prev)
			}
			m.seen[off] = got
		}
	}
	for off, p := range m.seen {
		if !ownerOK {
			break
		}
		if got, ok := owner.log.at(off); !ok || !bytes.Equal(got, p) {
			m.t.Fatalf("a reader saw %q at %d: leader %s (epoch %d) holds %q (%v)", p, off, owner.id, v.Epoch, got, ok)
		}
	}
	if owner.alive && owner.leader != nil && ownerOK && owner.leader.Writable() == nil {
		c := owner.leader.Committed()
		for _, id := range v.InSync {
			if id == owner.id || m.lost[id] {
				continue
			}
			if off, differ := m.nodes[id].log.diffBelow(owner.log, c); differ {
				m.t.Fatalf("in-sync %s differs from leader %s at %d, below the committed point %d", id, owner.id, off, c)
			}
		}
	}
}

// noTransport: the model carries fetches itself (prepare, deliver,
// apply); Run is never called on a model follower.
type noTransport struct{}

func (noTransport) Fetch(context.Context, string, FetchRequest) (FetchResponse, error) {
	return FetchResponse{}, errUnreachable
}
