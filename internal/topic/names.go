package topic

import (
	"hash/fnv"

	"github.com/narad-io/narad/internal/refusal"
)

// MaxNameLen is the longest topic name (docs/http-api.md).
const MaxNameLen = 249

// ValidateName enforces 1..249 characters of [A-Za-z0-9._-], not "." or
// "..". These rules are also what make a name a safe single path element
// under the data directory: no separator can appear and the two dot names
// that walk the tree are refused.
func ValidateName(name string) error {
	if name == "" || len(name) > MaxNameLen {
		return refusal.New(refusal.ErrInvalid, 0, "topic name must be 1..%d characters, got %d", MaxNameLen, len(name))
	}
	if name == "." || name == ".." {
		return refusal.New(refusal.ErrInvalid, 0, "topic name %q is reserved", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return refusal.New(refusal.ErrInvalid, 0, "topic name %q has a character outside [A-Za-z0-9._-] at position %d", name, i)
		}
	}
	return nil
}

// KeyPartition is the partition of a keyed record: FNV-1a 32-bit of the key
// bytes modulo the partition count. Produce and fan-out share it.
func KeyPartition(key []byte, partitions int) int {
	h := fnv.New32a()
	h.Write(key)
	return int(h.Sum32() % uint32(partitions))
}
