package header

import (
	"fmt"
	"slices"
	"strconv"
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
func WithMsgID(hs []Header, id string) []Header { return with(hs, MsgID, id) }

// with sets header name to value in the sorted hs, keeping it sorted.
func with(hs []Header, name, value string) []Header {
	i, found := slices.BinarySearchFunc(hs, name, func(h Header, name string) int { return strings.Compare(h.Name, name) })
	if found {
		hs[i].Value = value
		return hs
	}
	return slices.Insert(hs, i, Header{Name: name, Value: value})
}

// MsgIDOf returns the producer id a record carries, if any.
func MsgIDOf(hs []Header) (string, bool) { return Get(hs, MsgID) }

// DeliverAt is the reserved header that carries a scheduled record's due
// time, in Unix milliseconds (docs/concepts.md, "Scheduled delivery"). The
// broker sets it from Narad-Delay / Narad-Deliver-At, a batch record's
// "delay" / "deliver_at", or the topic's delivery_delay; a client cannot
// send it as a header. Being part of the record, the due time travels
// with it: replay, moves, replicas and fan-out copies all see it.
const DeliverAt = ReservedPrefix + "deliver-at"

// DeliverAtOf returns a record's due time (Unix ms), if it has one.
func DeliverAtOf(hs []Header) (int64, bool) {
	if len(hs) == 0 {
		return 0, false
	}
	v, ok := Get(hs, DeliverAt)
	if !ok {
		return 0, false
	}
	ms, err := strconv.ParseInt(v, 10, 64)
	return ms, err == nil
}

// WithDeliverAt returns hs with the DeliverAt header set to ms, sorted.
func WithDeliverAt(hs []Header, ms int64) []Header {
	return with(hs, DeliverAt, strconv.FormatInt(ms, 10))
}
