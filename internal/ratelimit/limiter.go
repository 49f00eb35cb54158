package ratelimit

import (
	"sync"
	"time"

	"github.com/narad-io/narad/internal/clock"
)

// The limits, as indexes of Rates.
const (
	ProduceRecords = iota
	ProduceBytes
	ConsumeRequests
	numLimits
)

// Rates are a user's limits per second, by index (0: unlimited); a
// request's cost is a Rates too (tokens of each limit it takes).
type Rates [numLimits]int64

// Decision is Take's answer. When Allowed is false, Limit is the index
// of the limit that refused (the one with the longest wait) and
// RetryAfter when the same request would pass.
type Decision struct {
	Allowed    bool
	Limit      int
	RetryAfter time.Duration
}

var allowed = Decision{Allowed: true}

// MaxUsers bounds the table. Buckets that are full again are forgotten
// first (nothing lost); past that — more users than this active within
// the same second or so — arbitrary ones go, which lets them burst once.
const MaxUsers = 1 << 16

// sweepEvery is how often Take forgets the buckets that are full again.
const sweepEvery = 10 * time.Second

// entry is one user's buckets. id is the user's incarnation: a user
// deleted and created again under the same name starts afresh.
type entry struct {
	mu      sync.Mutex
	id      uint64
	buckets [numLimits]bucket
}

// Limiter holds the buckets of this node's users.
type Limiter struct {
	clk clock.Clock

	mu        sync.RWMutex
	users     map[string]*entry
	nextSweep int64
	max       int
}

// New makes a limiter on clk (nil: the system clock).
func New(clk clock.Clock) *Limiter {
	return &Limiter{clk: clock.Or(clk), users: map[string]*entry{}, max: MaxUsers}
}

// Take spends cost from each of user's buckets whose rate is limited,
// all or none: a refusal takes nothing. id is the user's incarnation.
// The caller skips Take for a user with no limit at all (Rates{}), which
// then costs nothing.
func (l *Limiter) Take(user string, id uint64, rates, cost Rates) Decision {
	return l.decide(user, id, rates, cost, true)
}

// Would is Take without taking: whether cost would pass now. A handler
// asks it with a minimal cost before reading a body, so that a user in
// deficit is refused without its body being read or decoded.
func (l *Limiter) Would(user string, id uint64, rates, cost Rates) Decision {
	return l.decide(user, id, rates, cost, false)
}

func (l *Limiter) decide(user string, id uint64, rates, cost Rates, spend bool) Decision {
	now := l.clk.Now().UnixNano()
	e := l.entry(user, id, now)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.id != id {
		e.id, e.buckets = id, [numLimits]bucket{}
	}
	var costs [numLimits]int64
	d := allowed
	var longest int64
	for k, rate := range rates {
		if rate <= 0 || cost[k] <= 0 {
			continue
		}
		costs[k] = costNanos(cost[k], rate)
		if ok, wait := e.buckets[k].check(now, costs[k]); !ok && wait > longest {
			longest, d = wait, Decision{Limit: k}
		}
	}
	if !d.Allowed {
		d.RetryAfter = retrySeconds(longest)
		return d
	}
	if spend {
		for k, c := range costs {
			if c > 0 {
				e.buckets[k].take(now, c)
			}
		}
	}
	return d
}

// entry finds or makes user's entry, sweeping when it is time.
func (l *Limiter) entry(user string, id uint64, now int64) *entry {
	l.mu.RLock()
	e, ok := l.users[user]
	sweep := now >= l.nextSweep
	l.mu.RUnlock()
	if ok && !sweep {
		return e
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if now >= l.nextSweep {
		l.forgetFull(now)
		l.nextSweep = now + int64(sweepEvery)
	}
	if e, ok := l.users[user]; ok {
		return e
	}
	if len(l.users) >= l.max {
		l.forgetFull(now)
		for name := range l.users { // random order: arbitrary ones
			if len(l.users) < l.max*7/8 {
				break
			}
			delete(l.users, name)
		}
	}
	e = &entry{id: id}
	l.users[user] = e
	return e
}

// forgetFull drops the entries whose buckets are all full again: a new
// entry would be the same. Called with l.mu held.
func (l *Limiter) forgetFull(now int64) {
	for name, e := range l.users {
		e.mu.Lock()
		full := true
		for _, b := range e.buckets {
			full = full && b.fullAt(now)
		}
		e.mu.Unlock()
		if full {
			delete(l.users, name)
		}
	}
}

// Retain drops the buckets of every user keep says is gone (deleted, or
// another incarnation of the name).
func (l *Limiter) Retain(keep func(user string, id uint64) bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for name, e := range l.users {
		e.mu.Lock()
		id := e.id
		e.mu.Unlock()
		if !keep(name, id) {
			delete(l.users, name)
		}
	}
}

// Len is how many users have buckets here.
func (l *Limiter) Len() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.users)
}
