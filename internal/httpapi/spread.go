package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/lease"
)

// consumeAnywhere serves a consume without partition in a cluster: it
// asks the topic's owners in turn, each without a wait — this node by a
// local consume, the others by a forwarded one — and only then spends
// the client's wait, parked (see park) until something may have arrived
// anywhere, then another round. Owners that cannot be reached are
// skipped: unpinned consumes route around a dead node (docs/concepts.md,
// "Consuming as a queue"). One that did not answer lately (suspects) is
// tried after all the others, and one that fails during this request is
// not tried again in its later rounds, so a frozen owner costs at most
// one forward timeout per request.
//
// A batch answer (max=N) is the first owner's with records, as a single
// one is: going on to the others for what the answer could still hold
// was measured slower, each round paying a forward to every owner in a
// row (docs/replication-levers.md).
//
// Which owner a round asks first takes turns (roundOrder). Asking this
// node first every time, as the cheapest, starved the others: under a
// steady load this node's partitions are rarely empty, and records on
// another owner waited until they were (with three copies at 1,000
// records a second, p99 from produce to consume was over 100 ms; 15 ms
// with turns, docs/replication-performance.md, "The tail from produce
// to consume").
func (s *Server) consumeAnywhere(w http.ResponseWriter, r *http.Request, user string, req broker.ConsumeRequest, batch bool) error {
	owners := s.partitionOwners(req.Topic)
	self := s.cluster.Self()
	remote := others(owners, self)
	deadline := time.Now().Add(s.b.ConsumeWait(req.Wait))
	q := r.URL.Query()
	q.Del("wait")
	failed := map[string]bool{}
	for {
		for _, node := range s.roundOrder(owners, self, failed) {
			if node == self {
				now := req
				now.Wait = 0
				msgs, err := s.b.Consume(r.Context(), now)
				if err != nil {
					return err
				}
				if len(msgs) > 0 {
					return writeMessages(w, r, msgs, batch)
				}
				continue
			}
			res, err := s.toNode(r.Context(), node, ForwardRequest{Method: http.MethodGet,
				Path: r.URL.Path, RawQuery: q.Encode(), User: user, Timeout: s.dataPlaneTimeout(0)})
			if err != nil {
				failed[node] = true
				continue
			}
			if res.Status == http.StatusOK {
				writeForwarded(w, res)
				return nil
			}
		}
		left := time.Until(deadline)
		if left <= 0 || r.Context().Err() != nil {
			w.WriteHeader(http.StatusNoContent)
			return nil
		}
		var alive []string
		for _, node := range remote {
			if !failed[node] {
				alive = append(alive, node)
			}
		}
		if msgs, err := s.park(r.Context(), req, alive, min(left, parkBackstop)); err != nil || len(msgs) > 0 {
			if err != nil {
				return err
			}
			return writeMessages(w, r, msgs, batch)
		}
	}
}

// roundOrder is the order one round asks the owners in, this node among
// them: first the owner of the partition whose turn it is, then the
// others in sorted order around from it; owners that failed during this
// request are left out and suspects moved last. The turn is one counter
// for the node, so each owner is asked first as often as it owns
// partitions, and no owner's records wait behind another's.
func (s *Server) roundOrder(owners []string, self string, failed map[string]bool) []string {
	if len(owners) == 0 {
		return []string{self}
	}
	ring := distinct(owners)
	lead := owners[s.turn.Add(1)%uint64(len(owners))]
	at := slices.Index(ring, lead)
	order := make([]string, 0, len(ring))
	for i := range ring {
		if node := ring[(at+i)%len(ring)]; !failed[node] {
			order = append(order, node)
		}
	}
	return s.suspects.last(order)
}

// distinct lists the nodes of owners once each, sorted.
func distinct(owners []string) []string {
	out := slices.Clone(owners)
	slices.Sort(out)
	return slices.Compact(out)
}

// parkBackstop bounds one park: a commit that lands on a remote owner
// between its empty answer and the Wait call reaching it wakes nobody, so
// a round runs at least this often. (Older nodes without Wait answer
// Unimplemented; the backstop is then the only wake-up.)
const parkBackstop = 500 * time.Millisecond

// park spends up to d of a consume's wait: a local long-poll, which
// leases and returns records itself if a local partition gets some, raced
// against Wait calls on the remote owners. Wait leases nothing, so the
// first remote wake-up simply cancels the rest and the local poll (which
// then returns whatever it already leased, never dropping it) and the
// caller runs another round. No lease can be stranded by the race.
func (s *Server) park(ctx context.Context, req broker.ConsumeRequest, remote []string, d time.Duration) ([]broker.Message, error) {
	pctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	s.m.ConsumeParked.Inc()
	defer s.m.ConsumeParked.Dec()
	var woken atomic.Bool
	for _, node := range remote {
		go func() {
			if ok, err := s.cluster.Wait(pctx, node, req.Topic, d); err == nil && ok && woken.CompareAndSwap(false, true) {
				s.m.ConsumeRemoteWakes.Inc()
				cancel()
			}
		}()
	}
	local := req
	local.Wait = d
	return s.b.Consume(pctx, local)
}

// remoteOwners lists the other nodes owning partitions of topic, sorted.
func (s *Server) remoteOwners(topic string) []string {
	return others(s.partitionOwners(topic), s.cluster.Self())
}

// others lists the nodes of owners but self, once each, sorted.
func others(owners []string, self string) []string {
	return slices.DeleteFunc(distinct(owners), func(n string) bool { return n == self })
}

// partitionOwners lists the owner of each partition of topic, in
// partition order (this node among them).
func (s *Server) partitionOwners(topic string) []string {
	var out []string
	for p := 0; p < 108; p++ {
		o := s.cluster.Owner(topic, p)
		if o == "" {
			if p > 0 {
				break
			}
			continue
		}
		out = append(out, o)
	}
	return out
}

// AckResult is one entry of a batch ack answer: the status and error
// sentence the single form would have answered for that handle.
type AckResult struct {
	ReceiptHandle string `json:"receipt_handle"`
	Status        int    `json:"status"`
	Error         string `json:"error,omitempty"`
}

// ackResult words one handle's outcome as writeError would: an internal
// failure is a 500 with a generic sentence (its detail goes to the log).
func (s *Server) ackResult(handle string, err error) AckResult {
	if err == nil {
		return AckResult{ReceiptHandle: handle, Status: http.StatusNoContent}
	}
	ae, ok := apierr.From(err)
	if !ok {
		s.log.Error("internal error in a batch ack", "handle", handle, "err", err)
		ae = apierr.New(http.StatusInternalServerError, "internal error")
	}
	return AckResult{ReceiptHandle: handle, Status: ae.Status, Error: scrubPaths(ae.Message, s.diskRoots)}
}

// localAcks settles handles on this node.
func (s *Server) localAcks(r *http.Request, topic string, handles []string) ([]AckResult, error) {
	errs, err := s.b.AckBatch(r.Context(), topic, handles)
	if err != nil {
		return nil, err
	}
	out := make([]AckResult, len(handles))
	for i, h := range handles {
		out[i] = s.ackResult(h, errs[i])
	}
	return out, nil
}

// ackEverywhere settles handles on their partitions' owners: local ones
// here, the others as one forwarded batch per owner; each result keeps its
// place and is what the single form would have answered.
func (s *Server) ackEverywhere(r *http.Request, topic, user string, handles []string) ([]AckResult, error) {
	if s.cluster == nil {
		return s.localAcks(r, topic, handles)
	}
	if _, fwd := forwardedUser(r); fwd {
		return s.localAcks(r, topic, handles)
	}
	if len(handles) == 0 || len(handles) > broker.MaxAckBatch {
		return s.localAcks(r, topic, handles) // the broker words the refusal
	}
	groups := map[string][]int{}
	for i, h := range handles {
		node := ""
		if p, _, _, err := lease.ParseHandle(h); err == nil {
			if o := s.cluster.Owner(topic, p); o != s.cluster.Self() {
				node = o
			}
		}
		groups[node] = append(groups[node], i)
	}
	if _, local := groups[""]; local && len(groups) == 1 {
		// Every handle is served here (a single node's every batch): the
		// same answers as below without copying the handles into a group
		// and waiting on a goroutine for it.
		res, err := s.localAcks(r, topic, handles)
		if err != nil {
			res = make([]AckResult, len(handles))
			for i, h := range handles {
				res[i] = s.ackResult(h, err)
			}
		}
		return res, nil
	}
	// The owners are asked at once: one that does not answer costs the
	// batch one forward timeout, not one per owner. Each group fills its
	// own places of out.
	out := make([]AckResult, len(handles))
	var wg sync.WaitGroup
	for node, idx := range groups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sub := make([]string, len(idx))
			for k, i := range idx {
				sub[k] = handles[i]
			}
			var res []AckResult
			var err error
			if node == "" {
				res, err = s.localAcks(r, topic, sub)
			} else {
				res, err = s.forwardAcks(r, node, user, sub)
			}
			for k, i := range idx {
				if err != nil {
					out[i] = s.ackResult(sub[k], err)
				} else {
					out[i] = res[k]
				}
			}
		}()
	}
	wg.Wait()
	return out, nil
}

func (s *Server) forwardAcks(r *http.Request, node, user string, handles []string) ([]AckResult, error) {
	body, _ := json.Marshal(map[string][]string{"receipt_handles": handles})
	res, err := s.toNode(r.Context(), node, ForwardRequest{Method: http.MethodPost, Path: r.URL.Path,
		RawQuery: url.Values{}.Encode(), Body: body, ContentType: "application/json", User: user, Timeout: s.dataPlaneTimeout(0)})
	if err != nil {
		return nil, err
	}
	if res.Status != http.StatusOK {
		return nil, apierr.New(res.Status, "owner %s answered %d: %s", node, res.Status, res.Body)
	}
	var parsed struct {
		Results []AckResult `json:"results"`
	}
	if err := json.Unmarshal(res.Body, &parsed); err != nil || len(parsed.Results) != len(handles) {
		return nil, apierr.New(http.StatusBadGateway, "owner %s answered an unreadable batch ack", node)
	}
	return parsed.Results, nil
}
