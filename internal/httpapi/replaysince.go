package httpapi

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/apierr"
	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/jsonenc"
	"github.com/narad-io/narad/internal/meta"
	"github.com/narad-io/narad/internal/refusal"
)

// defaultReplayMax is how many records a replay by time answers when max
// is not given.
const defaultReplayMax = 100

// replaySince answers GET /v1/topics/{topic}/replay: the records committed
// at or after since, of one partition or merged from every partition in
// commit-time order (ties: partition, then offset), a page at a time. Each
// partition's first offset is found by bisection (broker.ReplaySince), its
// records read by its owner (forwarded with the time made absolute, as
// offsets does) and merged here. Like replay by offset it takes no lease,
// changes no queue state and needs the consume grant.
//
// The merge is exact for what was committed when the page was read: it
// takes records smallest first and stops where a partition that may hold
// more ran out of records read, since that partition's next record could
// sort before any other's. A record committed after the read comes on a
// later page, ordered by its own commit time, which a clock behind another
// node's may put before records already answered.
func (s *Server) replaySince(w http.ResponseWriter, r *http.Request, user string) error {
	q := r.URL.Query()
	topic, err := s.messageTopicQuery(r, q, meta.ActionConsume, "since", "partition", "max", "page_token")
	if err != nil {
		return err
	}
	pinned, err := optInt(q, "partition")
	if err != nil {
		return err
	}
	n := defaultReplayMax
	if v, err := optRange(q, "max", 1, broker.MaxConsumeBatch); err != nil {
		return err
	} else if v != nil {
		n = *v
	}
	var since time.Time
	if q.Has("since") || !q.Has("page_token") {
		if since, err = parseTime(q, "since", time.Now()); err != nil {
			return err
		}
	}
	var tok *sinceToken
	if q.Has("page_token") {
		t, err := decodeSinceToken(q.Get("page_token"))
		if err != nil {
			return err
		}
		tok = &t
	}
	if err := s.takeConsume(r); err != nil {
		return err
	}
	t, ok := s.b.TopicRecord(topic)
	if !ok {
		return refusal.New(refusal.ErrTopicNotFound, 0, "topic %q does not exist", topic)
	}
	rs, err := newReplayState(t, pinned, since, tok)
	if err != nil {
		return err
	}
	pages := s.readPages(r, user, rs, n)
	for _, pg := range pages {
		if pg.err != nil {
			return pg.err // a merge without a partition would be silently wrong
		}
	}
	items, next, caughtUp := mergeByTime(pages, n, s.b.AnswerBytes())
	rs.tok.parts = next
	writeReplayPage(w, items, rs.tok.encode(), caughtUp)
	return nil
}

// replayState is what one page reads: the topic's incarnation, the time,
// and per partition where to start (nil: at the time).
type replayState struct {
	topic   string
	since   time.Time
	tok     sinceToken // the answer's token, parts filled in at the end
	cursors []cursor
}

type cursor struct {
	partition int
	from      *uint64
}

// newReplayState checks the request's partition and token against the
// topic as it is now.
func newReplayState(t meta.Topic, pinned *int, since time.Time, tok *sinceToken) (replayState, error) {
	rs := replayState{topic: t.Name, since: since, tok: sinceToken{all: pinned == nil, incarnation: t.Incarnation, sinceMs: uint64(since.UnixMilli())}}
	if tok == nil {
		if pinned != nil {
			if *pinned >= t.Partitions {
				return rs, refusal.New(refusal.ErrPartitionRange, 0, "partition %d is out of range: %q has %d partitions", *pinned, t.Name, t.Partitions)
			}
			rs.cursors = []cursor{{partition: *pinned}}
			return rs, nil
		}
		for p := range t.Partitions {
			rs.cursors = append(rs.cursors, cursor{partition: p})
		}
		return rs, nil
	}
	if tok.incarnation != t.Incarnation {
		return rs, apierr.BadRequest("page_token belongs to an earlier topic named %q (deleted and created again): start again with since", t.Name)
	}
	rs.since, rs.tok.all, rs.tok.sinceMs = time.UnixMilli(int64(tok.sinceMs)), tok.all, tok.sinceMs
	if !tok.all {
		p := tok.parts[0]
		if pinned != nil && *pinned != p.partition {
			return rs, apierr.BadRequest("page_token continues partition %d, not partition %d: pass the same partition, or start again with since", p.partition, *pinned)
		}
		if p.partition >= t.Partitions {
			return rs, apierr.BadRequest("page_token names partition %d, which %q does not have: start again with since", p.partition, t.Name)
		}
		rs.cursors = []cursor{{partition: p.partition, from: &p.next}}
		return rs, nil
	}
	if pinned != nil {
		return rs, apierr.BadRequest("page_token continues a replay of every partition: leave partition out, or start again with since")
	}
	if len(tok.parts) > t.Partitions {
		return rs, apierr.BadRequest("page_token names %d partitions, and %q has %d: start again with since", len(tok.parts), t.Name, t.Partitions)
	}
	for p := range t.Partitions {
		c := cursor{partition: p}
		if p < len(tok.parts) {
			c.from = &tok.parts[p].next
		} // else: added since the token was issued, read from the time
		rs.cursors = append(rs.cursors, c)
	}
	return rs, nil
}

// replayItem is one record of a page: a local one as the broker read it,
// a forwarded one as its owner wrote it (so a JSON payload keeps its very
// bytes); size is its key and payload bytes, for the answer's budget.
type replayItem struct {
	at        int64 // commit time, Unix ms
	partition int
	offset    uint64
	size      int
	msg       broker.Message
	raw       []byte
}

// partPage is one partition's page as read for a replay.
type partPage struct {
	partition int
	items     []replayItem
	next      uint64
	caughtUp  bool
	err       error
}

// readPages reads every cursor's page, each from its partition's owner, at
// once: one slow owner costs the page one forward, not one per partition.
func (s *Server) readPages(r *http.Request, user string, rs replayState, n int) []partPage {
	pages := make([]partPage, len(rs.cursors))
	if len(rs.cursors) == 1 {
		pages[0] = s.readPage(r, user, rs, rs.cursors[0], n)
		return pages
	}
	var wg sync.WaitGroup
	for i, c := range rs.cursors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pages[i] = s.readPage(r, user, rs, c, n)
		}()
	}
	wg.Wait()
	return pages
}

// readPage reads one partition's page here or on its owner.
func (s *Server) readPage(r *http.Request, user string, rs replayState, c cursor, n int) partPage {
	owner := ""
	if _, fwd := forwardedUser(r); !fwd && s.cluster != nil {
		if o := s.cluster.Owner(rs.topic, c.partition); o != s.cluster.Self() {
			owner = o
		}
	}
	if owner == "" {
		sp, err := s.b.ReplaySince(rs.topic, c.partition, rs.since, c.from, n)
		if err != nil {
			return partPage{partition: c.partition, err: err}
		}
		pg := partPage{partition: c.partition, next: sp.Next, caughtUp: sp.CaughtUp, items: make([]replayItem, len(sp.Messages))}
		for i, m := range sp.Messages {
			pg.items[i] = replayItem{at: m.CommittedAt, partition: m.Partition, offset: m.Offset, size: len(m.Key) + len(m.Payload), msg: m}
		}
		return pg
	}
	q := url.Values{"partition": {strconv.Itoa(c.partition)}, "max": {strconv.Itoa(n)}}
	if c.from == nil {
		q.Set("since", strconv.FormatInt(rs.since.UnixMilli(), 10))
	} else {
		one := sinceToken{incarnation: rs.tok.incarnation, sinceMs: rs.tok.sinceMs, parts: []tokenPart{{partition: c.partition, next: *c.from}}}
		q.Set("page_token", one.encode())
	}
	res, err := s.toNode(r.Context(), owner, ForwardRequest{Method: http.MethodGet, Path: r.URL.Path,
		RawQuery: q.Encode(), User: user, Timeout: s.dataPlaneTimeout(0)})
	if err != nil {
		return partPage{err: err}
	}
	if res.Status != http.StatusOK {
		return partPage{err: forwardedErr(res)}
	}
	pg, ok := readForwardedPage(res.Body, c)
	if !ok {
		return partPage{err: apierr.Unavailable(time.Second, "partition %d of %q: its owner %q gave an answer this node cannot read; retry", c.partition, rs.topic, owner)}
	}
	return pg
}

// readForwardedPage reads an owner's answer for one partition: its records
// in offset order, from the cursor on, and a token for that partition.
func readForwardedPage(body []byte, c cursor) (partPage, bool) {
	var ans struct {
		Messages      []json.RawMessage `json:"messages"`
		NextPageToken string            `json:"next_page_token"`
		CaughtUp      bool              `json:"caught_up"`
	}
	if json.Unmarshal(body, &ans) != nil {
		return partPage{}, false
	}
	tok, err := parseSinceToken(ans.NextPageToken)
	if err != nil || tok.all || tok.parts[0].partition != c.partition {
		return partPage{}, false
	}
	pg := partPage{partition: c.partition, next: tok.parts[0].next, caughtUp: ans.CaughtUp, items: make([]replayItem, 0, len(ans.Messages))}
	low := uint64(0)
	if c.from != nil {
		low = *c.from
	}
	for _, raw := range ans.Messages {
		var m struct {
			Partition       int             `json:"partition"`
			Offset          uint64          `json:"offset"`
			TimestampMs     int64           `json:"timestamp_ms"`
			Key             string          `json:"key"`
			KeyBase64       string          `json:"key_base64"`
			Payload         json.RawMessage `json:"payload"`
			PayloadEncoding string          `json:"payload_encoding"`
		}
		if json.Unmarshal(raw, &m) != nil || m.Partition != c.partition || m.Offset < low || m.Offset >= pg.next {
			return partPage{}, false
		}
		low = m.Offset + 1
		pg.items = append(pg.items, replayItem{at: m.TimestampMs, partition: m.Partition, offset: m.Offset,
			size: shownBytes(m.Key, m.KeyBase64, m.Payload, m.PayloadEncoding), raw: raw})
	}
	return pg, true
}

// shownBytes is a forwarded record's key and payload size as produced
// (near enough for a budget: a JSON-escaped text counts its escapes).
func shownBytes(key, keyBase64 string, payload json.RawMessage, enc string) int {
	size := len(key) + base64.StdEncoding.DecodedLen(len(keyBase64))
	switch enc {
	case encodingBase64:
		return size + base64.StdEncoding.DecodedLen(max(len(payload)-2, 0))
	case encodingText:
		return size + max(len(payload)-2, 0)
	}
	return size + len(payload)
}

// mergeByTime takes up to n records from the pages, smallest (commit time,
// partition, offset) first, within budget bytes of keys and payloads (the
// first record always). It stops where a partition that may hold more
// records than it read has none left read. next is every partition's next
// offset; caughtUp says every partition was read to its end and all of it
// answered.
func mergeByTime(pages []partPage, n, budget int) (out []replayItem, next []tokenPart, caughtUp bool) {
	idx := make([]int, len(pages))
	used := 0
	for len(out) < n {
		best := -1
		for i, pg := range pages {
			if idx[i] < len(pg.items) && (best < 0 || before(pg.items[idx[i]], pages[best].items[idx[best]])) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		it := pages[best].items[idx[best]]
		if len(out) > 0 && used+it.size > budget {
			break
		}
		out, used = append(out, it), used+it.size
		idx[best]++
		if idx[best] == len(pages[best].items) && !pages[best].caughtUp {
			break // its next record, not read yet, may sort before the others'
		}
	}
	caughtUp = true
	next = make([]tokenPart, len(pages))
	for i, pg := range pages {
		next[i] = tokenPart{partition: pg.partition, next: pg.next}
		if idx[i] < len(pg.items) {
			next[i].next = pg.items[idx[i]].offset
		}
		caughtUp = caughtUp && pg.caughtUp && idx[i] == len(pg.items)
	}
	return out, next, caughtUp
}

func before(a, b replayItem) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if a.partition != b.partition {
		return a.partition < b.partition
	}
	return a.offset < b.offset
}

// writeReplayPage answers {"messages": [...], "next_page_token": "...",
// "caught_up": bool}, each message as consume shows it (no receipt handle).
func writeReplayPage(w http.ResponseWriter, items []replayItem, token string, caughtUp bool) {
	size := 96 + len(token)
	for _, it := range items {
		size += 200 + len(it.raw) + len(it.msg.Key)*2 + len(it.msg.Payload)*4/3
	}
	p := answerBuf(size)
	b := append(*p, `{"messages":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		if it.raw != nil {
			b = append(b, it.raw...)
		} else {
			b = appendMessage(b, it.msg)
		}
	}
	b = append(b, `],"next_page_token":`...)
	b = jsonenc.AppendString(b, token)
	b = append(b, `,"caught_up":`...)
	b = strconv.AppendBool(b, caughtUp)
	b = append(b, "}\n"...)
	writeAnswer(w, p, b)
}
