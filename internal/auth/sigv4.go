package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/clock"
)

// AWS Signature Version 4 (docs/security.md, "Access keys and AWS
// signatures"): the SQS/SNS edge's requests are signed with a user's
// access key, in the Authorization header or as a presigned URL's query.
// The verifier rebuilds the canonical request the client signed and
// checks its HMAC; a verified request acts as the key's user, with the
// Principal Basic auth would give it.

// The SigV4 refusals' codes, as AWS answers them.
const (
	SigV4MissingToken       = "MissingAuthenticationToken"
	SigV4Incomplete         = "IncompleteSignature"
	SigV4InvalidClientToken = "InvalidClientTokenId"
	SigV4Mismatch           = "SignatureDoesNotMatch"
	SigV4Expired            = "RequestExpired"
)

// DefaultRegion is the region a node's credential scope names unless
// configured otherwise.
const DefaultRegion = "us-east-1"

const (
	sigV4Algorithm  = "AWS4-HMAC-SHA256"
	amzDateLayout   = "20060102T150405Z"
	sigV4Terminal   = "aws4_request"
	unsignedPayload = "UNSIGNED-PAYLOAD"
	// maxSkew is how far X-Amz-Date may be from this node's clock.
	maxSkew = 15 * time.Minute
	// maxPresignExpires is the longest X-Amz-Expires, a week as AWS.
	maxPresignExpires = 7 * 24 * 3600
	// maxSigningKeys bounds the derived signing keys cache; past it, it
	// is cleared (a re-derive costs four HMACs).
	maxSigningKeys = 4096
)

// SigV4Error is a refused signature, with the AWS error code the protocol
// edge answers and the HTTP status AWS uses with it:
// MissingAuthenticationToken 403 (no signature at all), IncompleteSignature
// 400 (a malformed Authorization header or presigned query),
// InvalidClientTokenId 403 (an unknown access key), SignatureDoesNotMatch
// 403 (a wrong signature, or a scope that is not this node's region or an
// accepted service), RequestExpired 400 (X-Amz-Date more than 15 minutes
// off this node's clock, or a presigned URL past X-Amz-Expires).
type SigV4Error struct {
	Code    string
	Message string
	Status  int
}

func (e *SigV4Error) Error() string { return e.Code + ": " + e.Message }

func sigV4Err(code, format string, args ...any) *SigV4Error {
	status := http.StatusForbidden
	if code == SigV4Incomplete || code == SigV4Expired {
		status = http.StatusBadRequest
	}
	return &SigV4Error{Code: code, Message: fmt.Sprintf(format, args...), Status: status}
}

// SigV4 verifies AWS Signature Version 4 requests against the access keys
// of the users in the metastore. A request costs one SHA-256 of the body,
// one of the canonical request and one HMAC: secrets are unsealed once
// (KeyRing), and the signing key derived from one is cached per key, day,
// region and service until its user's record changes.
type SigV4 struct {
	keys     KeySecrets
	region   string
	services []string // the services a scope may name
	clk      clock.Clock

	mu      sync.Mutex
	signing map[signingScope]*signingKey
}

type signingScope struct{ id, date, region, service string }

type signingKey struct {
	version uint64 // the user record's version the secret was read from
	key     []byte
	// macs are HMAC-SHA256 hashes keyed with key, reset between
	// requests: hmac.New derives the key's pads each time, which was more
	// than half of a small request's verification.
	macs sync.Pool
}

// mac is an HMAC-SHA256 keyed with k's key, to give back with done.
func (k *signingKey) mac() hash.Hash {
	if m, ok := k.macs.Get().(hash.Hash); ok {
		return m
	}
	return hmac.New(sha256.New, k.key)
}

func (k *signingKey) done(m hash.Hash) {
	m.Reset()
	k.macs.Put(m)
}

// NewSigV4 verifies against keys (a KeyRing); region is the region a
// credential scope must name ("": DefaultRegion), and its service must
// be "sqs" or "sns". clk is this node's clock (nil: the system's).
func NewSigV4(keys KeySecrets, region string, clk clock.Clock) *SigV4 {
	if region == "" {
		region = DefaultRegion
	}
	return &SigV4{keys: keys, region: region, services: []string{"sqs", "sns"}, clk: clock.Or(clk),
		signing: make(map[signingScope]*signingKey)}
}

// sigV4Request is a request's signature as parsed.
type sigV4Request struct {
	presigned                    bool
	keyID, date, region, service string // the credential scope
	amzDate                      string
	at                           time.Time
	expires                      time.Duration // presigned only
	signedHeaders                []string
	signedHeadersRaw             string
	signature                    []byte
	contentSHA256                string // x-amz-content-sha256 as sent, if at all
}

// Verify checks r's signature — the Authorization header form, or a
// presigned URL's query (X-Amz-Algorithm, X-Amz-Credential, X-Amz-Date,
// X-Amz-Expires, X-Amz-SignedHeaders, X-Amz-Signature) — over body, the
// request's whole body as the caller read it (r.Body is not read). It
// returns the key's user and the scope's service ("sqs" or "sns"). A
// refusal is a *SigV4Error; any other error is this node's failure to
// read or unseal the key (answer it as an internal error).
func (v *SigV4) Verify(r *http.Request, body []byte) (Principal, string, error) {
	req, err := parseSigV4(r)
	if err != nil {
		return Principal{}, "", err
	}
	if req == nil {
		return Principal{}, "", sigV4Err(SigV4MissingToken, "Request is missing Authentication Token")
	}
	ks, ok, err := v.keys.AccessKeySecret(req.keyID)
	if err != nil {
		return Principal{}, "", err
	}
	if !ok {
		return Principal{}, "", sigV4Err(SigV4InvalidClientToken, "The security token included in the request is invalid: no access key %q", req.keyID)
	}
	if err := checkTime(req, v.clk.Now()); err != nil {
		return Principal{}, "", err
	}
	switch {
	case req.date != req.amzDate[:8]:
		return Principal{}, "", sigV4Err(SigV4Mismatch, "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '%s' != '%s'", req.date, req.amzDate[:8])
	case req.region != v.region:
		return Principal{}, "", sigV4Err(SigV4Mismatch, "Credential should be scoped to a valid region, not '%s': this node's is '%s'", req.region, v.region)
	case !slices.Contains(v.services, req.service):
		return Principal{}, "", sigV4Err(SigV4Mismatch, "Credential should be scoped to correct service: '%s', not '%s'", strings.Join(v.services, "' or '"), req.service)
	}

	sum := sha256.Sum256(body)
	bodyHash := hex.EncodeToString(sum[:])
	hashes := []string{bodyHash}
	switch h := req.contentSHA256; {
	case h == unsignedPayload && req.presigned:
		hashes[0] = unsignedPayload
	case h != "" && h != bodyHash:
		return Principal{}, "", sigV4Err(SigV4Mismatch, "The provided 'x-amz-content-sha256' header does not match the SHA-256 of the body (an unsigned payload is accepted in presigned URLs only)")
	case h == "" && req.presigned:
		// Presigners sign either the body's hash or UNSIGNED-PAYLOAD
		// without saying which.
		hashes = append(hashes, unsignedPayload)
	}
	key := v.signingKey(req, ks)
	for _, ph := range hashes {
		mac := key.mac()
		writeStringToSign(mac, req, canonicalRequest(r, req, ph))
		var sum [sha256.Size]byte
		ok := hmac.Equal(mac.Sum(sum[:0]), req.signature)
		key.done(mac)
		if ok {
			return ks.Principal, req.service, nil
		}
	}
	return Principal{}, "", sigV4Err(SigV4Mismatch, "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.")
}

// CheckSigV4Shape is what a node with security off does with a request
// to the AWS edge: nil when r is unsigned or carries a well-formed
// signature (any key, any secret: none is checked), an
// IncompleteSignature *SigV4Error when it carries a malformed one.
func CheckSigV4Shape(r *http.Request) error {
	if _, err := parseSigV4(r); err != nil {
		return err
	}
	return nil
}

func checkTime(req *sigV4Request, now time.Time) error {
	if req.presigned {
		if req.at.After(now.Add(maxSkew)) {
			return sigV4Err(SigV4Expired, "Request is not yet valid: X-Amz-Date %s is more than 15 minutes ahead of %s", req.amzDate, now.UTC().Format(amzDateLayout))
		}
		if now.After(req.at.Add(req.expires)) {
			return sigV4Err(SigV4Expired, "Request has expired: X-Amz-Date %s plus X-Amz-Expires %d s is before %s", req.amzDate, int64(req.expires/time.Second), now.UTC().Format(amzDateLayout))
		}
		return nil
	}
	if d := now.Sub(req.at); d > maxSkew || d < -maxSkew {
		return sigV4Err(SigV4Expired, "Signature expired: %s is more than 15 minutes from this node's time %s", req.amzDate, now.UTC().Format(amzDateLayout))
	}
	return nil
}

// signingKey is HMAC("AWS4"+secret, date) → region → service →
// "aws4_request", from the cache while the key's user is unchanged.
func (v *SigV4) signingKey(req *sigV4Request, ks KeySecret) *signingKey {
	sc := signingScope{req.keyID, req.date, req.region, req.service}
	v.mu.Lock()
	c, ok := v.signing[sc]
	v.mu.Unlock()
	if ok && c.version == ks.Version {
		return c
	}
	c = &signingKey{version: ks.Version, key: deriveSigningKey(ks.Secret, req.date, req.region, req.service)}
	v.mu.Lock()
	if len(v.signing) >= maxSigningKeys {
		clear(v.signing)
	}
	v.signing[sc] = c
	v.mu.Unlock()
	return c
}

func deriveSigningKey(secret, date, region, service string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), date)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, service)
	return hmacSHA256(k, sigV4Terminal)
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

type stringWriter interface{ Write([]byte) (int, error) }

// writeStringToSign writes "AWS4-HMAC-SHA256\n" amzdate "\n" scope "\n"
// hex(SHA-256(canonical request)).
func writeStringToSign(w stringWriter, req *sigV4Request, canonical []byte) {
	sum := sha256.Sum256(canonical)
	var buf [256]byte
	b := append(buf[:0], sigV4Algorithm+"\n"...)
	b = append(b, req.amzDate...)
	b = append(b, '\n')
	b = append(b, req.date...)
	b = append(b, '/')
	b = append(b, req.region...)
	b = append(b, '/')
	b = append(b, req.service...)
	b = append(b, "/"+sigV4Terminal+"\n"...)
	b = hex.AppendEncode(b, sum[:])
	w.Write(b)
}

// canonicalRequest is method, canonical URI, canonical query, canonical
// headers, signed headers and payload hash, one a line.
func canonicalRequest(r *http.Request, req *sigV4Request, payloadHash string) []byte {
	b := make([]byte, 0, 512)
	b = append(b, r.Method...)
	b = append(b, '\n')
	b = appendCanonicalURI(b, r.URL)
	b = append(b, '\n')
	b = appendCanonicalQuery(b, r.URL.RawQuery, req.presigned)
	b = append(b, '\n')
	for _, name := range req.signedHeaders {
		b = append(b, name...)
		b = append(b, ':')
		if name == "host" {
			b = appendHeaderValue(b, r.Host) // Go moves Host out of r.Header
		} else {
			for i, val := range r.Header.Values(name) {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendHeaderValue(b, val)
			}
		}
		b = append(b, '\n')
	}
	b = append(b, '\n')
	b = append(b, req.signedHeadersRaw...)
	b = append(b, '\n')
	return append(b, payloadHash...)
}

// appendCanonicalURI appends the path as non-S3 services sign it: the
// path as sent (escaped once), dot segments and repeated slashes removed,
// each segment URI-encoded once more.
func appendCanonicalURI(b []byte, u *url.URL) []byte {
	p := u.EscapedPath()
	if p == "" || p == "/" {
		return append(b, '/')
	}
	clean := path.Clean("/" + p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	for i, seg := range strings.Split(clean, "/") {
		if i > 0 {
			b = append(b, '/')
		}
		b = appendURIEncode(b, seg)
	}
	return b
}

// appendCanonicalQuery appends the query's pairs, each name and value
// decoded then URI-encoded, sorted by name then value; presigned leaves
// X-Amz-Signature out.
func appendCanonicalQuery(b []byte, raw string, presigned bool) []byte {
	if raw == "" {
		return b
	}
	type pair struct{ k, v string }
	pairs := make([]pair, 0, 8)
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		k, val, _ := strings.Cut(part, "=")
		k, val = queryUnescape(k), queryUnescape(val)
		if presigned && k == "X-Amz-Signature" {
			continue
		}
		pairs = append(pairs, pair{string(appendURIEncode(nil, k)), string(appendURIEncode(nil, val))})
	}
	slices.SortFunc(pairs, func(x, y pair) int {
		if c := strings.Compare(x.k, y.k); c != 0 {
			return c
		}
		return strings.Compare(x.v, y.v)
	})
	for i, p := range pairs {
		if i > 0 {
			b = append(b, '&')
		}
		b = append(b, p.k...)
		b = append(b, '=')
		b = append(b, p.v...)
	}
	return b
}

func queryUnescape(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s // malformed escapes sign as sent
}

// appendURIEncode encodes every byte but AWS's unreserved A-Za-z0-9-_.~.
func appendURIEncode(b []byte, s string) []byte {
	const hexdigits = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b = append(b, c)
		} else {
			b = append(b, '%', hexdigits[c>>4], hexdigits[c&15])
		}
	}
	return b
}

// appendHeaderValue appends v trimmed, inner runs of spaces made one.
func appendHeaderValue(b []byte, v string) []byte {
	v = strings.Trim(v, " \t")
	space := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == ' ' || c == '\t' {
			space = true
			continue
		}
		if space {
			b = append(b, ' ')
			space = false
		}
		b = append(b, c)
	}
	return b
}

// parseSigV4 reads r's signature: nil, nil when it carries none (no
// Authorization header of AWS4 form, no X-Amz-* signing parameter in the
// query); an IncompleteSignature *SigV4Error when it is malformed.
func parseSigV4(r *http.Request) (*sigV4Request, error) {
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "AWS4-") {
		return parseAuthorization(r, h)
	}
	if q := r.URL.RawQuery; strings.Contains(q, "X-Amz-") {
		query := r.URL.Query()
		if query.Has("X-Amz-Algorithm") || query.Has("X-Amz-Credential") || query.Has("X-Amz-Signature") {
			return parsePresigned(r, query)
		}
	}
	return nil, nil
}

func incomplete(format string, args ...any) error { return sigV4Err(SigV4Incomplete, format, args...) }

func parseAuthorization(r *http.Request, h string) (*sigV4Request, error) {
	alg, rest, _ := strings.Cut(h, " ")
	if alg != sigV4Algorithm {
		return nil, incomplete("Unsupported signing algorithm %q: want %s", alg, sigV4Algorithm)
	}
	var cred, signed, sig string
	for part := range strings.SplitSeq(rest, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		var dst *string
		switch {
		case !ok:
			return nil, incomplete("Authorization header: %q is not a key=value pair", strings.TrimSpace(part))
		case k == "Credential":
			dst = &cred
		case k == "SignedHeaders":
			dst = &signed
		case k == "Signature":
			dst = &sig
		default:
			return nil, incomplete("Authorization header: unknown parameter %q", k)
		}
		if *dst != "" {
			return nil, incomplete("Authorization header: %s given twice", k)
		}
		*dst = val
	}
	for _, p := range []struct{ name, v string }{{"Credential", cred}, {"SignedHeaders", signed}, {"Signature", sig}} {
		if p.v == "" {
			return nil, incomplete("Authorization header requires '%s' parameter", p.name)
		}
	}
	date := r.Header.Get("X-Amz-Date")
	if date == "" {
		return nil, incomplete("Authorization header requires existence of an 'X-Amz-Date' header (the Date header is not supported)")
	}
	req := &sigV4Request{contentSHA256: r.Header.Get("X-Amz-Content-Sha256")}
	return req, req.fill(cred, signed, sig, date)
}

func parsePresigned(r *http.Request, q url.Values) (*sigV4Request, error) {
	for _, name := range []string{"X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders", "X-Amz-Signature"} {
		if q.Get(name) == "" {
			return nil, incomplete("A presigned URL requires the '%s' query parameter", name)
		}
	}
	if alg := q.Get("X-Amz-Algorithm"); alg != sigV4Algorithm {
		return nil, incomplete("Unsupported signing algorithm %q: want %s", alg, sigV4Algorithm)
	}
	exp, err := strconv.ParseInt(q.Get("X-Amz-Expires"), 10, 64)
	if err != nil || exp < 1 || exp > maxPresignExpires {
		return nil, incomplete("X-Amz-Expires %q: want 1..%d seconds", q.Get("X-Amz-Expires"), maxPresignExpires)
	}
	req := &sigV4Request{presigned: true, expires: time.Duration(exp) * time.Second, contentSHA256: r.Header.Get("X-Amz-Content-Sha256")}
	if h := q.Get("X-Amz-Content-Sha256"); h != "" {
		req.contentSHA256 = h
	}
	return req, req.fill(q.Get("X-Amz-Credential"), q.Get("X-Amz-SignedHeaders"), q.Get("X-Amz-Signature"), q.Get("X-Amz-Date"))
}

// fill checks and sets the parts both forms share.
func (req *sigV4Request) fill(cred, signed, sig, amzDate string) error {
	// strings.Split's five parts, without its slice.
	var parts [5]string
	n := 0
	for rest, more := cred, true; more; n++ {
		var p string
		p, rest, more = strings.Cut(rest, "/")
		if n < len(parts) {
			parts[n] = p
		}
	}
	if n != 5 || parts[0] == "" || parts[2] == "" || parts[3] == "" {
		return incomplete("Credential %q: want ACCESS_KEY_ID/YYYYMMDD/REGION/SERVICE/aws4_request", cred)
	}
	if !validScopeDate(parts[1]) {
		return incomplete("Credential %q: the scope's date %q is not YYYYMMDD", cred, parts[1])
	}
	if parts[4] != sigV4Terminal {
		return incomplete("Credential %q: the scope must end in %s", cred, sigV4Terminal)
	}
	req.keyID, req.date, req.region, req.service = parts[0], parts[1], parts[2], parts[3]

	at, ok := parseAmzDate(amzDate)
	if !ok {
		return incomplete("X-Amz-Date %q: want YYYYMMDDTHHMMSSZ", amzDate)
	}
	req.amzDate, req.at = amzDate, at

	req.signedHeadersRaw = signed
	req.signedHeaders = strings.Split(signed, ";")
	for _, name := range req.signedHeaders {
		if name == "" || strings.ToLower(name) != name {
			return incomplete("SignedHeaders %q: want lowercase header names separated by ';'", signed)
		}
	}
	if !slices.Contains(req.signedHeaders, "host") {
		return incomplete("SignedHeaders %q must include host", signed)
	}

	if len(sig) != 2*sha256.Size {
		return incomplete("Signature: want %d hexadecimal digits", 2*sha256.Size)
	}
	var err error
	if req.signature, err = hex.DecodeString(sig); err != nil {
		return incomplete("Signature: want %d hexadecimal digits", 2*sha256.Size)
	}
	return nil
}
