package awsapi

import (
	"context"
	"net/http"
	"sync"
	"time"
)

// Message move tasks: StartMessageMoveTask moves a dead-letter queue's
// messages to a destination by /v1 redrive, in rounds, in the background.
// A task lives on the node that started it, in memory: it ends with the
// node, and ListMessageMoveTasks on another node does not see it
// (docs/aws.md, "What differs"). What it moved stays moved — each round
// is a redrive, which settles a source record only once its copy is
// durable.

type moveTask struct {
	handle, source, dest string
	rate                 int64 // messages per second; 0: as fast as redrive goes
	started              int64 // Unix ms

	mu      sync.Mutex
	status  string // RUNNING, COMPLETED, CANCELLING, CANCELLED, FAILED
	moved   int64
	toMove  int64
	failure string
	cancel  context.CancelFunc
}

type moveTasks struct {
	mu    sync.Mutex
	tasks []*moveTask // oldest first; at most maxTasks kept
}

const maxTasks = 1000

func newMoveTasks() *moveTasks { return &moveTasks{} }

func (m *moveTasks) add(t *moveTask) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tasks = append(m.tasks, t)
	if len(m.tasks) > maxTasks {
		m.tasks = m.tasks[len(m.tasks)-maxTasks:]
	}
}

func (m *moveTasks) find(f func(*moveTask) bool) []*moveTask {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*moveTask
	for i := len(m.tasks) - 1; i >= 0; i-- {
		if f(m.tasks[i]) {
			out = append(out, m.tasks[i])
		}
	}
	return out
}

func (t *moveTask) view() map[string]any {
	t.mu.Lock()
	defer t.mu.Unlock()
	v := map[string]any{"Status": t.status, "SourceArn": t.source, "ApproximateNumberOfMessagesMoved": t.moved,
		"ApproximateNumberOfMessagesToMove": t.toMove, "StartedTimestamp": t.started}
	if t.status == "RUNNING" {
		v["TaskHandle"] = t.handle
	}
	if t.dest != "" {
		v["DestinationArn"] = t.dest
	}
	if t.rate > 0 {
		v["MaxNumberOfMessagesPerSecond"] = t.rate
	}
	if t.failure != "" {
		v["FailureReason"] = t.failure
	}
	return v
}

func (e *Edge) startMessageMoveTask(c *call) (map[string]any, error) {
	srcARN, err := c.p.required("SourceArn")
	if err != nil {
		return nil, err
	}
	src, ok := e.nameOfARN(serviceSQS, srcARN)
	if !ok {
		return nil, errInvalidParameter.f("SourceArn %q is not a queue ARN of this account and region.", srcARN)
	}
	rate, err := c.p.integer("MaxNumberOfMessagesPerSecond", 0, 1, 500)
	if err != nil {
		return nil, err
	}
	srcView, err := e.topic(c, src, errResourceNotFound)
	if err != nil {
		return nil, err
	}
	ts, err := e.allTopics(c)
	if err != nil {
		return nil, err
	}
	var sources []string
	for _, t := range ts {
		if t.DeadLetterTopic == src {
			sources = append(sources, t.Name)
		}
	}
	if len(sources) == 0 {
		return nil, errInvalidParameter.f("Source queue %s is not a dead-letter queue: no queue's RedrivePolicy names it.", src)
	}
	dstARN, err := c.p.str("DestinationArn")
	if err != nil {
		return nil, err
	}
	dst := ""
	if dstARN != "" {
		if dst, ok = e.nameOfARN(serviceSQS, dstARN); !ok {
			return nil, errInvalidParameter.f("DestinationArn %q is not a queue ARN of this account and region.", dstARN)
		}
		if _, err := e.topic(c, dst, errResourceNotFound); err != nil {
			return nil, err
		}
	} else {
		if len(sources) > 1 {
			return nil, errInvalidParameter.f("Dead-letter queue %s serves %d queues; Narad does not track which each message came from, so give DestinationArn.", src, len(sources))
		}
		dst = sources[0]
	}
	if len(e.tasks.find(func(t *moveTask) bool {
		t.mu.Lock()
		defer t.mu.Unlock()
		return t.source == srcARN && t.status == "RUNNING"
	})) > 0 {
		return nil, errUnsupportedOperation.f("A message move task is already running on %s.", src)
	}
	visible, _, _ := srcView.counts()
	ctx, cancel := context.WithCancel(context.WithoutCancel(c.ctx))
	t := &moveTask{handle: newRequestID(), source: srcARN, dest: dstARN, rate: rate, started: e.now().UnixMilli(),
		status: "RUNNING", toMove: int64(visible), cancel: cancel}
	e.tasks.add(t)
	tc := *c
	tc.ctx = ctx
	go e.runMove(&tc, t, src, dst)
	return map[string]any{"TaskHandle": t.handle}, nil
}

// runMove redrives src into dst in rounds until src has nothing left to
// move, the task is cancelled or a round fails.
func (e *Edge) runMove(c *call, t *moveTask, src, dst string) {
	defer t.cancel()
	round := int64(1000)
	if t.rate > 0 {
		round = t.rate
	}
	for {
		start := time.Now()
		a, err := e.v1(c, http.MethodPost, "/v1/topics/"+src+"/redrive", nil, map[string]any{"to": dst, "max": round})
		var res struct {
			Moved int64 `json:"moved"`
		}
		if err == nil && a.ok() {
			err = a.decode(&res)
		} else if err == nil {
			err = a.refusal(serviceSQS, errResourceNotFound)
		}
		t.mu.Lock()
		t.moved += res.Moved
		switch {
		case c.ctx.Err() != nil:
			t.status = "CANCELLED"
		case err != nil:
			t.status, t.failure = "FAILED", err.Error()
		case res.Moved == 0:
			t.status = "COMPLETED"
		}
		done := t.status != "RUNNING" && t.status != "CANCELLING"
		t.mu.Unlock()
		if done {
			return
		}
		if t.rate > 0 {
			select {
			case <-c.ctx.Done():
			case <-time.After(time.Second - time.Since(start)):
			}
		}
	}
}

func (e *Edge) listMessageMoveTasks(c *call) (map[string]any, error) {
	srcARN, err := c.p.required("SourceArn")
	if err != nil {
		return nil, err
	}
	limit, err := c.p.integer("MaxResults", 1, 1, 10)
	if err != nil {
		return nil, err
	}
	src, ok := e.nameOfARN(serviceSQS, srcARN)
	if !ok {
		return nil, errResourceNotFound.f("The resource that you specified for the SourceArn parameter doesn't exist.")
	}
	if _, err := e.topic(c, src, errResourceNotFound); err != nil {
		return nil, err
	}
	ts := e.tasks.find(func(t *moveTask) bool { return t.source == srcARN })
	out := []any{}
	for i, t := range ts {
		if int64(i) >= limit {
			break
		}
		out = append(out, t.view())
	}
	return map[string]any{"Results": out}, nil
}

func (e *Edge) cancelMessageMoveTask(c *call) (map[string]any, error) {
	h, err := c.p.required("TaskHandle")
	if err != nil {
		return nil, err
	}
	ts := e.tasks.find(func(t *moveTask) bool { return t.handle == h })
	if len(ts) == 0 {
		return nil, errResourceNotFound.f("No message move task has the handle %s on this node.", h)
	}
	t := ts[0]
	t.mu.Lock()
	if t.status != "RUNNING" {
		st := t.status
		t.mu.Unlock()
		return nil, errUnsupportedOperation.f("The message move task is %s, not RUNNING.", st)
	}
	t.status = "CANCELLING"
	moved := t.moved
	t.mu.Unlock()
	t.cancel()
	return map[string]any{"ApproximateNumberOfMessagesMoved": moved}, nil
}
