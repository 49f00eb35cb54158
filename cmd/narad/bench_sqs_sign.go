package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strings"
	"sync"
	"sync/atomic"
)

// The bench signs its SQS requests with AWS Signature Version 4 itself:
// the requests are all alike (POST, no query string, the same four
// headers), so a few lines do what an SDK's signer does, without its
// cost on the machine that is measuring.

// sigHeader is a signed header: its name in lower case, and its value.
type sigHeader struct{ name, value string }

// sigv4 signs requests with one key pair, for one region and service.
type sigv4 struct {
	keyID, secret   string
	region, service string
	// key is the signing key of the last date signed: it changes once a
	// day, and deriving it takes four HMACs.
	key atomic.Pointer[datedKey]
}

type datedKey struct {
	date string // YYYYMMDD
	key  []byte
	// macs are HMAC-SHA256 hashes keyed with key, reset between uses:
	// hmac.New derives the key's inner and outer pads each time, a third
	// of signing a small request.
	macs sync.Pool
}

// authorization is the Authorization header of a request to path with no
// query string, sent at amzDate (YYYYMMDDTHHMMSSZ, the X-Amz-Date
// header's value), whose headers are headers (sorted by name; they must
// include host and x-amz-date) and whose body is body.
func (s *sigv4) authorization(method, path string, headers []sigHeader, body []byte, amzDate string) string {
	var buf [512]byte
	canon := append(buf[:0], method...)
	canon = append(canon, '\n')
	canon = append(canon, path...)
	canon = append(canon, "\n\n"...) // the empty query string
	for _, h := range headers {
		canon = append(canon, h.name...)
		canon = append(canon, ':')
		canon = append(canon, strings.TrimSpace(h.value)...)
		canon = append(canon, '\n')
	}
	canon = append(canon, '\n')
	signed := signedHeaders(headers)
	canon = append(canon, signed...)
	canon = append(canon, '\n')
	sum := sha256.Sum256(body)
	canon = hex.AppendEncode(canon, sum[:])

	date := amzDate[:8]
	scope := date + "/" + s.region + "/" + s.service + "/aws4_request"
	canonSum := sha256.Sum256(canon)
	k := s.signingKey(date)
	m, _ := k.macs.Get().(hash.Hash)
	if m == nil {
		m = hmac.New(sha256.New, k.key)
	}
	// The string to sign, written into the HMAC as it is made.
	toSign := append(buf[:0], "AWS4-HMAC-SHA256\n"...)
	toSign = append(toSign, amzDate...)
	toSign = append(toSign, '\n')
	toSign = append(toSign, scope...)
	toSign = append(toSign, '\n')
	toSign = hex.AppendEncode(toSign, canonSum[:])
	m.Write(toSign)
	var sig [sha256.Size]byte
	m.Sum(sig[:0])
	m.Reset()
	k.macs.Put(m)
	return "AWS4-HMAC-SHA256 Credential=" + s.keyID + "/" + scope +
		", SignedHeaders=" + signed + ", Signature=" + hex.EncodeToString(sig[:])
}

// signingKey is the key of date, derived from the secret once a day.
func (s *sigv4) signingKey(date string) *datedKey {
	if k := s.key.Load(); k != nil && k.date == date {
		return k
	}
	k := hmacSHA256([]byte("AWS4"+s.secret), date)
	k = hmacSHA256(k, s.region)
	k = hmacSHA256(k, s.service)
	k = hmacSHA256(k, "aws4_request")
	d := &datedKey{date: date, key: k}
	s.key.Store(d)
	return d
}

func signedHeaders(headers []sigHeader) string {
	names := make([]string, len(headers))
	for i, h := range headers {
		names[i] = h.name
	}
	return strings.Join(names, ";")
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}
