package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

var (
	faultBinOnce sync.Once
	faultBin     string
	faultBinErr  error
)

// netfaultBinary builds narad with the narad_netfault tag: a binary whose
// dialled peer connections follow the rules in the file its
// NARAD_NETFAULT_FILE names (internal/netfault).
func netfaultBinary(t *testing.T) string {
	t.Helper()
	faultBinOnce.Do(func() {
		faultBin = filepath.Join(filepath.Dir(naradBin), "narad-netfault")
		build := exec.Command("go", "build", "-tags", "narad_netfault", "-o", faultBin, "github.com/narad-io/narad/cmd/narad")
		out, err := build.CombinedOutput()
		if err != nil {
			faultBinErr = fmt.Errorf("building the netfault binary: %v\n%s", err, out)
		}
	})
	if faultBinErr != nil {
		t.Fatal(faultBinErr)
	}
	return faultBin
}

// linkRule is one rule of internal/netfault's file (its Rule, which only
// the tagged build compiles).
type linkRule struct {
	DelayMinMS int     `json:"delay_min_ms,omitempty"`
	DelayMaxMS int     `json:"delay_max_ms,omitempty"`
	Loss       float64 `json:"loss,omitempty"`
	Cut        bool    `json:"cut,omitempty"`
}

// faultCluster is a cluster of the netfault binary and each node's rules
// file.
type faultCluster struct {
	t     *testing.T
	nodes []*node
	files []string
}

// startFaultCluster starts size nodes of the netfault binary with
// cluster.network set to network, every link healthy.
func startFaultCluster(t *testing.T, size int, network string) *faultCluster {
	t.Helper()
	bin := netfaultBinary(t)
	fc := &faultCluster{t: t}
	dir := t.TempDir()
	for i := range size {
		fc.files = append(fc.files, filepath.Join(dir, fmt.Sprintf("rules-n%d.json", i+1)))
	}
	fc.nodes = startClusterWith(t, size, func(i int, n *node) {
		n.bin = bin
		n.env = append(n.env, "NARAD_NETFAULT_FILE="+fc.files[i], "NARAD_CLUSTER_NETWORK="+network)
	})
	return fc
}

// set writes every node's rules: rule(i, j) is the link from node i to
// node j, applied to both of j's cluster ports (Raft, and node RPC on the
// next port). Each file is replaced whole, so a node never reads half.
func (fc *faultCluster) set(rule func(from, to int) linkRule) {
	fc.t.Helper()
	for i := range fc.nodes {
		rules := map[string]linkRule{}
		for j, to := range fc.nodes {
			if i == j {
				continue
			}
			r := rule(i, j)
			host, port, _ := strings.Cut(to.cluster, ":")
			p, _ := strconv.Atoi(port)
			rules[to.cluster] = r
			rules[fmt.Sprintf("%s:%d", host, p+1)] = r
		}
		b, _ := json.Marshal(map[string]any{"rules": rules})
		tmp := fc.files[i] + ".tmp"
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			fc.t.Fatal(err)
		}
		if err := os.Rename(tmp, fc.files[i]); err != nil {
			fc.t.Fatal(err)
		}
	}
}

// everyLink is rule on every link.
func everyLink(r linkRule) func(int, int) linkRule { return func(int, int) linkRule { return r } }

// outcome is one produce: when it was sent, through which node, and
// whether it was answered 202 (status 0: no answer within the producer's
// timeout); a refused one keeps its error and how long it took, for the
// report of a window that fell short.
type outcome struct {
	sent   time.Time
	ok     bool
	status int
	node   string
	err    string
	took   time.Duration
}

// steadyProducer sends one record every interval to its topic, each in a
// goroutine of its own so that a slow answer never thins the sending, to
// the nodes targets holds in turn. It keeps every outcome, and the
// payload of every record answered 202.
type steadyProducer struct {
	t       *testing.T
	topic   string
	targets atomic.Pointer[[]*node]
	stop    chan struct{}
	wg      sync.WaitGroup

	mu       sync.Mutex
	outcomes []outcome
	accepted map[int]bool   // ids (payload id-N) answered 202
	reasons  map[string]int // refusals' messages, for the log
	pending  map[int]time.Time
}

func startProducer(t *testing.T, topic string, every time.Duration, targets []*node) *steadyProducer {
	p := &steadyProducer{t: t, topic: topic, stop: make(chan struct{}), accepted: map[int]bool{}, reasons: map[string]int{},
		pending: map[int]time.Time{}}
	p.targets.Store(&targets)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
			ts := *p.targets.Load()
			p.wg.Add(1)
			go p.send(ts[i%len(ts)], i)
		}
	}()
	t.Cleanup(p.finish)
	return p
}

// produceTimeout bounds one produce: an answer later than this counts as
// refused, as a client with this timeout would see it.
const produceTimeout = 10 * time.Second

func (p *steadyProducer) send(n *node, id int) {
	defer p.wg.Done()
	ctx, cancel := context.WithTimeout(context.Background(), produceTimeout)
	defer cancel()
	sent := time.Now()
	p.mu.Lock()
	p.pending[id] = sent
	p.mu.Unlock()
	_, err := n.c.ProduceWithID(ctx, p.topic, fmt.Appendf(nil, "id-%d", id), client.ProduceOptions{})
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.pending, id)
	o := outcome{sent: sent, ok: err == nil, status: http.StatusAccepted, node: n.id, took: time.Since(sent)}
	if err != nil {
		o.status, o.err = client.StatusOf(err), err.Error()
		p.reasons[o.err]++
	} else {
		p.accepted[id] = true
	}
	p.outcomes = append(p.outcomes, o)
}

// finish stops sending and waits for every answer.
func (p *steadyProducer) finish() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	p.wg.Wait()
}

// settle waits until every produce sent before to has its answer (or
// has timed out), so that a tally of a window ending at to, taken while
// the producer still runs, counts every produce of the window.
func (p *steadyProducer) settle(to time.Time) {
	p.t.Helper()
	eventually(p.t, produceTimeout+5*time.Second, p.topic+"'s produces sent before "+to.Format(time.StampMilli)+" answered", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, sent := range p.pending {
			if sent.Before(to) {
				return false
			}
		}
		return true
	})
}

// tally counts the produces sent in [from, to): answered 202, and the
// others by status.
func (p *steadyProducer) tally(from, to time.Time) (ok, total int, refused map[int]int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	refused = map[int]int{}
	for _, o := range p.outcomes {
		if o.sent.Before(from) || !o.sent.Before(to) {
			continue
		}
		total++
		if o.ok {
			ok++
		} else {
			refused[o.status]++
		}
	}
	return ok, total, refused
}

// requireAnswered fails the test unless at least 95% of the produces sent
// in [from, to) were answered 202, and at least least were sent (a
// producer that stalled proves nothing). when says which window it is.
func (p *steadyProducer) requireAnswered(from, to time.Time, least int, when string) {
	p.t.Helper()
	ok, total, refused := p.tally(from, to)
	p.t.Logf("%s: %d of %d produces answered 202 %s; the others by status (0: no answer in %v): %v",
		p.topic, ok, total, when, produceTimeout, refused)
	p.mu.Lock()
	if len(p.reasons) > 0 {
		p.t.Logf("%s: refusals (whole run): %v", p.topic, p.reasons)
	}
	p.mu.Unlock()
	if total < least {
		p.t.Errorf("%s: only %d produces sent %s; the producer stalled", p.topic, total, when)
	}
	if ok*100 < total*95 {
		p.t.Errorf("%s: %d of %d produces answered 202 (%.1f%%) %s; want at least 95%%",
			p.topic, ok, total, 100*float64(ok)/float64(total), when)
		p.logRefused(from, to)
	}
}

// logRefused logs each produce sent in [from, to) that was not answered
// 202: when it was sent (from from), through which node, after how long
// it failed, and why. Which node and when tell a stalled path (one node's
// produces timing out together) from a failover's refusals.
func (p *steadyProducer) logRefused(from, to time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, o := range p.outcomes {
		if o.ok || o.sent.Before(from) || !o.sent.Before(to) {
			continue
		}
		p.t.Logf("%s: sent at +%v through %s, failed after %v: status %d: %s", p.topic,
			o.sent.Sub(from).Round(time.Millisecond), o.node, o.took.Round(time.Millisecond), o.status, o.err)
	}
}

// checkConsumable replays every partition of p's topic through n (the
// durability tests' ledger: replayLedger, checkLedger) and fails the test
// for any record answered 202 that is not there.
func (p *steadyProducer) checkConsumable(n *node) {
	p.t.Helper()
	p.mu.Lock()
	accepted := maps.Clone(p.accepted)
	p.mu.Unlock()
	var got map[int]int
	eventually(p.t, 30*time.Second, "every record of "+p.topic+" answered 202 to be consumable", func() bool {
		g, err := replayLedger(p.t, n, p.topic)
		if err != nil {
			return false
		}
		got = g
		for id := range accepted {
			if got[id] == 0 {
				return false
			}
		}
		return true
	})
	checkLedger(p.t, p.topic, accepted, got)
}

// raftTerms is each node's narad_raft_term (-1: no answer).
func raftTerms(nodes []*node) []float64 {
	out := make([]float64, len(nodes))
	for i, n := range nodes {
		out[i] = n.metric("narad_raft_term")
	}
	return out
}
