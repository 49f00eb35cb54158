package main

import (
	"bytes"
	"encoding/json"

	"github.com/narad-io/narad/internal/jsonenc"
)

// The SQS answers the bench reads most, ReceiveMessage's and the batch
// actions' (SendMessageBatch, DeleteMessageBatch), read in one pass.
// encoding/json's Unmarshal
// (a validity scan, then the decode) was half of the bench's CPU in an
// SQS consume of tens, where the /v1 client reads its consume answer
// with a reader of its own (package client, fastmsg.go): without this,
// the two protocols' figures measured the two clients' decoders as much
// as the node. Each reader takes only the shape the node writes — no
// whitespace, fields whose values are ASCII strings without escapes —
// and declines anything else (ok false), which the caller then decodes
// with encoding/json. What a reader accepts is valid JSON and reads as
// encoding/json would read it (FuzzSQSAnswersMatchEncodingJSON).

// sqsMessage is what the bench uses of a received message.
type sqsMessage struct {
	MessageId     string
	ReceiptHandle string
	Body          json.RawMessage // the JSON string itself: decoded only if read (--e2e)
}

// sqsReceived is a ReceiveMessage answer.
type sqsReceived struct{ Messages []sqsMessage }

// sqsBatchResult is a SendMessageBatch or DeleteMessageBatch answer.
type sqsBatchResult struct {
	Successful []struct{ Id string }
	Failed     []sqsEntryFailure
}

// readReceived reads a ReceiveMessage answer: {} or {"Messages":[...]}
// of flat objects. Body is a slice of data, not a copy.
func readReceived(data []byte, out *sqsReceived) (ok bool) {
	if string(data) == "{}" {
		out.Messages = nil
		return true
	}
	var msgs []sqsMessage
	ok = readList(data, `{"Messages":[`, func(b []byte) int {
		var m sqsMessage
		n := readFlatObject(b, func(name, value []byte) bool {
			switch string(name) {
			case "MessageId":
				m.MessageId = string(value[1 : len(value)-1])
			case "ReceiptHandle":
				m.ReceiptHandle = string(value[1 : len(value)-1])
			case "Body":
				m.Body = value
			default:
				return !foldsTo(name, "MessageId", "ReceiptHandle", "Body")
			}
			return true
		})
		if n > 0 {
			msgs = append(msgs, m)
		}
		return n
	})
	if ok {
		out.Messages = msgs
	}
	return ok
}

// readBatchResult reads a batch action's answer in which no entry
// failed: {"Failed":[],"Successful":[{"Id":...},...]} (a sent entry has
// its MD5OfMessageBody and MessageId too, which the bench does not use).
// One with a failure is read by encoding/json: it is rare, and its
// entries carry more than strings.
func readBatchResult(data []byte, out *sqsBatchResult) (ok bool) {
	var ids []struct{ Id string }
	ok = readList(data, `{"Failed":[],"Successful":[`, func(b []byte) int {
		var id string
		n := readFlatObject(b, func(name, value []byte) bool {
			if string(name) == "Id" {
				id = string(value[1 : len(value)-1])
				return true
			}
			return !foldsTo(name, "Id")
		})
		if n > 0 {
			ids = append(ids, struct{ Id string }{id})
		}
		return n
	})
	if ok {
		out.Successful, out.Failed = ids, nil
	}
	return ok
}

// readList reports whether data is exactly prefix (which opens a list:
// `{"Name":[`), items each read by item (which says how many bytes it
// took, 0 for one it declines), and "]}".
func readList(data []byte, prefix string, item func([]byte) int) bool {
	if !bytes.HasPrefix(data, []byte(prefix)) {
		return false
	}
	i := len(prefix)
	if i < len(data) && data[i] == ']' {
		return string(data[i:]) == "]}"
	}
	for {
		n := item(data[i:])
		if n == 0 {
			return false
		}
		i += n
		if i < len(data) && data[i] == ',' {
			i++
			continue
		}
		return string(data[i:]) == "]}"
	}
}

// readFlatObject reads the object at b's start whose values are all
// plain strings, handing each name and value (quotes included) to
// field, and says how many bytes it took: 0 when b does not start with
// such an object or field declined one of its fields.
func readFlatObject(b []byte, field func(name, value []byte) bool) int {
	if len(b) < 2 || b[0] != '{' {
		return 0
	}
	if b[1] == '}' {
		return 2
	}
	i := 1
	for {
		n := plainString(b[i:])
		if n == 0 {
			return 0
		}
		name := b[i+1 : i+n-1]
		i += n
		if i >= len(b) || b[i] != ':' {
			return 0
		}
		i++
		n = plainString(b[i:])
		if n == 0 {
			return 0
		}
		if !field(name, b[i:i+n]) {
			return 0
		}
		i += n
		if i < len(b) && b[i] == ',' {
			i++
			continue
		}
		if i < len(b) && b[i] == '}' {
			return i + 1
		}
		return 0
	}
}

// foldsTo reports whether name equals one of fields but in case:
// encoding/json would fill that field from it, the shortcut declines.
func foldsTo(name []byte, fields ...string) bool {
	for _, f := range fields {
		if bytes.EqualFold(name, []byte(f)) {
			return true
		}
	}
	return false
}

// plainString is the length, quotes included, of the JSON string at b's
// start when it holds only printable ASCII without escapes (what a
// string holds as it is written), else 0.
func plainString(b []byte) int {
	if len(b) < 2 || b[0] != '"' {
		return 0
	}
	i := jsonenc.SkipPlain(b, 1)
	if i >= len(b) || b[i] != '"' {
		return 0
	}
	return i + 1
}
