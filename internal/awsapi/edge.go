package awsapi

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/narad-io/narad/internal/auth"
	"github.com/narad-io/narad/internal/httpapi"
	"github.com/narad-io/narad/internal/metrics"
	"github.com/prometheus/client_golang/prometheus"
)

const (
	serviceSQS = "sqs"
	serviceSNS = "sns"

	sqsVersion = "2012-11-05"
	snsVersion = "2010-03-31"

	jsonContentType = "application/x-amz-json-1.0"

	// maxBody bounds a request's body: SendMessageBatch's ten 1 MiB
	// messages, form-encoded, fit.
	maxBody = 32 << 20
)

// Verifier authenticates an AWS-signed request (auth.SigV4 with security
// on). authed is false when the node runs without security: the request
// then acts as nobody in particular, as /v1 requests do there. A refusal
// is an error of SignatureError's.
type Verifier func(r *http.Request, body []byte) (p auth.Principal, authed bool, err error)

// Options configure the edge.
type Options struct {
	// API is the node's /v1 API, which serves the edge's in-process
	// requests (httpapi.Server).
	API http.Handler
	// Next serves every request that is not SQS or SNS (the API and the
	// console).
	Next http.Handler
	// Verify authenticates a signed request.
	Verify Verifier
	// AccountID (12 digits) and Region name the node in queue URLs and
	// ARNs (aws.account_id, aws.region).
	AccountID, Region string
	Log               *slog.Logger
	// Metrics counts the edge's requests (nil: none).
	Metrics *metrics.Metrics
	// Now is the clock of SentTimestamp and the like (time.Now when nil).
	Now func() time.Time
}

// Edge is the SQS and SNS protocol edge: an http.Handler in front of the
// node's API and console.
type Edge struct {
	api, next http.Handler
	verify    Verifier
	account   string
	region    string
	log       *slog.Logger
	m         *metrics.Metrics
	now       func() time.Time

	mu     sync.Mutex
	purged map[string]time.Time // queue → last PurgeQueue here (sqs_queues.go)
	info   infoCache
	series sync.Map   // seriesKey → series (observe)
	tasks  *moveTasks // StartMessageMoveTask's tasks on this node
}

// New builds the edge.
func New(o Options) *Edge {
	e := &Edge{api: o.API, next: o.Next, verify: o.Verify, account: o.AccountID, region: o.Region,
		log: o.Log, m: o.Metrics, now: o.Now, purged: map[string]time.Time{}, tasks: newMoveTasks()}
	if e.now == nil {
		e.now = time.Now
	}
	if e.log == nil {
		e.log = slog.Default()
	}
	if e.account == "" {
		e.account = "000000000000"
	}
	if e.region == "" {
		e.region = "us-east-1"
	}
	return e
}

// call is one AWS request being served.
type call struct {
	ctx       context.Context
	service   string
	action    string
	json      bool // the JSON protocol; else Query
	p         params
	host      string
	scheme    string
	remote    string
	principal auth.Principal
	authed    bool
	requestID string
	path      string // the request's path: a queue URL's, or "/"
	start     time.Time
	code      string // "ok", or the error code answered
}

// ServeHTTP answers SQS and SNS requests and hands every other request to
// Next. A request is AWS's by its shape (docs/aws.md, "Endpoint"): a POST
// with X-Amz-Target: AmazonSQS.<Action> (the JSON protocol), or a request
// to "/" or to a queue URL's path with an Action parameter in its query
// or a form-encoded body (the Query protocol). /v1 and the console have
// neither shape.
func (e *Edge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target := r.Header.Get("X-Amz-Target")
	isJSON := strings.HasPrefix(target, "AmazonSQS.")
	if !isJSON && !e.queryShaped(r) {
		e.next.ServeHTTP(w, r)
		return
	}
	c := &call{service: serviceSQS, json: isJSON, host: r.Host, scheme: "http", remote: r.RemoteAddr,
		requestID: newRequestID(), path: r.URL.Path, start: time.Now(), code: "ok"}
	defer e.observe(c)
	if r.TLS != nil {
		c.scheme = "https"
	}
	w.Header().Set("x-amzn-RequestId", c.requestID)
	body, err := readBody(w, r)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			e.fail(w, c, errInvalidParameter.f("The request body is over %d bytes.", maxBody))
			return
		}
		e.fail(w, c, errMalformedBody.f("Reading the request body: %v", err))
		return
	}
	// The signature is checked before the body is parsed: a request
	// that does not authenticate is not read further.
	if e.verify != nil {
		p, authed, err := e.verify(r, body)
		if err != nil {
			e.fail(w, c, signatureRefusal(err))
			return
		}
		c.principal, c.authed = p, authed
	}
	c.ctx = r.Context()
	if c.authed {
		c.ctx = httpapi.AsUser(c.ctx, c.principal)
	}
	if isJSON {
		c.action = strings.TrimPrefix(target, "AmazonSQS.")
		c.p, err = decodeJSON(body)
	} else {
		c.p, err = e.readQuery(c, r, body)
	}
	if err != nil {
		e.fail(w, c, err)
		return
	}
	out, err := e.dispatch(c)
	if err != nil {
		e.fail(w, c, err)
		return
	}
	e.answer(w, c, out)
}

// readQuery reads a Query request's parameters — its URL query and its
// form-encoded body together — and its action and service.
func (e *Edge) readQuery(c *call, r *http.Request, body []byte) (params, error) {
	form, err := queryForm(r, body)
	if err != nil {
		return nil, err
	}
	c.action = form.Get("Action")
	c.service = serviceOf(form.Get("Version"), c.action)
	if c.action == "" {
		return nil, errMissingParameter.f("The request must contain the parameter Action.")
	}
	return fromQuery(form)
}

// queryShaped reports a request that is a Query protocol one: to "/"
// or a queue URL's path, with Action in its query or a form body.
func (e *Edge) queryShaped(r *http.Request) bool {
	if r.URL.Path != "/" && !queuePath(r.URL.Path) {
		return false
	}
	switch r.Method {
	case http.MethodGet:
		return r.URL.Query().Has("Action")
	case http.MethodPost:
		if r.URL.Query().Has("Action") {
			return true
		}
		ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		return ct == "application/x-www-form-urlencoded"
	}
	return false
}

// queuePath reports a queue URL's path: /<account>/<queue>.
func queuePath(p string) bool {
	acct, name, ok := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	return ok && acct != "" && allDigits(acct) && name != "" && !strings.Contains(name, "/")
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// queryForm is a Query request's parameters: its URL query and its
// form-encoded body together.
func queryForm(r *http.Request, body []byte) (url.Values, error) {
	form, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, errMalformedBody.f("The query string is malformed: %v", err)
	}
	if r.Method == http.MethodPost && len(body) > 0 {
		b, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, errMalformedBody.f("The form-encoded body is malformed: %v", err)
		}
		for k, vs := range b {
			form[k] = append(form[k], vs...)
		}
	}
	return form, nil
}

// serviceOf tells SNS from SQS: by the API version, else by the action
// (no SNS action name is also an SQS one).
func serviceOf(version, action string) string {
	switch version {
	case snsVersion:
		return serviceSNS
	case sqsVersion:
		return serviceSQS
	}
	if _, ok := snsActions[action]; ok {
		return serviceSNS
	}
	return serviceSQS
}

func (e *Edge) dispatch(c *call) (map[string]any, error) {
	table := sqsActions
	if c.service == serviceSNS {
		table = snsActions
	}
	act, ok := table[c.action]
	if !ok {
		if c.json {
			return nil, errUnknownOperation.f("The operation %s is not known to AmazonSQS.", c.action)
		}
		return nil, errInvalidAction.f("The action %s is not valid for this endpoint.", c.action)
	}
	if c.service == serviceSQS && !c.p.has("QueueUrl") && queuePath(c.path) {
		// The Query protocol may address the queue by the request's URL.
		c.p["QueueUrl"] = c.scheme + "://" + c.host + c.path
	}
	return act(e, c)
}

// signatureRefusal is the verifier's refusal as an AWS error: one the
// verifier shaped (SignatureError); any other is the node failing to
// read a key, answered as its own fault.
func signatureRefusal(err error) *Error {
	var ae *Error
	if errors.As(err, &ae) {
		return ae
	}
	return errInternal.f("checking the signature: %v", err)
}

// SignatureError is a refused signature as the edge answers it: code is
// AWS's (SignatureDoesNotMatch, InvalidClientTokenId, ...).
func SignatureError(code string, status int, message string) error {
	return &Error{Code: code, Status: status, Message: message}
}

// answer writes a successful answer.
func (e *Edge) answer(w http.ResponseWriter, c *call, out map[string]any) {
	if c.json {
		w.Header().Set("Content-Type", jsonContentType)
		if out == nil {
			out = map[string]any{}
		}
		buf := answerBuffers.Get().(*[]byte)
		b := appendValue((*buf)[:0], out)
		// With its length known the answer goes out in one write,
		// not in chunks.
		w.Header()["Content-Length"] = []string{strconv.Itoa(len(b))}
		w.WriteHeader(http.StatusOK)
		w.Write(b)
		if cap(b) <= maxPooledAnswer {
			*buf = b
			answerBuffers.Put(buf)
		}
		return
	}
	var b strings.Builder
	writeXML(&b, c.service, c.action, c.requestID, out)
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, b.String())
}

// answerBuffers hold JSON answers while they are written: a receive of
// ten messages is some 5 KiB, which a fresh buffer reached by growing
// (copying) four times. Write does not keep the slice, so the buffer
// goes back once written; one over maxPooledAnswer is left to the GC.
var answerBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

const maxPooledAnswer = 64 << 10

// readBody reads a request's body whole, at most maxBody bytes. A body
// of declared length is read into one buffer of that size: io.ReadAll's
// growing copies were 4% of a SendMessageBatch's CPU.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rd := http.MaxBytesReader(w, r.Body, maxBody)
	if n := r.ContentLength; n > 0 && n <= maxBody {
		b := make([]byte, n)
		if _, err := io.ReadFull(rd, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	return io.ReadAll(rd)
}

// fail writes a refusal in the protocol's shape.
func (e *Edge) fail(w http.ResponseWriter, c *call, err error) {
	var ae *Error
	if !errors.As(err, &ae) {
		e.log.Warn("aws edge: unexpected error", "action", c.action, "error", err)
		ae = errInternal.f("%v", err)
	}
	c.code = ae.Code
	if c.json {
		w.Header().Set("Content-Type", jsonContentType)
		w.Header().Set("x-amzn-query-error", ae.queryCode()+";"+ae.faultType())
		b, _ := json.Marshal(map[string]string{"__type": "com.amazonaws.sqs#" + ae.Code, "message": ae.Message})
		w.WriteHeader(ae.Status)
		w.Write(b)
		return
	}
	var b strings.Builder
	writeXMLError(&b, c.service, c.requestID, ae)
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(ae.Status)
	io.WriteString(w, b.String())
}

// observe counts a request in the edge's metrics: its action only when
// the service has it, so a client cannot grow the label's values.
func (e *Edge) observe(c *call) {
	if e.m == nil {
		return
	}
	action := "unknown"
	table := sqsActions
	if c.service == serviceSNS {
		table = snsActions
	}
	if _, ok := table[c.action]; ok {
		action = c.action
	}
	k := seriesKey{c.service, action, c.code}
	se, ok := e.series.Load(k)
	if !ok {
		// Looked up by label values once per series, not per request.
		se, _ = e.series.LoadOrStore(k, series{
			requests: e.m.AWSRequests.WithLabelValues(c.service, action, c.code),
			duration: e.m.AWSDuration.WithLabelValues(c.service, action),
		})
	}
	s := se.(series)
	s.requests.Inc()
	s.duration.Observe(time.Since(c.start).Seconds())
}

// seriesKey names a request's metric series: service, action, code. The
// codes are the edge's own, so the keys are bounded.
type seriesKey struct{ service, action, code string }

type series struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// newRequestID is a request's x-amzn-RequestId, shaped like AWS's. It
// names a request in logs and is no secret: math/rand's generator, not
// crypto/rand's system call.
func newRequestID() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
