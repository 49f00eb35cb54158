package lease

import (
	"container/heap"
	"time"
)

// entry is one live lease. The same pointer is the value in Table.leases
// and an element of the expiry heap, and it records its heap position, so
// Extend re-sifts it in place and Ack/Nack/Release remove it at once.
//
// The spec allows lazy deletion (leave the old heap entry, ignore it when
// popped if nonce or expiry no longer match). An indexed heap is used
// instead because it is the same O(log n) and has no stale entries at all:
// the heap never holds more than the in-flight count (a consumer extending
// in a tight loop cannot grow it), and NextExpiry is exact without popping
// garbage first.
type entry struct {
	offset uint64
	nonce  uint64
	expiry time.Time
	index  int // position in expiryHeap; -1 once removed
}

// expiryHeap is a min-heap on (expiry, offset). The offset tie-break makes
// expiry order deterministic for leases granted at the same instant.
type expiryHeap []*entry

func (h expiryHeap) Len() int { return len(h) }

func (h expiryHeap) Less(i, j int) bool {
	if !h[i].expiry.Equal(h[j].expiry) {
		return h[i].expiry.Before(h[j].expiry)
	}
	return h[i].offset < h[j].offset
}

func (h expiryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h *expiryHeap) Push(x any) {
	e := x.(*entry)
	e.index = len(*h)
	*h = append(*h, e)
}

func (h *expiryHeap) Pop() any {
	old := *h
	n := len(old) - 1
	e := old[n]
	old[n] = nil // let the entry be collected
	e.index = -1
	*h = old[:n]
	return e
}

func (h *expiryHeap) add(e *entry) { heap.Push(h, e) }

func (h *expiryHeap) remove(e *entry) {
	if e.index >= 0 {
		heap.Remove(h, e.index)
	}
}

func (h *expiryHeap) fix(e *entry) { heap.Fix(h, e.index) }

// peek returns the earliest-expiring lease, or nil.
func (h expiryHeap) peek() *entry {
	if len(h) == 0 {
		return nil
	}
	return h[0]
}
