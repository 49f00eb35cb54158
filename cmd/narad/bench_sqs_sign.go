package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
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
}

// authorization is the Authorization header of a request to path with no
// query string, sent at amzDate (YYYYMMDDTHHMMSSZ, the X-Amz-Date
// header's value), whose headers are headers (sorted by name; they must
// include host and x-amz-date) and whose body is body.
func (s *sigv4) authorization(method, path string, headers []sigHeader, body []byte, amzDate string) string {
	var canon strings.Builder
	canon.Grow(256)
	canon.WriteString(method)
	canon.WriteString("\n")
	canon.WriteString(path)
	canon.WriteString("\n\n") // the empty query string
	for _, h := range headers {
		canon.WriteString(h.name)
		canon.WriteByte(':')
		canon.WriteString(strings.TrimSpace(h.value))
		canon.WriteByte('\n')
	}
	canon.WriteByte('\n')
	signed := signedHeaders(headers)
	canon.WriteString(signed)
	canon.WriteByte('\n')
	sum := sha256.Sum256(body)
	canon.WriteString(hex.EncodeToString(sum[:]))

	date := amzDate[:8]
	scope := date + "/" + s.region + "/" + s.service + "/aws4_request"
	canonSum := sha256.Sum256([]byte(canon.String()))
	toSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hex.EncodeToString(canonSum[:])
	sig := hmacSHA256(s.signingKey(date), toSign)
	return "AWS4-HMAC-SHA256 Credential=" + s.keyID + "/" + scope +
		", SignedHeaders=" + signed + ", Signature=" + hex.EncodeToString(sig)
}

// signingKey is the key of date, derived from the secret once a day.
func (s *sigv4) signingKey(date string) []byte {
	if k := s.key.Load(); k != nil && k.date == date {
		return k.key
	}
	k := hmacSHA256([]byte("AWS4"+s.secret), date)
	k = hmacSHA256(k, s.region)
	k = hmacSHA256(k, s.service)
	k = hmacSHA256(k, "aws4_request")
	s.key.Store(&datedKey{date: date, key: k})
	return k
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
