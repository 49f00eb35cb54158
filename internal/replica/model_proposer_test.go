package replica

import (
	"context"
	"errors"

	"github.com/narad-io/narad/internal/meta"
	"pgregory.net/rapid"
)

// modelProposer is the metastore as a leader reaches it over the
// network, in the model. An in-sync proposal may be applied and
// answered; applied with its answer lost (a timeout the leader cannot
// tell from a refusal); or held in the Raft log, to apply later or never.
// Raft orders one leader's proposals: a held proposal is settled
// (applied or dropped) before any later proposal of the same node, and
// the "settle" action settles the oldest one at any time. So the model
// sees what the leader's committed point must survive: a proposal it
// counted as failed that takes effect after all.
type modelProposer struct {
	m    *model
	node string
}

// heldProposal is an in-sync proposal in the Raft log whose proposer
// was told it failed.
type heldProposal struct {
	node string
	cmd  meta.SetInSyncCmd
}

var errAnswerLost = errors.New("model: the proposal's answer was lost")

func (p modelProposer) SetInSync(ctx context.Context, c meta.SetInSyncCmd) error {
	m := p.m
	m.settleHeld(m.t, p.node, false)
	switch rapid.IntRange(0, 7).Draw(m.t, "proposal") {
	case 0:
		_ = m.meta.SetInSync(ctx, c)
		return errAnswerLost
	case 1:
		m.held = append(m.held, heldProposal{node: p.node, cmd: c})
		return errAnswerLost
	}
	return m.meta.SetInSync(ctx, c)
}

func (p modelProposer) RenewEpoch(ctx context.Context, topic string, partition int, epoch uint64, leader string) error {
	return p.m.meta.RenewEpoch(ctx, topic, partition, epoch, leader)
}

func (p modelProposer) StartEpoch(ctx context.Context, topic string, partition int, epoch uint64, leader string, offset uint64) error {
	return p.m.meta.StartEpoch(ctx, topic, partition, epoch, leader, offset)
}

// settleHeld applies or drops held proposals: node's all (before its
// next proposal), or the oldest of anyone's when oldest is set.
func (m *model) settleHeld(t *rapid.T, node string, oldest bool) {
	kept := m.held[:0]
	for i, h := range m.held {
		if (oldest && i == 0) || (!oldest && h.node == node) {
			if rapid.Bool().Draw(t, "heldApplies") {
				_ = m.meta.SetInSync(context.Background(), h.cmd)
			}
			continue
		}
		kept = append(kept, h)
	}
	m.held = kept
}

// crashMidFetch delivers a fetch answer to a follower whose process dies
// after k of the durable writes that answer causes (k drawn from 0..2),
// then restarts nothing: the node is down, as after a SIGKILL.
func (m *model) crashMidFetch(t *rapid.T) {
	var answers []int
	for i, msg := range m.net {
		if n := m.nodes[msg.to]; msg.response && n.alive && n.gen == msg.gen && n.follower != nil {
			answers = append(answers, i)
		}
	}
	if len(answers) == 0 {
		return
	}
	i := answers[rapid.IntRange(0, len(answers)-1).Draw(t, "answer")]
	n := m.nodes[m.net[i].to]
	n.log.dieAfter(rapid.IntRange(0, 2).Draw(t, "writes"))
	m.deliverAt(t, i)
	m.crash(n)
}
