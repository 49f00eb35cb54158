package httpapi

import (
	"encoding/base64"
	"encoding/binary"
	"errors"

	"github.com/narad-io/narad/internal/apierr"
)

// sinceToken is a replay by time's page_token (replaysince.go): where each
// partition's next page starts, for one incarnation of the topic. On the
// wire it is opaque to clients: base64url (no padding) of
//
//	version   byte     1
//	flags     byte     bit 0: every partition (else the one pinned)
//	incarn    uvarint  meta.Topic.Incarnation the token was issued for
//	since     uvarint  the time asked for, Unix ms (partitions added
//	                   later start there)
//	count     uvarint  then count pairs:
//	partition uvarint  0, 1, … count-1 with bit 0; the pinned one without
//	offset    uvarint  the partition's next offset
//
// and nothing after. It is not signed: a client that forges one reads
// what it could read by offset with the same grant.
type sinceToken struct {
	all         bool
	incarnation uint64
	sinceMs     uint64
	parts       []tokenPart
}

type tokenPart struct {
	partition int
	next      uint64
}

const (
	sinceTokenVersion = 1
	tokenAll          = 1 << 0
	// maxTokenParts bounds what a token may name (far past any topic's
	// partitions), so a decoder cannot be made to allocate much.
	maxTokenParts = 4096
)

func (t sinceToken) encode() string {
	b := make([]byte, 0, 16+len(t.parts)*6)
	flags := byte(0)
	if t.all {
		flags |= tokenAll
	}
	b = append(b, sinceTokenVersion, flags)
	b = binary.AppendUvarint(b, t.incarnation)
	b = binary.AppendUvarint(b, t.sinceMs)
	b = binary.AppendUvarint(b, uint64(len(t.parts)))
	for _, p := range t.parts {
		b = binary.AppendUvarint(b, uint64(p.partition))
		b = binary.AppendUvarint(b, p.next)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// errBadToken is every way a page token can fail to decode.
var errBadToken = errors.New("bad page token")

// decodeSinceToken reads a page_token; any flaw is a 400 naming it.
func decodeSinceToken(s string) (sinceToken, error) {
	t, err := parseSinceToken(s)
	if err != nil {
		return sinceToken{}, apierr.BadRequest("page_token is malformed: pass back the next_page_token of an earlier answer as it was, or start again with since")
	}
	return t, nil
}

func parseSinceToken(s string) (sinceToken, error) {
	if len(s) > base64.RawURLEncoding.EncodedLen(3+4*binary.MaxVarintLen64+maxTokenParts*2*binary.MaxVarintLen64) {
		return sinceToken{}, errBadToken
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil || len(b) < 2 || b[0] != sinceTokenVersion || b[1]&^tokenAll != 0 {
		return sinceToken{}, errBadToken
	}
	t := sinceToken{all: b[1]&tokenAll != 0}
	r := tokenReader{b: b[2:]}
	t.incarnation = r.uvarint()
	t.sinceMs = r.uvarint()
	n := r.uvarint()
	if r.bad || n == 0 || n > maxTokenParts || (!t.all && n != 1) || t.sinceMs > 1<<62 {
		return sinceToken{}, errBadToken
	}
	t.parts = make([]tokenPart, 0, n)
	for i := uint64(0); i < n; i++ {
		p, next := r.uvarint(), r.uvarint()
		// Every partition from 0 when all, in order; one otherwise.
		if r.bad || p >= maxTokenParts || (t.all && p != i) {
			return sinceToken{}, errBadToken
		}
		t.parts = append(t.parts, tokenPart{partition: int(p), next: next})
	}
	if len(r.b) != 0 {
		return sinceToken{}, errBadToken
	}
	return t, nil
}

// tokenReader reads uvarints, remembering the first failure.
type tokenReader struct {
	b   []byte
	bad bool
}

func (r *tokenReader) uvarint() uint64 {
	if r.bad {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[n:]
	return v
}
