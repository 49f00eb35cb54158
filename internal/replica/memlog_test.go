package replica

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/narad-io/narad/internal/storage"
)

// memLog is a held log in memory, faithful to the Log contract: every
// Append is durable on return; a commit (the leader's own write) is
// durable on return too, unless the log is lazy: then it is written,
// readable by ReadTo, and durable only once flushed (the fsync of its
// group commit), and a crash takes back what was not; the visible
// high watermark never passes the durable end nor moves down while open,
// TruncateTo refuses below it and changes nothing, and a reopen after a
// crash starts the watermark at the replica.state checkpoint (what
// storage's recovery of held logs does).
type memLog struct {
	mu     sync.Mutex
	recs   []storage.Record
	synced uint64 // End: recs below it are durable
	lazy   bool   // commits wait for flush to be durable
	hwm    uint64
	state  storage.ReplicaState
	notify chan struct{}
	clock  int64
	fails  error // when set, Append, commit and SaveReplicaState fail with it
	cuts   int   // truncations that removed records
	// dying: the process dies in the middle of a step. Only the next
	// `writes` durable writes (Append, commit, SaveReplicaState) land;
	// every one after fails and changes nothing, until crash.
	dying  bool
	writes int
}

var errDying = fmt.Errorf("memlog: the process died mid-step")

// dieAfter lets n more durable writes land and fails the rest until the
// crash that follows.
func (m *memLog) dieAfter(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dying, m.writes = true, n
}

// writeLocked is the gate of every durable write: the injected failure,
// or a write past the dying process's last one.
func (m *memLog) writeLocked() error {
	if m.fails != nil {
		return m.fails
	}
	if m.dying {
		if m.writes == 0 {
			return errDying
		}
		m.writes--
	}
	return nil
}

var _ Log = (*memLog)(nil)

func newMemLog() *memLog { return &memLog{notify: make(chan struct{})} }

func (m *memLog) End() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.synced
}

func (m *memLog) Written() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return uint64(len(m.recs))
}

// flush makes every written record durable: a commit's fsync ending.
func (m *memLog) flush() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.synced = uint64(len(m.recs)) // wakes nothing (Log.EndNotify)
}

// unsynced reports whether records are written and not yet durable.
func (m *memLog) unsynced() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return uint64(len(m.recs)) > m.synced
}

func (m *memLog) HWM() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hwm
}

func (m *memLog) Release(upTo uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if hw := min(upTo, m.synced); hw > m.hwm {
		m.hwm = hw
	}
	return nil
}

func (m *memLog) Append(recs []storage.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, r := range recs {
		if r.Offset != uint64(len(m.recs)+i) {
			return fmt.Errorf("memlog: append of offset %d at end %d", r.Offset, len(m.recs)+i)
		}
	}
	if err := m.writeLocked(); err != nil {
		return err
	}
	for _, r := range recs {
		r.Payload = slices.Clone(r.Payload)
		m.recs = append(m.recs, r)
	}
	m.synced = uint64(len(m.recs))
	if len(recs) > 0 {
		m.movedLocked()
	}
	return nil
}

// commit is the leader's own write (storage's held commit): readable by
// a fetch, not visible; durable, or on a lazy log only once flushed.
func (m *memLog) commit(payload []byte) (uint64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.writeLocked(); err != nil {
		return 0, err
	}
	m.clock++
	off := uint64(len(m.recs))
	m.recs = append(m.recs, storage.Record{Offset: off, Payload: slices.Clone(payload), CommittedAt: m.clock})
	if !m.lazy {
		m.synced = uint64(len(m.recs))
	}
	m.movedLocked()
	return off, nil
}

func (m *memLog) TruncateTo(off uint64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if off < m.hwm {
		return fmt.Errorf("memlog: truncate to %d below the visible high watermark %d", off, m.hwm)
	}
	if off < uint64(len(m.recs)) {
		if err := m.writeLocked(); err != nil {
			return err
		}
		m.recs = m.recs[:off]
		m.synced = min(m.synced, off)
		m.cuts++
		m.movedLocked()
	}
	return nil
}

func (m *memLog) ReadTo(from uint64, maxRecords, maxBytes int) ([]storage.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if from > uint64(len(m.recs)) {
		return nil, fmt.Errorf("memlog: read from %d past the end %d", from, len(m.recs))
	}
	var out []storage.Record
	size := 0
	for _, r := range m.recs[from:] {
		if len(out) == maxRecords || (len(out) > 0 && size+len(r.Payload) > maxBytes) {
			break
		}
		size += len(r.Payload)
		r.Payload = slices.Clone(r.Payload)
		out = append(out, r)
	}
	return out, nil
}

// ReadFrames serves "frames" (the records as JSON) for fetches from an
// even offset and leaves the odd ones to ReadTo, as a storage log leaves
// a fetch from inside a frame: followers take both kinds of answer.
func (m *memLog) ReadFrames(from uint64, maxBytes int) ([]byte, error) {
	if from%2 == 1 {
		return nil, nil
	}
	recs, err := m.ReadTo(from, 1<<20, maxBytes)
	if err != nil || len(recs) == 0 {
		return nil, err
	}
	return json.Marshal(recs)
}

// fetched is what a fetch answer from memLogs carries: its records, or
// those its frames hold.
func fetched(resp FetchResponse) []storage.Record {
	if len(resp.Frames) == 0 {
		return resp.Records
	}
	var recs []storage.Record
	if err := json.Unmarshal(resp.Frames, &recs); err != nil {
		panic(err) // memLog.ReadFrames marshalled them
	}
	return recs
}

// AppendFrames is Append of what ReadFrames served.
func (m *memLog) AppendFrames(frames []byte) (int, error) {
	var recs []storage.Record
	if err := json.Unmarshal(frames, &recs); err != nil {
		return 0, fmt.Errorf("memlog: frames: %w", err)
	}
	if err := m.Append(recs); err != nil {
		return 0, err
	}
	return len(recs), nil
}

func (m *memLog) EndNotify() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.notify
}

func (m *memLog) movedLocked() {
	close(m.notify)
	m.notify = make(chan struct{})
}

func (m *memLog) ReplicaState() storage.ReplicaState {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state
}

func (m *memLog) SaveReplicaState(s storage.ReplicaState) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.writeLocked(); err != nil {
		return err
	}
	m.state = s
	return nil
}

// crash is the machine failing and the log reopening: the durable
// records and state stay, what was only written is gone, the watermark
// restarts at the checkpoint.
func (m *memLog) crash() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs = m.recs[:m.synced]
	m.hwm = min(m.state.Committed, m.synced)
	m.dying = false
}

// wipe is a replaced disk: nothing left.
func (m *memLog) wipe() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs, m.synced, m.hwm, m.state = nil, 0, 0, storage.ReplicaState{}
	m.movedLocked()
}

// at returns the payload at off, if the log holds it durably.
func (m *memLog) at(off uint64) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if off >= m.synced {
		return nil, false
	}
	return m.recs[off].Payload, true
}

// agreesBelow reports the first offset below n where m and o differ (or
// either lacks a record), and whether there is one.
func (m *memLog) diffBelow(o *memLog, n uint64) (uint64, bool) {
	for off := range n {
		a, okA := m.at(off)
		b, okB := o.at(off)
		if !okA || !okB || !bytes.Equal(a, b) {
			return off, true
		}
	}
	return 0, false
}
