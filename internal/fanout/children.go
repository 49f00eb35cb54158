package fanout

import (
	"path/filepath"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/meta"
)

// ChildView is one entry of GET /v1/topics/{parent}/children.
type ChildView struct {
	Name            string   `json:"name"`
	DelayMs         int64    `json:"delay_ms"`
	AttachEpoch     string   `json:"attach_epoch"`
	LagMessages     uint64   `json:"lag_messages"`
	DueLagSeconds   *float64 `json:"due_lag_seconds,omitempty"`
	LagComplete     bool     `json:"lag_complete"`
	DroppedMessages uint64   `json:"dropped_messages"`
}

// ChildrenView is the children listing.
type ChildrenView struct {
	Parent   string      `json:"parent"`
	Children []ChildView `json:"children"`
}

// Children lists a parent's children with their lag. It never opens a
// partition log (F24): open logs are read through Peek, closed ones from
// their directory; a closed partition whose hwm file has no boundary is
// left out and its child's lag_complete reads false.
func (e *Engine) Children(parentName string) (ChildrenView, error) {
	if err := broker.ValidateTopicName(parentName); err != nil {
		return ChildrenView{}, err
	}
	parent, ok := e.meta.Topic(parentName)
	if !ok {
		return ChildrenView{}, apierr.NotFound("topic %q does not exist", parentName)
	}
	out := ChildrenView{Parent: parentName, Children: []ChildView{}}
	for _, name := range parent.Children {
		child, ok := e.meta.Topic(name)
		if !ok || child.Parent != parentName {
			continue
		}
		out.Children = append(out.Children, e.childView(parent, child))
	}
	return out, nil
}

func (e *Engine) childView(parent, child meta.Topic) ChildView {
	v := ChildView{Name: child.Name, DelayMs: child.FanoutDelayMs, AttachEpoch: child.AttachEpoch, LagComplete: true,
		DroppedMessages: e.droppedCounter(parent.Name, child.Name).Load()}
	var dueLag float64
	for p := 0; p < parent.Partitions; p++ {
		pos, ok := e.position(parent.Name, child, p)
		owner, _ := e.meta.Owner(parent.Name, p)
		if owner != e.self || !ok {
			v.LagComplete = false
			continue
		}
		st, err := e.reg.Describe(parent.Name, p)
		if err != nil || !st.Exact {
			v.LagComplete = false
			continue
		}
		v.LagMessages += st.HighWatermark - min(st.HighWatermark, pos)
		e.mu.Lock()
		if c, running := e.running[cursorKey{parent.Name, child.Name, p}]; running {
			dueLag = max(dueLag, float64(c.dueLagMs.Load())/1000)
		}
		e.mu.Unlock()
	}
	if child.FanoutDelayMs > 0 {
		v.DueLagSeconds = &dueLag
	}
	return v
}

// position is where the link's cursor on partition p stands: the running
// cursor's memory, else its file (this epoch only), else the attach point
// it would start from.
func (e *Engine) position(parent string, child meta.Topic, p int) (uint64, bool) {
	e.mu.Lock()
	c, running := e.running[cursorKey{parent, child.Name, p}]
	e.mu.Unlock()
	if running && c.started.Load() && c.link.epoch == child.AttachEpoch {
		return c.pos.Load(), true
	}
	dir, err := e.reg.Dir(parent, p)
	if err != nil {
		return 0, false
	}
	if st, exists, err := ReadCursorFile(filepath.Join(dir, CursorFileName(child.Name))); err == nil && exists && st.Epoch == child.AttachEpoch {
		return st.NextOffset, true
	}
	switch offs := child.AttachOffsets; {
	case p < len(offs):
		return offs[p], true
	case len(offs) > 0:
		return 0, true
	}
	return 0, false
}
