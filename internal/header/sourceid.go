package header

import (
	"slices"
	"strings"
)

// SourceID is the reserved header of a fan-out copy: the message id of
// the record it was copied from (docs/concepts.md, "Message ids"). Fan-out
// sets it on every copy, replacing one the source had (a copy of a copy
// names its own source, the parent's record); the copy has an id of its
// own besides.
const SourceID = ReservedPrefix + "source-id"

// WithSourceID returns hs with SourceID set to id, sorted as hs was, in a
// new slice: hs itself is left as it is (it may belong to a partition
// log's decoded frames, which readers share).
func WithSourceID(hs []Header, id string) []Header {
	i, found := slices.BinarySearchFunc(hs, SourceID, func(h Header, name string) int { return strings.Compare(h.Name, name) })
	out := make([]Header, 0, len(hs)+1)
	out = append(out, hs[:i]...)
	out = append(out, Header{Name: SourceID, Value: id})
	if found {
		i++
	}
	return append(out, hs[i:]...)
}
