package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/clock"
)

// The key and secret of AWS's published examples (the SigV4 test suite,
// and the IAM ListUsers example of the signing documentation).
const (
	exampleKeyID  = "AKIDEXAMPLE"
	exampleSecret = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"
)

var exampleTime = time.Date(2015, 8, 30, 12, 36, 0, 0, time.UTC)

type fakeKeys map[string]KeySecret

func (f fakeKeys) AccessKeySecret(id string) (KeySecret, bool, error) {
	s, ok := f[id]
	return s, ok, nil
}

// exampleVerifier verifies with the example key, at the examples' time;
// it accepts the examples' services besides sqs and sns.
func exampleVerifier() (*SigV4, *clock.Fake) {
	clk := clock.NewFake(exampleTime)
	v := NewSigV4(fakeKeys{exampleKeyID: {Principal: Principal{Name: "alice", ID: 7}, Secret: exampleSecret, Version: 1}}, "us-east-1", clk)
	v.services = append(v.services, "service", "iam")
	return v, clk
}

// AWS's published signatures verify byte for byte.
func TestSigV4PublishedVectors(t *testing.T) {
	for _, c := range []struct {
		name, method, url, body string
		headers                 map[string]string
		auth                    string
	}{
		{
			name: "get-vanilla (SigV4 test suite)", method: "GET", url: "http://example.amazonaws.com/",
			auth: "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
		},
		{
			name: "post-x-www-form-urlencoded (SigV4 test suite)", method: "POST", url: "http://example.amazonaws.com/", body: "Param1=value1",
			headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
			auth:    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a",
		},
		{
			name: "IAM ListUsers (signing documentation)", method: "GET", url: "https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08",
			headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"},
			auth:    "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7",
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, _ := exampleVerifier()
			r := httptest.NewRequest(c.method, c.url, nil)
			r.Header.Set("X-Amz-Date", "20150830T123600Z")
			r.Header.Set("Authorization", c.auth)
			for k, val := range c.headers {
				r.Header.Set(k, val)
			}
			p, service, err := v.Verify(r, []byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			if p.Name != "alice" || p.ID != 7 || !strings.Contains(c.auth, "/"+service+"/") {
				t.Fatalf("verified as %+v for %q", p, service)
			}
			// The published signature with one digit changed is refused.
			r.Header.Set("Authorization", c.auth[:len(c.auth)-1]+"0")
			if _, _, err := v.Verify(r, []byte(c.body)); sigCode(err) != SigV4Mismatch {
				t.Fatalf("a changed signature: %v", err)
			}
		})
	}
}

// signV4 signs r in the header form, the way AWS's documentation
// describes it, written apart from the verifier (url.Values, sort.Strings,
// url.QueryEscape): TestSignerReproducesPublishedVectors holds it to AWS's
// answers, so the other tests can build requests with it. Paths are
// used as they are: the tests keep to plain ones.
func signV4(r *http.Request, body []byte, id, secret, region, service string, at time.Time) {
	amzDate := at.UTC().Format("20060102T150405Z")
	r.Header.Set("X-Amz-Date", amzDate)
	scope := amzDate[:8] + "/" + region + "/" + service + "/aws4_request"
	signed, canonical := testCanonical(r, body, "")
	sig := testSignature(secret, amzDate, scope, canonical)
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+id+"/"+scope+", SignedHeaders="+signed+", Signature="+sig)
}

// presignV4 presigns r's URL for expires seconds, signing host only and
// payloadHash (the body's or UNSIGNED-PAYLOAD).
func presignV4(r *http.Request, id, secret, region, service string, at time.Time, expires int, payloadHash string) {
	amzDate := at.UTC().Format("20060102T150405Z")
	scope := amzDate[:8] + "/" + region + "/" + service + "/aws4_request"
	q := r.URL.Query()
	q.Set("X-Amz-Algorithm", "AWS4-HMAC-SHA256")
	q.Set("X-Amz-Credential", id+"/"+scope)
	q.Set("X-Amz-Date", amzDate)
	q.Set("X-Amz-Expires", strconv.Itoa(expires))
	q.Set("X-Amz-SignedHeaders", "host")
	r.URL.RawQuery = q.Encode()
	canonical := strings.Join([]string{r.Method, r.URL.Path, testQuery(q), "host:" + r.Host + "\n", "host", payloadHash}, "\n")
	q.Set("X-Amz-Signature", testSignature(secret, amzDate, scope, canonical))
	r.URL.RawQuery = q.Encode()
}

func testCanonical(r *http.Request, body []byte, _ string) (signed, canonical string) {
	names := []string{"host"}
	for k := range r.Header {
		if k != "Authorization" {
			names = append(names, strings.ToLower(k))
		}
	}
	sort.Strings(names)
	var hs strings.Builder
	for _, n := range names {
		val := r.Host
		if n != "host" {
			val = strings.Join(strings.Fields(strings.Join(r.Header.Values(n), ",")), " ")
		}
		hs.WriteString(n + ":" + val + "\n")
	}
	sum := sha256.Sum256(body)
	signed = strings.Join(names, ";")
	return signed, strings.Join([]string{r.Method, r.URL.Path, testQuery(r.URL.Query()), hs.String(), signed, hex.EncodeToString(sum[:])}, "\n")
}

func testQuery(q url.Values) string {
	var pairs []string
	for k, vs := range q {
		for _, v := range vs {
			pairs = append(pairs, awsEscape(k)+"="+awsEscape(v))
		}
	}
	sort.Strings(pairs)
	return strings.Join(pairs, "&")
}

func awsEscape(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }

func testSignature(secret, amzDate, scope, canonical string) string {
	mac := func(k []byte, s string) []byte {
		h := hmac.New(sha256.New, k)
		h.Write([]byte(s))
		return h.Sum(nil)
	}
	parts := strings.Split(scope, "/")
	k := []byte("AWS4" + secret)
	for _, p := range parts {
		k = mac(k, p)
	}
	sum := sha256.Sum256([]byte(canonical))
	return hex.EncodeToString(mac(k, "AWS4-HMAC-SHA256\n"+amzDate+"\n"+scope+"\n"+hex.EncodeToString(sum[:])))
}

func TestSignerReproducesPublishedVectors(t *testing.T) {
	r := httptest.NewRequest("GET", "http://example.amazonaws.com/", nil)
	signV4(r, nil, exampleKeyID, exampleSecret, "us-east-1", "service", exampleTime)
	if !strings.HasSuffix(r.Header.Get("Authorization"), "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31") {
		t.Fatalf("get-vanilla: %s", r.Header.Get("Authorization"))
	}
	r = httptest.NewRequest("GET", "https://iam.amazonaws.com/?Action=ListUsers&Version=2010-05-08", nil)
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	signV4(r, nil, exampleKeyID, exampleSecret, "us-east-1", "iam", exampleTime)
	if !strings.HasSuffix(r.Header.Get("Authorization"), "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7") {
		t.Fatalf("IAM ListUsers: %s", r.Header.Get("Authorization"))
	}
}

func sigCode(err error) string {
	var se *SigV4Error
	if errors.As(err, &se) {
		return se.Code
	}
	if err != nil {
		return "other: " + err.Error()
	}
	return ""
}

func sigStatus(err error) int {
	var se *SigV4Error
	if errors.As(err, &se) {
		return se.Status
	}
	return 0
}

const sqsBody = `{"QueueUrl":"http://localhost:8080/000000000000/orders","MessageBody":"hello"}`

func sqsRequest(body string) *http.Request {
	r := httptest.NewRequest("POST", "http://localhost:8080/", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/x-amz-json-1.0")
	r.Header.Set("X-Amz-Target", "AmazonSQS.SendMessage")
	return r
}

func TestSigV4Refusals(t *testing.T) {
	now := exampleTime
	for _, c := range []struct {
		name   string
		build  func() (*http.Request, []byte)
		code   string
		status int
	}{
		{"good", func() (*http.Request, []byte) {
			r := sqsRequest(sqsBody)
			signV4(r, []byte(sqsBody), exampleKeyID, exampleSecret, "us-east-1", "sqs", now)
			return r, []byte(sqsBody)
		}, "", 0},
		{"good with the body's hash sent", func() (*http.Request, []byte) {
			r := sqsRequest(sqsBody)
			sum := sha256.Sum256([]byte(sqsBody))
			r.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
			signV4(r, []byte(sqsBody), exampleKeyID, exampleSecret, "us-east-1", "sqs", now)
			return r, []byte(sqsBody)
		}, "", 0},
		{"14 minutes early", func() (*http.Request, []byte) {
			r := sqsRequest(sqsBody)
			signV4(r, []byte(sqsBody), exampleKeyID, exampleSecret, "us-east-1", "sns", now.Add(-14*time.Minute))
			return r, []byte(sqsBody)
		}, "", 0},
		{"wrong secret", func() (*http.Request, []byte) {
			r := sqsRequest(sqsBody)
			signV4(r, []byte(sqsBody), exampleKeyID, "not"+exampleSecret[3:], "us-east-1", "sqs", now)
			return r, []byte(sqsBody)
		}, SigV4Mismatch, 403},
		{"unknown key", func() (*http.Request, []byte) {
			r := sqsRequest(sqsBody)
			signV4(r, []byte(sqsBody), "NKIAAAAAAAAAAAAAAAAA", exampleSecret, "us-east-1", "sqs", now)
			return r, []byte(sqsBody)
		}, SigV4InvalidClientToken, 403},
		{"16 minutes old", func() (*http.Request, []byte) {
			r := sqsRequest(sqsBody)
			signV4(r, []byte(sqsBody), exampleKeyID, exampleSecret, "us-east-1", "sqs", now.Add(-16*time.Minute))
			return r, []byte(sqsBody)
		}, SigV4Expired, 400},
		{"16 minutes ahead", func() (*http.Request, []byte) {
			r := sqsRequest(sqsBody)
			signV4(r, []byte(sqsBody), exampleKeyID, exampleSecret, "us-east-1", "sqs", now.Add(16*time.Minute))
			return r, []byte(sqsBody)
		}, SigV4Expired, 400},
		{"body changed after signing", func() (*http.Request, []byte) {
			r := sqsRequest(sqsBody)
			signV4(r, []byte(sqsBody), exampleKeyID, exampleSecret, "us-east-1", "sqs", now)
			return r, []byte(strings.Replace(sqsBody, "hello", "HELLO", 1))
		}, SigV4Mismatch, 403},
		{"body changed, its old hash sent", func() (*http.Request, []byte) {
			r := sqsRequest(sqsBody)
			sum := sha256.Sum256([]byte(sqsBody))
			r.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
			signV4(r, []byte(sqsBody), exampleKeyID, exampleSecret, "us-east-1", "sqs", now)
			return r, []byte(strings.Replace(sqsBody, "hello", "HELLO", 1))
		}, SigV4Mismatch, 403},
		{"unsigned payload in the header form", func() (*http.Request, []byte) {
			r := sqsRequest(sqsBody)
			r.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
			signV4(r, []byte(sqsBody), exampleKeyID, exampleSecret, "us-east-1", "sqs", now)
			return r, []byte(sqsBody)
		}, SigV4Mismatch, 403},
		{"a signed header changed", func() (*http.Request, []byte) {
			r := sqsRequest(sqsBody)
			signV4(r, []byte(sqsBody), exampleKeyID, exampleSecret, "us-east-1", "sqs", now)
			r.Header.Set("X-Amz-Target", "AmazonSQS.DeleteQueue")
			return r, []byte(sqsBody)
		}, SigV4Mismatch, 403},
		{"another region", func() (*http.Request, []byte) {
			r := sqsRequest(sqsBody)
			signV4(r, []byte(sqsBody), exampleKeyID, exampleSecret, "eu-west-1", "sqs", now)
			return r, []byte(sqsBody)
		}, SigV4Mismatch, 403},
		{"another service", func() (*http.Request, []byte) {
			r := sqsRequest(sqsBody)
			signV4(r, []byte(sqsBody), exampleKeyID, exampleSecret, "us-east-1", "s3", now)
			return r, []byte(sqsBody)
		}, SigV4Mismatch, 403},
		{"scope of another day", func() (*http.Request, []byte) {
			r := sqsRequest(sqsBody)
			signV4(r, []byte(sqsBody), exampleKeyID, exampleSecret, "us-east-1", "sqs", now)
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "/20150830/", "/20150829/", 1))
			return r, []byte(sqsBody)
		}, SigV4Mismatch, 403},
		{"not signed", func() (*http.Request, []byte) {
			return sqsRequest(sqsBody), []byte(sqsBody)
		}, SigV4MissingToken, 403},
		{"Basic credentials", func() (*http.Request, []byte) {
			r := sqsRequest(sqsBody)
			r.SetBasicAuth("alice", "alice-password")
			return r, []byte(sqsBody)
		}, SigV4MissingToken, 403},
		{"malformed", func() (*http.Request, []byte) {
			r := sqsRequest(sqsBody)
			signV4(r, []byte(sqsBody), exampleKeyID, exampleSecret, "us-east-1", "sqs", now)
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "SignedHeaders=", "Headers=", 1))
			return r, []byte(sqsBody)
		}, SigV4Incomplete, 400},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, _ := exampleVerifier()
			r, body := c.build()
			p, _, err := v.Verify(r, body)
			if sigCode(err) != c.code || sigStatus(err) != c.status {
				t.Fatalf("Verify: %v (status %d), want %q %d", err, sigStatus(err), c.code, c.status)
			}
			if c.code == "" && p.Name != "alice" {
				t.Fatalf("verified as %+v", p)
			}
		})
	}
}

func TestSigV4Presigned(t *testing.T) {
	v, clk := exampleVerifier()
	get := func(payloadHash string) *http.Request {
		r := httptest.NewRequest("GET", "http://localhost:8080/000000000000/orders?Action=ReceiveMessage&MaxNumberOfMessages=10", nil)
		presignV4(r, exampleKeyID, exampleSecret, "us-east-1", "sqs", exampleTime, 300, payloadHash)
		return r
	}
	empty := sha256.Sum256(nil)
	for _, ph := range []string{hex.EncodeToString(empty[:]), "UNSIGNED-PAYLOAD"} {
		if p, service, err := v.Verify(get(ph), nil); err != nil || p.Name != "alice" || service != "sqs" {
			t.Fatalf("presigned with payload %s: %+v %q %v", ph, p, service, err)
		}
	}
	r := get("UNSIGNED-PAYLOAD")
	r.URL.RawQuery = strings.Replace(r.URL.RawQuery, "MaxNumberOfMessages=10", "MaxNumberOfMessages=1", 1)
	if _, _, err := v.Verify(r, nil); sigCode(err) != SigV4Mismatch {
		t.Fatalf("a changed query: %v", err)
	}
	clk.Advance(299 * time.Second)
	if _, _, err := v.Verify(get("UNSIGNED-PAYLOAD"), nil); err != nil {
		t.Fatalf("before it expires: %v", err)
	}
	clk.Advance(2 * time.Second)
	if _, _, err := v.Verify(get("UNSIGNED-PAYLOAD"), nil); sigCode(err) != SigV4Expired || sigStatus(err) != 400 {
		t.Fatalf("past X-Amz-Expires: %v", err)
	}
}

// Malformed signatures are refused with IncompleteSignature by Verify
// and by CheckSigV4Shape; well-formed ones pass the shape check whatever
// their key and secret, and unsigned requests too.
func TestSigV4Shapes(t *testing.T) {
	good := func() *http.Request {
		r := sqsRequest(sqsBody)
		signV4(r, []byte(sqsBody), "ANYKEY", "any secret", "us-east-1", "sqs", exampleTime)
		return r
	}
	replace := func(old, new string) func(*http.Request) {
		return func(r *http.Request) {
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), old, new, 1))
		}
	}
	for _, c := range []struct {
		name   string
		change func(*http.Request)
		bad    bool
	}{
		{"well formed", func(*http.Request) {}, false},
		{"unsigned", func(r *http.Request) { r.Header.Del("Authorization") }, false},
		{"no Credential", replace("Credential=", "Cred="), true},
		{"no Signature", func(r *http.Request) {
			h := r.Header.Get("Authorization")
			r.Header.Set("Authorization", h[:strings.Index(h, ", Signature=")])
		}, true},
		{"another algorithm", replace("AWS4-HMAC-SHA256", "AWS4-HMAC-SHA512"), true},
		{"short scope", replace("/us-east-1/", "/"), true},
		{"scope not ending in aws4_request", replace("aws4_request", "aws4_reqest"), true},
		{"scope date not a date", replace("/20150830/", "/2015083X/"), true},
		{"signature not hex", replace("Signature=", "Signature=zz"), true},
		{"host not signed", replace("SignedHeaders=content-type;host;", "SignedHeaders=content-type;"), true},
		{"no X-Amz-Date", func(r *http.Request) { r.Header.Del("X-Amz-Date") }, true},
		{"bad X-Amz-Date", func(r *http.Request) { r.Header.Set("X-Amz-Date", "2015-08-30T12:36:00Z") }, true},
		{"presigned without X-Amz-Expires", func(r *http.Request) {
			r.Header.Del("Authorization")
			r.URL.RawQuery = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=K%2F20150830%2Fus-east-1%2Fsqs%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-SignedHeaders=host&X-Amz-Signature=" + strings.Repeat("0", 64)
		}, true},
		{"presigned for more than a week", func(r *http.Request) {
			r.Header.Del("Authorization")
			r.URL.RawQuery = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=K%2F20150830%2Fus-east-1%2Fsqs%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-Expires=604801&X-Amz-SignedHeaders=host&X-Amz-Signature=" + strings.Repeat("0", 64)
		}, true},
		{"presigned well formed", func(r *http.Request) {
			r.Header.Del("Authorization")
			r.URL.RawQuery = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=K%2F20150830%2Fus-east-1%2Fsqs%2Faws4_request&X-Amz-Date=20150830T123600Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Signature=" + strings.Repeat("0", 64)
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := good()
			c.change(r)
			err := CheckSigV4Shape(r)
			want := ""
			if c.bad {
				want = SigV4Incomplete
			}
			if sigCode(err) != want {
				t.Fatalf("CheckSigV4Shape: %v, want %q", err, want)
			}
			if c.bad {
				v, _ := exampleVerifier()
				if _, _, err := v.Verify(r, []byte(sqsBody)); sigCode(err) != SigV4Incomplete || sigStatus(err) != 400 {
					t.Fatalf("Verify: %v, want IncompleteSignature 400", err)
				}
			}
		})
	}
}

// countingKeys counts resolutions and lets a test change the secret.
type countingKeys struct {
	fakeKeys
	calls int
}

func (c *countingKeys) AccessKeySecret(id string) (KeySecret, bool, error) {
	c.calls++
	return c.fakeKeys.AccessKeySecret(id)
}

// The derived signing key is cached per key and day, and derived again
// when the key's user record changes (a new version): a request signed
// with a secret the key no longer has is refused.
func TestSigV4SigningKeyCache(t *testing.T) {
	keys := &countingKeys{fakeKeys: fakeKeys{exampleKeyID: {Principal: Principal{Name: "alice"}, Secret: exampleSecret, Version: 1}}}
	v := NewSigV4(keys, "", clock.NewFake(exampleTime))
	signed := func(secret string) *http.Request {
		r := sqsRequest(sqsBody)
		signV4(r, []byte(sqsBody), exampleKeyID, secret, "us-east-1", "sqs", exampleTime)
		return r
	}
	for range 2 {
		if _, _, err := v.Verify(signed(exampleSecret), []byte(sqsBody)); err != nil {
			t.Fatal(err)
		}
	}
	if len(v.signing) != 1 {
		t.Fatalf("%d signing keys cached, want 1", len(v.signing))
	}
	keys.fakeKeys[exampleKeyID] = KeySecret{Principal: Principal{Name: "alice"}, Secret: "another secret", Version: 2}
	if _, _, err := v.Verify(signed(exampleSecret), []byte(sqsBody)); sigCode(err) != SigV4Mismatch {
		t.Fatalf("the old secret after the record changed: %v", err)
	}
	if _, _, err := v.Verify(signed("another secret"), []byte(sqsBody)); err != nil {
		t.Fatalf("the new secret: %v", err)
	}
	if !slices.Equal(v.services, []string{"sqs", "sns"}) || v.region != DefaultRegion {
		t.Fatalf("defaults: %v %q", v.services, v.region)
	}
}

// BenchmarkSigV4Verify is the hot path of every SQS call: a cached
// secret and signing key, one body hash, one canonical-request hash and
// one HMAC.
func BenchmarkSigV4Verify(b *testing.B) {
	v, _ := exampleVerifier()
	r := sqsRequest(sqsBody)
	signV4(r, []byte(sqsBody), exampleKeyID, exampleSecret, "us-east-1", "sqs", exampleTime)
	body := []byte(sqsBody)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := v.Verify(r, body); err != nil {
			b.Fatal(err)
		}
	}
}
