//go:build narad_netfault

package netfault

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// FileEnv names the environment variable that holds the rules file's path.
const FileEnv = "NARAD_NETFAULT_FILE"

// pollEvery is how often the rules file is checked for a change.
const pollEvery = 100 * time.Millisecond

// minRTO is Linux's floor on TCP's retransmission timeout.
const minRTO = 200 * time.Millisecond

// Rule is the fault on connections to one address. The zero Rule is a
// healthy link.
type Rule struct {
	DelayMinMS int     `json:"delay_min_ms"`
	DelayMaxMS int     `json:"delay_max_ms"`
	Loss       float64 `json:"loss"` // 0..1, per write or read chunk
	Cut        bool    `json:"cut"`
}

// File is the rules file: a Rule per dialled address ("host:port", as the
// peer list spells it).
type File struct {
	Rules map[string]Rule `json:"rules"`
}

// hold is how long one write or read chunk is held under r: a one-way
// delay, plus a retransmission timeout per loss (doubling, as TCP backs
// off; at most six, which TCP would by then have long given up on).
func (r Rule) hold() time.Duration {
	lo, hi := r.DelayMinMS, max(r.DelayMaxMS, r.DelayMinMS)
	d := time.Duration(lo+rand.IntN(hi-lo+1)) * time.Millisecond
	rto := max(minRTO, 2*time.Duration(hi)*time.Millisecond)
	for i := 0; i < 6 && r.Loss > 0 && rand.Float64() < r.Loss; i++ {
		d += rto
		rto *= 2
	}
	return d
}

// The rules in force, and a channel closed at their next change (so a
// connection held by a cut wakes when it ends).
var (
	current atomic.Pointer[map[string]Rule]
	changed atomic.Pointer[chan struct{}]
	setMu   sync.Mutex
)

func init() {
	ch := make(chan struct{})
	changed.Store(&ch)
	current.Store(&map[string]Rule{})
}

// rule is the rule for addr now, and the channel closed when rules next
// change (taken first, so a change between the two is never missed).
func rule(addr string) (Rule, <-chan struct{}) {
	ch := *changed.Load()
	return (*current.Load())[addr], ch
}

// set replaces the rules in force.
func set(rules map[string]Rule) {
	setMu.Lock()
	defer setMu.Unlock()
	if rules == nil {
		rules = map[string]Rule{}
	}
	current.Store(&rules)
	next := make(chan struct{})
	close(*changed.Swap(&next))
}

// parse reads a rules file's content and checks each rule.
func parse(b []byte) (map[string]Rule, error) {
	var f File
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, err
	}
	for addr, r := range f.Rules {
		if r.DelayMinMS < 0 || r.DelayMaxMS < 0 || r.Loss < 0 || r.Loss >= 1 {
			return nil, fmt.Errorf("rule for %s: delays must be >= 0 and loss in [0, 1): %+v", addr, r)
		}
	}
	return f.Rules, nil
}

var watchOnce sync.Once

// watching reports whether a rules file is configured, and starts
// polling it the first time.
func watching() bool {
	path := os.Getenv(FileEnv)
	if path == "" {
		return false
	}
	watchOnce.Do(func() {
		load := func(last string) string {
			b, err := os.ReadFile(path)
			if err != nil && !os.IsNotExist(err) {
				fmt.Fprintf(os.Stderr, "netfault: %v\n", err)
				return last
			}
			if string(b) == last {
				return last
			}
			rules, err := parse(b)
			if err != nil && len(b) > 0 {
				fmt.Fprintf(os.Stderr, "netfault: %s: %v (keeping the rules before)\n", path, err)
				return last
			}
			set(rules)
			return string(b)
		}
		last := load("\x00")
		go func() {
			for range time.Tick(pollEvery) {
				last = load(last)
			}
		}()
	})
	return true
}
