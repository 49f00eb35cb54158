package lease

import "time"

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
//
// It is sifted by hand rather than through container/heap: the interface
// calls (Less, Swap, Push, Pop) were half of removing a lease, the one
// heap operation every ack pays (BenchmarkReserveAck: 100 acks per op).
type expiryHeap []*entry

func (h expiryHeap) less(i, j int) bool {
	// One Compare, not Equal then Before: each looks at both times'
	// monotonic readings again, and this is every sift step.
	if c := h[i].expiry.Compare(h[j].expiry); c != 0 {
		return c < 0
	}
	return h[i].offset < h[j].offset
}

func (h expiryHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}

func (h expiryHeap) up(j int) {
	for j > 0 {
		i := (j - 1) / 2 // parent
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		j = i
	}
}

// down sifts i towards the leaves and reports whether it moved.
func (h expiryHeap) down(i int) bool {
	i0, n := i, len(h)
	for {
		j := 2*i + 1
		if j >= n || j < 0 {
			break
		}
		if r := j + 1; r < n && h.less(r, j) {
			j = r
		}
		if !h.less(j, i) {
			break
		}
		h.swap(i, j)
		i = j
	}
	return i > i0
}

func (h *expiryHeap) add(e *entry) {
	e.index = len(*h)
	*h = append(*h, e)
	h.up(e.index)
}

func (h *expiryHeap) remove(e *entry) {
	i := e.index
	if i < 0 {
		return
	}
	old := *h
	n := len(old) - 1
	if i != n {
		old.swap(i, n)
	}
	old[n] = nil // let the entry be collected
	e.index = -1
	*h = old[:n]
	if i != n {
		h.fix(i)
	}
}

// fix restores the order after the entry at i changed its expiry.
func (h expiryHeap) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

// peek returns the earliest-expiring lease, or nil.
func (h expiryHeap) peek() *entry {
	if len(h) == 0 {
		return nil
	}
	return h[0]
}
