package header

import (
	"fmt"
	"slices"
	"strings"
)

// MsgID is the reserved header that carries a record's producer id
// (docs/concepts.md, "Producer ids and deduplication"). The broker sets it
// from the request's Narad-Msg-Id header or a batch record's "msg_id"; a
// client cannot send it as a header (narad- is reserved), so every record
// that has it was given it by produce, which checked it (CheckMsgID).
const MsgID = ReservedPrefix + "msg-id"

// MaxMsgID bounds a producer id, in bytes.
const MaxMsgID = 128

// CheckMsgID validates a producer id: 1..128 printable ASCII characters
// (space to tilde). Its error wraps ErrInvalid.
func CheckMsgID(id string) error {
	if len(id) == 0 {
		return fmt.Errorf("%w: msg_id is empty (1..%d printable ASCII characters)", ErrInvalid, MaxMsgID)
	}
	if len(id) > MaxMsgID {
		return fmt.Errorf("%w: msg_id of %d bytes, at most %d", ErrInvalid, len(id), MaxMsgID)
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x20 || c > 0x7e {
			return fmt.Errorf("%w: msg_id has byte 0x%02x at %d: only printable ASCII (0x20..0x7e)", ErrInvalid, c, i)
		}
	}
	return nil
}

// WithMsgID returns hs (sorted, as Check leaves it) with the MsgID header
// set to id, still sorted; it replaces one hs already has. hs's array is
// reused only when it has room.
func WithMsgID(hs []Header, id string) []Header {
	i, found := slices.BinarySearchFunc(hs, MsgID, func(h Header, name string) int { return strings.Compare(h.Name, name) })
	if found {
		hs[i].Value = id
		return hs
	}
	return slices.Insert(hs, i, Header{Name: MsgID, Value: id})
}

// MsgIDOf returns the producer id a record carries, if any.
func MsgIDOf(hs []Header) (string, bool) { return Get(hs, MsgID) }
