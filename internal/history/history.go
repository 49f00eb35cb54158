package history

import (
	"context"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/clock"
	"github.com/narad-io/narad/internal/topic"
)

// Window is how far back a ring reaches, and Every how often the node
// samples: Window/Every samples per topic.
const (
	Window = 15 * time.Minute
	Every  = 10 * time.Second
)

// capacity is the samples a ring holds.
const capacity = int(Window / Every)

// Point is one sample of a topic, summed over the partitions that were
// measured (Partial: some were not, their owner did not answer).
type Point struct {
	At            time.Time
	HighWatermark uint64
	Frontier      uint64
	Backlog       uint64
	Partial       bool
}

// Reading is a topic's point as the source measured it, with the
// topic's incarnation (the Raft index of its create): a new one starts
// a new ring.
type Reading struct {
	Topic string
	Gen   uint64
	// Born is when the incarnation was created (zero: not known). Its
	// figures were all zero then, which is what lets the first sample of
	// a topic created while this node samples have rates (Record).
	Born  time.Time
	Point Point
}

type ring struct {
	gen    uint64
	points []Point // oldest first, at most capacity
}

// Book holds the rings of every topic sampled on this node.
type Book struct {
	mu    sync.Mutex
	rings map[string]*ring
	since time.Time // when Run started sampling; zero before
}

// NewBook returns an empty book.
func NewBook() *Book { return &Book{rings: map[string]*ring{}} }

// Record adds a reading, dropping the oldest sample of a full ring and
// the whole ring of another incarnation.
//
// A ring starts at the reading's point, which has no sample before it and
// so no rate: whatever a topic took between its creation and that first
// sample (up to Every, and a new topic's first burst is the usual case)
// would never show in any rate. So the ring of a topic born since this
// node started sampling starts one point earlier, at its birth, with the
// figures it had then: zeros. A topic born before (one that existed when
// the node started) gets no such point: what it took before the node was
// watching is not this node's to spread over an interval it did not see.
func (b *Book) Record(r Reading) {
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.rings[r.Topic]
	if g == nil || g.gen != r.Gen {
		g = &ring{gen: r.Gen, points: make([]Point, 0, capacity)}
		if b.bornWhileSampling(r) {
			g.points = append(g.points, Point{At: r.Born})
		}
		b.rings[r.Topic] = g
	}
	if len(g.points) == capacity {
		copy(g.points, g.points[1:])
		g.points = g.points[:capacity-1]
	}
	g.points = append(g.points, r.Point)
}

// bornWhileSampling says the reading's topic was created since Run
// started, before the reading. Born comes in whole seconds (the topic
// record's created_at), so it is compared with the start in seconds: a
// birth in the second sampling started counts.
func (b *Book) bornWhileSampling(r Reading) bool {
	return !b.since.IsZero() && !r.Born.IsZero() && r.Born.Unix() >= b.since.Unix() && r.Born.Before(r.Point.At)
}

// Points returns a copy of the topic's samples of incarnation gen, oldest
// first, within Window of now.
func (b *Book) Points(topic string, gen uint64, now time.Time) []Point {
	b.mu.Lock()
	defer b.mu.Unlock()
	g := b.rings[topic]
	if g == nil || g.gen != gen {
		return nil
	}
	out := make([]Point, 0, len(g.points)+1)
	for _, p := range g.points {
		if now.Sub(p.At) <= Window {
			out = append(out, p)
		}
	}
	return out
}

// Keep drops the rings of every topic live does not know.
func (b *Book) Keep(live func(topic string) bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for t := range b.rings {
		if !live(t) {
			delete(b.rings, t)
		}
	}
}

// Topics is how many topics have a ring (for tests and a gauge).
func (b *Book) Topics() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.rings)
}

// Run samples every Every until ctx ends: source gives every topic's
// reading, live says which topics still exist.
func (b *Book) Run(ctx context.Context, clk clock.Clock, source func(context.Context) []Reading, live func(string) bool) {
	b.mu.Lock()
	if b.since.IsZero() {
		b.since = clk.Now()
	}
	b.mu.Unlock()
	t := clk.NewTicker(Every)
	defer t.Stop()
	for {
		for _, r := range source(ctx) {
			b.Record(r)
		}
		b.Keep(live)
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
}

// ReadingOf is a topic's reading as describe shows it at at: its point,
// its incarnation, and its birth (the topic record's created_at, whole
// seconds; 0 when not recorded: unknown).
func ReadingOf(v topic.View, at time.Time) Reading {
	r := Reading{Topic: v.Name, Gen: v.Incarnation, Point: PointOf(v, at)}
	if v.CreatedAt > 0 {
		r.Born = time.Unix(v.CreatedAt, 0)
	}
	return r
}

// PointOf is a topic's point as describe shows it at at: the sums over
// its measured partitions, Partial when one was not measured.
func PointOf(v topic.View, at time.Time) Point {
	p := Point{At: at}
	for _, ps := range v.PartitionStats {
		if ps.HighWatermark == nil || ps.ConsumerFrontier == nil {
			p.Partial = true
			continue
		}
		hwm, front := *ps.HighWatermark, *ps.ConsumerFrontier
		p.HighWatermark += hwm
		p.Frontier += front
		if hwm > front {
			p.Backlog += hwm - front
		}
	}
	return p
}
