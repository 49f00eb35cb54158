package lease

import "container/heap"

// freeList holds offsets below the scan cursor that became free again
// (nack, release, expiry), lowest first.
//
// Why it exists: Reserve scans upward from a cursor, and every offset
// between the frontier and the cursor is known to be leased or settled
// unless it is in this list. Without it, freeing one offset would force
// the next Reserve to rescan every live lease above it; with it, Reserve
// pops the freed offsets in O(log n) each and resumes the scan at the
// cursor, which only ever moves over offsets never handed out before.
//
// Entries are never duplicated (an offset enters only when it stops being
// leased, and leaves before it can be leased again), but may go stale when
// the offset is settled by MarkSkipped or AdvanceTo; Reserve drops stale
// entries when it meets them.
type freeList []uint64

func (f freeList) Len() int           { return len(f) }
func (f freeList) Less(i, j int) bool { return f[i] < f[j] }
func (f freeList) Swap(i, j int)      { f[i], f[j] = f[j], f[i] }
func (f *freeList) Push(x any)        { *f = append(*f, x.(uint64)) }
func (f *freeList) Pop() any {
	old := *f
	n := len(old) - 1
	x := old[n]
	*f = old[:n]
	return x
}

func (f *freeList) push(x uint64) { heap.Push(f, x) }

func (f *freeList) pop() uint64 { return heap.Pop(f).(uint64) }

// min returns the lowest offset in the list; ok is false if it is empty.
func (f freeList) min() (x uint64, ok bool) {
	if len(f) == 0 {
		return 0, false
	}
	return f[0], true
}

// dropBelow discards entries below the frontier, which are settled.
func (f *freeList) dropBelow(frontier uint64) {
	for len(*f) > 0 && (*f)[0] < frontier {
		f.pop()
	}
}
